"""The ``expert`` bot's samples of the hidden cards and its playouts of a round.

:func:`deal_hidden` deals the cards a seat cannot see (the other hands, the
stock) at random from those it has not seen, consistent with what it knows;
:meth:`Playout.play` makes one move in such a sample and plays the round out,
every seat with the same quick greedy policy, and scores it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from service.bots.common import Seen, with_card, without
from service.bots.quick_hands import QuickHands
from service.bots.strong import Tracker
from service.engine.moves import Discard, Draw, Move, Source

HORIZON_TURNS_PER_PLAYER = 10
"""A playout stops after this many turns per player; hands are scored as they stand."""


@dataclass(slots=True, frozen=True)
class World:
    """One sample of the hidden cards: every hand (the seat's own as it is), the
    stock and the discard pile (top last), and the seed of the playout's reshuffles."""

    hands: tuple[tuple[int, ...], ...]
    stock: tuple[int, ...]
    pile: tuple[int, ...]
    seed: int


def deal_hidden(
    seen: Seen, tracker: Tracker, hand_sizes: Sequence[int], rng: random.Random
) -> World:
    """A sample of the cards ``seen``'s seat cannot see, drawn with ``rng`` from
    the unseen cards: each opponent keeps the cards it is known to hold (picked
    up from the discard pile and not discarded since) and gets the rest of its
    ``hand_sizes`` at random; the stock is the next ``stock_size`` cards."""
    pool = [c for c, k in sorted(tracker.unseen.items()) for _ in range(k)]
    rng.shuffle(pool)
    hands: list[tuple[int, ...]] = []
    for s, size in enumerate(hand_sizes):
        if s == seen.seat:
            hands.append(seen.hand)
            continue
        known = tracker.picks[s][:size]
        need = size - len(known)
        drawn, pool = pool[:need], pool[need:]
        hands.append(tuple(sorted((*known, *drawn))))
    stock = tuple(pool[: seen.stock_size])
    pile = list(tracker.pile)
    if len(pile) < seen.discard_size:  # no history: the cards under the top are unknown
        pile = pool[seen.stock_size :][: seen.discard_size - len(pile)] + pile
    return World(tuple(hands), stock, tuple(pile), rng.getrandbits(32))


class Stock:
    """A sample's stock, dealt out in advance: its cards go to the seats in turn
    from ``first`` (each seat draws its own next card); a seat whose share is
    used up draws another's, and an empty stock is rebuilt from the discard
    pile as the engine does (shuffled with the sample's seed)."""

    def __init__(self, world: World, n: int, first: int) -> None:
        cards = world.stock[::-1]  # the next card first
        self.queues: list[list[int]] = [list(cards[(s - first) % n :: n])[::-1] for s in range(n)]
        self.seed = world.seed
        self.reshuffles = 0

    def left(self) -> bool:
        return any(self.queues)

    def draw(self, seat: int, pile: list[int]) -> int | None:
        """``seat``'s next card (None when the stock and the pile are empty);
        ``pile`` is turned over into the stock when it must be."""
        queue = self.queues[seat]
        if not queue:
            queue = next((q for q in self.queues if q), queue)
        if not queue:
            if len(pile) < 2:
                return None
            self.reshuffles += 1
            cards = pile[:-1]
            del pile[:-1]
            random.Random(self.seed + self.reshuffles).shuffle(cards)
            n = len(self.queues)
            self.queues = [cards[(s - seat) % n :: n] for s in range(n)]
            queue = self.queues[seat]
        return queue.pop()


class Playout:
    """Plays rounds out from ``seen``'s seat (the hand scores remembered for
    the decision: make one per decision)."""

    def __init__(self, seen: Seen) -> None:
        self.seen = seen
        self.hands = QuickHands(seen.ctx)

    def play(self, world: World, move: Move) -> float:
        """The seat's points minus its opponents' mean, once ``move`` is made in
        ``world`` and the round played out by every seat with :meth:`takes` and
        the discard leaving the least deadwood (going out when it can).

        The stock is dealt out in advance, card by card to the seats in turn
        (:class:`Stock`): a seat that takes the top discard instead leaves the
        others' draws as they were, so two candidate moves played out on one
        sample differ by what the moves change, not by every later card."""
        quick = self.hands
        points = self.seen.ctx.points
        n = self.seen.num_players
        me = self.seen.seat
        hands = list(world.hands)
        stock = Stock(world, n, me)
        pile = list(world.pile)
        went_out: int | None = None
        final_left = 0
        seat = me
        taken: int | None = None
        hand = hands[me]
        turns = 0
        draw = True
        if isinstance(move, Draw):
            if move.source is Source.DISCARD:
                taken = pile.pop()
                hand = with_card(hand, taken)
            else:
                card = stock.draw(me, pile)
                if card is None:
                    return 0.0  # a pile the seat could not rebuild (no history): no opinion
                hand = with_card(hand, card)
            draw = False
        else:
            assert isinstance(move, Discard)
            hands[me] = without(hand, move.card.id)
            pile.append(move.card.id)
            seat = (me + 1) % n
            turns = 1
        horizon = HORIZON_TURNS_PER_PLAYER * n
        while turns < horizon:
            if draw:
                hand = hands[seat]
                top = pile[-1] if pile else None
                taken = None
                if top is not None and (not stock.left() or self.takes(hand, top)):
                    taken = pile.pop()
                    hand = with_card(hand, taken)
                else:
                    card = stock.draw(seat, pile)
                    if card is None:
                        break  # nothing to draw: scored as it stands
                    hand = with_card(hand, card)
            best: tuple[int, int, int] | None = None
            for dw, c in quick.discards(hand):
                if c != taken:
                    key = (dw, -points[c], c)
                    if best is None or key < best:
                        best = key
            assert best is not None
            dw, _, card = best
            hands[seat] = without(hand, card)
            pile.append(card)
            turns += 1
            if went_out is None and dw == 0:
                went_out, final_left = seat, n - 1
            elif went_out is not None:
                final_left -= 1
            if went_out is not None and final_left == 0:
                break
            seat = (seat + 1) % n
            draw = True
        scores = [0 if s == went_out else quick.deadwood(hands[s]) for s in range(n)]
        mine = scores[me]
        return mine - (sum(scores) - mine) / (n - 1)

    def takes(self, hand: tuple[int, ...], top: int) -> bool:
        """The playout's draw: the top discard when it goes into a meld and lowers
        the hand's deadwood (not merely as a cheaper card: that restraint is most
        of ``strong``'s edge over ``basic``), else the stock."""
        if not self._may_meld(hand, top):
            return False
        quick = self.hands
        held = with_card(hand, top)
        now = quick.deadwood(hand)
        if quick.deadwood(held) >= now + self.seen.ctx.points[top]:
            return False  # it would lie in the deadwood
        return quick.after_discard(held) < now

    def _may_meld(self, hand: tuple[int, ...], top: int) -> bool:
        """Whether ``top`` has a partner in ``hand``: a wild, a card of its rank,
        or of its suit up to two ranks away (ranks wrap for high aces)."""
        ctx = self.seen.ctx
        if ctx.is_wild(top):
            return True
        rank, suit = top >> 2, top & 3
        for c in hand:
            if ctx.is_wild(c) or c >> 2 == rank:
                return True
            if c & 3 == suit and (abs((c >> 2) - rank) <= 2 or ctx.aces_high):
                return True
        return False
