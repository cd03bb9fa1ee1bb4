"""The ``strong`` level: plays its own hand by expected value and watches the table.

It works from the same seat view as every brain, plus (optionally) the game's
public events as ``history``:

- **Card tracking.**  From the view it knows its hand, the top discard and the
  table (lay-off variant); from public events of the current round it rebuilds
  the whole discard pile, which cards each opponent took from it (and has not
  thrown back) and which cards each opponent threw away.  Every other card of
  the shoe is *unseen*: in the stock or in an opponent's hand, equally likely.
- **Stock estimate.**  A stock draw is valued as the expectation, over the
  unseen cards (weighted by how many copies remain unseen), of the deadwood
  left after the best discard.  The top discard is taken only when it beats
  that expectation.
- **Discards.**  The three discards leaving the least deadwood (a fourth or
  fifth was almost never the choice) are each scored by the deadwood expected
  after the next draw and the best discard then.  Whoever goes out, every other
  player still gets one more turn, so that next draw always comes: it is what
  the hand can count on.  This keeps pairs and run pieces whose missing cards
  are still live, and drops those whose cards are already dead in the discard
  pile.  At two players a discard also pays a penalty for feeding the next
  player: a card of a rank or a run they have been collecting from the discard
  pile costs extra, one they have thrown away themselves costs less.  With two
  decks and several opponents a pick-up is a weak signal (a card taken may be
  one of two copies, a random-ish player's picks look like collecting), so
  there is no such penalty at three or more.
- **Going out.**  Going out scores 0, the best any hand can score, and ends the
  round before opponents improve; so it always goes out when it can, choosing
  the discard that helps the players taking their final turns the least.
- **Stalemates.**  Like ``basic``, one discard in four is random once a round has
  run far past any normal length (:func:`~service.bots.common.stalemate_discard`).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from service.bots.common import Seen, stalemate_discard, with_card, without
from service.engine.cards import JOKER_ID, Card
from service.engine.moves import Move, Source

TAKE_MARGIN = 0.25  # the top discard must beat a stock draw by this much
CANDIDATES = 3  # discards examined in depth (the best by deadwood left)
FEED_SET = 3.0  # points of danger: the next player collects this rank
FEED_RUN = 2.0  # ... or cards next to it in its suit
SPURN = 2.0  # relief: the next player threw this rank away


class Tracker:
    """What this seat knows about the cards of the current round."""

    def __init__(self, seen: Seen, history: list[dict[str, Any]] | None) -> None:
        self.seen = seen
        n = seen.num_players
        self.picks: list[list[int]] = [[] for _ in range(n)]  # taken from the discard, still held
        self.thrown: list[list[int]] = [[] for _ in range(n)]
        pile: list[int] | None = None
        if history is not None:
            pile = self._replay(history)
        if pile is None or (seen.discard_top is not None and pile[-1:] != [seen.discard_top]):
            pile = [] if seen.discard_top is None else [seen.discard_top]
        self.pile = pile
        unseen: Counter[int] = Counter()
        for cid in range(52):
            unseen[cid] = seen.decks
        if seen.options.jokers_per_deck:
            unseen[JOKER_ID] = seen.decks * seen.options.jokers_per_deck
        known: Counter[int] = Counter(seen.hand)
        known.update(pile)
        for meld in seen.table:
            known.update(Card.parse(c).id for c in meld["cards"])
        for s, cards in enumerate(self.picks):
            if s != seen.seat:
                known.update(cards)
        unseen.subtract(known)
        self.unseen = {c: k for c, k in unseen.items() if k > 0}

    def _replay(self, history: list[dict[str, Any]]) -> list[int] | None:
        """Rebuild this round from the public events; None when it is not in them."""
        start = None
        for i, event in enumerate(history):
            if (
                event.get("type") == "round_started"
                and event.get("round") == self.seen.round_number
            ):
                start = i
        if start is None:
            return None
        pile = [Card.parse(history[start]["discard_top"]).id]
        for event in history[start + 1 :]:
            kind = event.get("type")
            if event.get("private") and event.get("seat") != self.seen.seat:
                continue
            seat = event.get("seat")
            if kind == "drew" and event.get("source") == "discard" and isinstance(seat, int):
                card = Card.parse(event["card"]).id
                if pile and pile[-1] == card:
                    pile.pop()
                if 0 <= seat < len(self.picks):
                    self.picks[seat].append(card)
            elif kind in ("discarded", "went_out") and isinstance(seat, int):
                card = Card.parse(event["card" if kind == "discarded" else "discard"]).id
                pile.append(card)
                if 0 <= seat < len(self.picks):
                    self.thrown[seat].append(card)
                    if card in self.picks[seat]:
                        self.picks[seat].remove(card)
            elif kind == "stock_reshuffled":
                pile = pile[-1:]
        return pile

    # -- estimates ---------------------------------------------------------------

    def draw_odds(self) -> list[tuple[int, float]]:
        """(card, probability) of the next stock card, uniform over unseen copies."""
        total = sum(self.unseen.values())
        if not total:
            return []
        return [(c, k / total) for c, k in self.unseen.items()]

    def next_players(self) -> list[int]:
        """Seats that play after this one before the round can end, nearest first."""
        seen = self.seen
        out = []
        for step in range(1, seen.num_players):
            s = (seen.seat + step) % seen.num_players
            if s != seen.went_out:
                out.append(s)
        return out

    def danger(self, card: int) -> float:
        """How much discarding ``card`` may help the next player(s), in points."""
        seen = self.seen
        if seen.ctx.is_wild(card):
            return 20.0
        rank, suit = card >> 2, card & 3
        total = 0.0
        for weight, s in zip((1.0, 0.3), self.next_players(), strict=False):
            for p in self.picks[s]:
                if seen.ctx.is_wild(p):
                    continue
                if p >> 2 == rank:
                    total += weight * FEED_SET
                elif p & 3 == suit and abs((p >> 2) - rank) <= 2:
                    total += weight * FEED_RUN
            for t in self.thrown[s]:
                if t >> 2 == rank:
                    total -= weight * SPURN
        return total


def _expected_after_draw(seen: Seen, odds: list[tuple[int, float]], hand: tuple[int, ...]) -> float:
    """Expected deadwood after drawing a random unseen card into ``hand`` and
    making the best discard."""
    ctx = seen.ctx
    if not odds:
        return float(ctx.deadwood(hand))
    return sum(p * ctx.after_discard(with_card(hand, c)) for c, p in odds)


def decide(
    view: dict[str, Any], rng: random.Random, history: list[dict[str, Any]] | None = None
) -> Move:
    seen = Seen.of(view)
    if len(seen.legal) == 1:
        return seen.legal[0]
    tracker = Tracker(seen, history)
    ctx = seen.ctx
    if seen.phase == "draw":
        forced = seen.forced_draw()
        if forced is not None:
            return forced
        stock = seen.draw(Source.STOCK)
        take = seen.draw(Source.DISCARD)
        assert stock is not None and take is not None and seen.discard_top is not None
        kept = seen.deadwood_taking_top()
        if kept >= ctx.deadwood(seen.hand):
            return stock
        expected = _expected_after_draw(seen, tracker.draw_odds(), seen.hand)
        return take if kept < expected - TAKE_MARGIN else stock

    go_outs = seen.go_outs()
    if go_outs:
        return min(go_outs, key=lambda m: (tracker.danger(m.discard.id), -ctx.points[m.discard.id]))
    shaken = stalemate_discard(seen, rng)
    if shaken is not None:
        return shaken
    options = seen.discards()
    final = seen.went_out is not None  # this is our last turn: only the hand counts
    scored = sorted((ctx.deadwood(without(seen.hand, c)), -ctx.points[c], c) for c in options)
    if final:
        return options[scored[0][2]]
    odds = tracker.draw_odds()
    feeding = seen.num_players == 2  # see the module docstring
    best_value = None
    best_card = scored[0][2]
    for _dw, _, c in scored[:CANDIDATES]:
        value = _expected_after_draw(seen, odds, without(seen.hand, c))
        if feeding:
            value += tracker.danger(c)
        if best_value is None or value < best_value:
            best_value, best_card = value, c
    return options[best_card]
