"""The state of one game of Three Thirteen and the transitions between states.

:class:`State` is mutable, like python-chess's ``Board``: :meth:`State.apply`
checks a move against the rules and either raises a typed
:class:`~service.engine.errors.IllegalMoveError` leaving the state untouched,
or changes the state and returns the :class:`~service.engine.game_events.Event`
list describing what happened.  :func:`legal_moves` is the one source of truth
for what is allowed; ``apply`` accepts exactly those moves (plus, under
``false_go_out_penalty``, invalid go-out claims, which it penalizes).

>>> from service.engine.moves import Move
>>> state = State.new(Game(2), seed="00" * 32)
>>> seat = state.round.turn
>>> [str(m) for m in legal_moves(state, seat)]
['draw stock', 'draw discard']
>>> events = state.apply(seat, Move.parse("draw stock"))
>>> [e.type for e in events], events[1].seat == seat
(['drew', 'drew'], True)
>>> state.round.phase
<Phase.DISCARD: 'discard'>
"""

from __future__ import annotations

import bisect
import enum
from collections import Counter
from dataclasses import dataclass, field

from service.engine import errors
from service.engine.cards import Card
from service.engine.game_events import Event, HandResult, ResultLog, RoundResult
from service.engine.melds import LayOff, Meld, classify_meld, extend_meld
from service.engine.moves import Discard, Draw, GoOut, Move, Source
from service.engine.rounds import Phase, Round, deal_round
from service.engine.rules import Game, RoundSpec, points_table
from service.engine.shuffle import Shuffler
from service.engine.solver import best_arrangement, going_out_discards, going_out_melds

__all__ = ["State", "Status", "legal_moves"]


class Status(enum.Enum):
    PLAYING = "playing"
    FINISHED = "finished"


@dataclass(slots=True)
class State:
    """A game in progress or finished: the rules, the seed, scores and the round."""

    game: Game
    seed: str
    totals: list[int]
    round: Round | None = None
    results: ResultLog = field(default_factory=ResultLog)
    winners: list[int] = field(default_factory=list)

    @classmethod
    def new(cls, game: Game, seed: str) -> State:
        """Start a game: choose the first dealer and deal round 1."""
        return cls.start(game, seed)[0]

    @classmethod
    def start(cls, game: Game, seed: str) -> tuple[State, list[Event]]:
        """Like :meth:`new`, also returning the events of the first deal."""
        state = cls(game, seed, [0] * game.num_players)
        dealer = state.shuffler.choice_index("dealer", game.num_players)
        return state, state.deal(0, dealer)

    @property
    def shuffler(self) -> Shuffler:
        return Shuffler.from_hex(self.seed)

    @property
    def status(self) -> Status:
        return Status.FINISHED if self.round is None else Status.PLAYING

    @property
    def spec(self) -> RoundSpec:
        """The schedule entry of the round in play."""
        if self.round is None:
            raise errors.GameNotInProgressError("the game is finished")
        return self.game.rounds[self.round.index]

    # -- moves -------------------------------------------------------------

    def apply(self, seat: int, move: Move) -> list[Event]:
        """Play ``move`` for ``seat``; see the module docstring."""
        rnd = self._current(seat)
        if isinstance(move, Draw):
            return self._draw(rnd, seat, move)
        if rnd.phase is not Phase.DISCARD:
            raise errors.WrongPhaseError("draw a card first")
        if isinstance(move, Discard):
            self._check_discard(rnd, seat, move.card)
            return self._discard(rnd, seat, move.card, [])
        if isinstance(move, GoOut):
            return self._go_out(rnd, seat, move)
        raise errors.MalformedError(f"unknown move {move!r}", field="type")

    def _current(self, seat: int) -> Round:
        rnd = self.round
        if rnd is None:
            raise errors.GameNotInProgressError("the game is finished")
        if seat != rnd.turn:
            raise errors.NotYourTurnError(f"it is seat {rnd.turn}'s turn")
        return rnd

    def _draw(self, rnd: Round, seat: int, move: Draw) -> list[Event]:
        if rnd.phase is not Phase.DRAW:
            raise errors.WrongPhaseError("you have drawn already; discard or go out")
        events: list[Event] = []
        if move.source is Source.DISCARD:
            if not rnd.discard:
                raise errors.IllegalMoveError("the discard pile is empty", code="DISCARD_EMPTY")
            card = rnd.discard.pop()
            rnd.drawn_from_discard = card
            events.append(Event("drew", {"seat": seat, "source": "discard", "card": card.code}))
        else:
            if not rnd.stock:
                if len(rnd.discard) < 2:
                    raise errors.StockUnavailableError(
                        "the stock is empty and there is nothing to reshuffle; take the top discard"
                    )
                rnd.reshuffles += 1
                top = rnd.discard.pop()
                rnd.stock = self.shuffler.shuffled(
                    rnd.discard, "reshuffle", self.spec.number, rnd.reshuffles
                )
                rnd.discard = [top]
                events.append(Event("stock_reshuffled", {"stock_size": len(rnd.stock)}))
            card = rnd.stock.pop()
            events.append(Event("drew", {"seat": seat, "source": "stock"}))
            events.append(Event("drew", {"seat": seat, "source": "stock", "card": card.code}, seat))
        bisect.insort(rnd.hands[seat], card)
        rnd.phase = Phase.DISCARD
        return events

    def _check_discard(self, rnd: Round, seat: int, card: Card) -> None:
        if card not in rnd.hands[seat]:
            raise errors.CardNotInHandError(f"{card} is not in your hand", field="card")
        if card == rnd.drawn_from_discard:
            raise errors.DiscardForbiddenError(
                f"you took {card} from the discard pile this turn and may not discard it",
                field="card",
            )

    def _go_out(self, rnd: Round, seat: int, move: GoOut) -> list[Event]:
        if rnd.claim_refused:
            raise errors.GoOutForbiddenError(
                "your claim to go out was refused this turn; finish with a discard"
            )
        self._check_discard(rnd, seat, move.discard)
        rest = list(rnd.hands[seat])
        rest.remove(move.discard)
        try:
            melds = self._claimed_melds(rest, move)
        except errors.InvalidMeldsError as exc:
            penalty = self.game.options.false_go_out_penalty
            if penalty is None:
                raise
            rnd.penalties[seat] += penalty
            rnd.claim_refused = True
            # the reason may quote the claimed cards: only the claimant reads it
            data = {"seat": seat, "penalty": penalty}
            return [
                Event("go_out_refused", data),
                Event("go_out_refused", {**data, "reason": exc.message}, seat),
            ]
        result = self._hand_result(seat, melds, (), 0)
        event = Event(
            "went_out",
            {"seat": seat, "melds": [m.to_dict() for m in melds], "discard": move.discard.code},
        )
        if rnd.went_out is None:
            rnd.went_out = seat
            rnd.final_turns_left = self.game.num_players
        return self._discard(rnd, seat, move.discard, [event], result)

    def _claimed_melds(self, rest: list[Card], move: GoOut) -> tuple[Meld, ...]:
        spec = self.spec
        options = self.game.options
        if move.melds is None:
            found = going_out_melds(rest, spec.wild_rank, options)
            if found is None:
                raise errors.InvalidMeldsError("these cards cannot all be melded", field="melds")
            return found
        claimed = Counter(c for meld in move.melds for c in meld)
        held = Counter(rest)
        if claimed - held:
            missing = sorted(claimed - held)[0]
            raise errors.CardNotInHandError(f"{missing} is not in your hand", field="melds")
        if held - claimed:
            raise errors.InvalidMeldsError(
                "the melds must use every card in your hand except the discard", field="melds"
            )
        melds = []
        for cards in move.melds:
            meld = classify_meld(cards, spec.wild_rank, options)
            if meld is None:
                shown = " ".join(c.code for c in cards)
                raise errors.InvalidMeldsError(f"[{shown}] is not a valid meld", field="melds")
            melds.append(meld)
        return tuple(melds)

    def _discard(
        self,
        rnd: Round,
        seat: int,
        card: Card,
        events: list[Event],
        result: HandResult | None = None,
    ) -> list[Event]:
        rnd.hands[seat].remove(card)
        rnd.discard.append(card)
        if result is None:
            events.append(Event("discarded", {"seat": seat, "card": card.code}))
        rnd.turns_taken += 1
        if rnd.went_out is not None:
            if result is None and self.game.options.lay_off:
                result = self._lay_down(rnd, seat)
                events.append(Event("laid_down", result.to_dict()))
            if result is not None:
                rnd.scored[seat] = result
                if self.game.options.lay_off:
                    rnd.table.extend(result.melds)
                    rnd.table_owners.extend([seat] * len(result.melds))
            rnd.final_turns_left -= 1
            if rnd.final_turns_left == 0:
                return events + self._end_round("went_out")
        if rnd.went_out is None and rnd.turns_taken >= self.game.turn_limit:
            return events + self._end_round("turn_limit")
        rnd.turn = (seat + 1) % self.game.num_players
        rnd.phase = Phase.DRAW
        rnd.drawn_from_discard = None
        rnd.claim_refused = False
        events.append(Event("turn", {"seat": rnd.turn}))
        return events

    def _lay_down(self, rnd: Round, seat: int) -> HandResult:
        """Lay-off variant: a final-turn player lays down their best melds and
        lays off onto the table; the table melds grow accordingly."""
        arrangement = best_arrangement(
            rnd.hands[seat], self.spec.wild_rank, self.game.options, tuple(rnd.table)
        )
        for layoff in arrangement.layoffs:
            # extend_meld re-orders the grown meld (a run stays in ascending order)
            grown = extend_meld(
                rnd.table[layoff.target], layoff.cards, self.spec.wild_rank, self.game.options
            )
            assert grown is not None, "the solver only lays off what fits"
            rnd.table[layoff.target] = grown
        return self._hand_result(
            seat, arrangement.melds, arrangement.deadwood, arrangement.points, arrangement.layoffs
        )

    def _hand_result(
        self,
        seat: int,
        melds: tuple[Meld, ...],
        deadwood: tuple[Card, ...],
        points: int,
        layoffs: tuple[LayOff, ...] = (),
    ) -> HandResult:
        assert self.round is not None
        penalty = self.round.penalties[seat]
        multiplier = self.game.round_multiplier(self.spec)
        return HandResult(seat, melds, deadwood, points * multiplier + penalty, penalty, layoffs)

    def _end_round(self, ended_by: str) -> list[Event]:
        rnd = self.round
        assert rnd is not None
        spec = self.spec
        hands = []
        for seat in range(self.game.num_players):
            result = rnd.scored.get(seat)
            if result is None:
                a = best_arrangement(rnd.hands[seat], spec.wild_rank, self.game.options)
                result = self._hand_result(seat, a.melds, a.deadwood, a.points)
            hands.append(result)
            self.totals[seat] += result.points
        record = RoundResult(
            spec.number,
            spec.wild_rank,
            rnd.went_out,
            tuple(hands),
            self.game.round_multiplier(spec),
            ended_by,
            tuple(rnd.table),
        )
        self.results.append(record)
        events = [Event("round_ended", {"result": record.to_dict(), "totals": list(self.totals)})]
        if rnd.index + 1 < len(self.game.rounds):
            return events + self.deal(rnd.index + 1, (rnd.dealer + 1) % self.game.num_players)
        self.round = None
        best = min(self.totals)
        self.winners = [s for s, t in enumerate(self.totals) if t == best]
        events.append(
            Event("game_finished", {"winners": list(self.winners), "totals": list(self.totals)})
        )
        return events

    def deal(self, index: int, dealer: int) -> list[Event]:
        """Deal round ``index`` (of the schedule) with ``dealer`` dealing, as the game
        does at its start and after each round: the events of the deal."""
        self.round, events = deal_round(self.game, self.shuffler, index, dealer)
        return events


_DISCARDS = tuple(Discard(Card.from_id(i)) for i in range(53))
"""The discard of each card, by id (moves are frozen: a draw's legal moves share them)."""


def legal_moves(state: State, seat: int, *, floor: int | None = None) -> list[Move]:
    """Every move ``seat`` may make now (empty when it is not their turn).

    Going out is listed once per possible discard, with one arrangement that
    works; any other valid arrangement is accepted too.  ``floor``: the points
    of the best arrangement of the seat's hand, when the caller has it already.
    """
    rnd = state.round
    if rnd is None or seat != rnd.turn:
        return []
    if rnd.phase is Phase.DRAW:
        moves: list[Move] = []
        if rnd.stock or len(rnd.discard) >= 2:
            moves.append(Draw(Source.STOCK))
        if rnd.discard:
            moves.append(Draw(Source.DISCARD))
        return moves
    hand = rnd.hands[seat]
    taken = rnd.drawn_from_discard
    ids = [i for i in sorted({c.id for c in hand}) if taken is None or i != taken.id]
    moves = [_DISCARDS[i] for i in ids]
    if not rnd.claim_refused:
        spec = state.spec
        options = state.game.options
        # Going out discarding c leaves melds covering the rest, so the whole
        # hand then arranges with deadwood c alone: only cards worth at least
        # the hand's best deadwood can be the discard of a going out.
        if floor is None:
            floor = best_arrangement(hand, spec.wild_rank, options).points
        points = points_table(spec.wild_rank, options)
        candidates = [_DISCARDS[i].card for i in ids if points[i] >= floor]
        for card, melds in going_out_discards(hand, spec.wild_rank, options, candidates):
            moves.append(GoOut(card, tuple([m.cards for m in melds])))
    return moves
