"""What one seat (or a spectator) may see of a game.

:func:`observe` (with :func:`seat_part`, the half only a seat sees) is the only
place where hidden information is stripped: the API, the bots and the tests all
build views through it.  A spectator's view
has every hand's size but no card held in a hand and nothing about the
stock's order; a seat's view adds that seat's hand, its legal moves and the
best arrangement of its hand right now.

>>> from service.engine.rules import Game
>>> from service.engine.state import State
>>> state = State.new(Game(2), seed="01" * 32)
>>> public = observe(state)
>>> sorted(public["round"])[:4], "hand" in public
(['dealer', 'discard_size', 'discard_top', 'final_turns_left'], False)
>>> len(observe(state, 0)["hand"])
3
"""

from __future__ import annotations

from typing import Any

import orjson

from service.engine.cards import Card
from service.engine.rules import points_table
from service.engine.solver import best_arrangement
from service.engine.state import State, legal_moves

ArrangementKey = tuple[int, tuple[int, ...]]


def observe(state: State, seat: int | None = None, *, raw_results: bool = False) -> dict[str, Any]:
    """The JSON-ready view of ``state`` for ``seat`` (None: a spectator).

    ``raw_results``: ``results`` as an ``orjson.Fragment`` of their JSON text
    instead of a list, for callers that only serialize the view with orjson
    (the HTTP API): the stored results are then never parsed."""
    rnd = state.round
    n = state.game.num_players
    view: dict[str, Any] = {
        "status": state.status.value,
        "options": state.game.options.to_dict(),
        "decks": state.game.decks,
        "rounds_total": len(state.game.rounds),
        "players": [
            {
                "seat": s,
                "hand_size": len(rnd.hands[s]) if rnd else 0,
                "total": state.totals[s],
            }
            for s in range(n)
        ],
        "round": None,
        "results": orjson.Fragment(state.results.json()) if raw_results else state.results.dicts(),
        "winners": list(state.winners) if rnd is None else None,
    }
    if rnd is not None:
        spec = state.spec
        view["round"] = {
            "number": spec.number,
            "hand_size": spec.hand_size,
            "wild_rank": spec.wild_rank.symbol,
            "dealer": rnd.dealer,
            "turn": rnd.turn,
            "phase": rnd.phase.value,
            "stock_size": len(rnd.stock),
            "discard_top": rnd.discard[-1].code if rnd.discard else None,
            "discard_size": len(rnd.discard),
            "went_out": rnd.went_out,
            "final_turns_left": rnd.final_turns_left if rnd.went_out is not None else None,
            "turns_taken": rnd.turns_taken,
            "table": [
                {"seat": owner, **meld.to_dict()}
                for owner, meld in zip(rnd.table_owners, rnd.table, strict=True)
            ],
        }
    if seat is not None:
        view.update(seat_part(state, seat))
    return view


def seat_part(state: State, seat: int, *, known: dict[str, Any] | None = None) -> dict[str, Any]:
    """What ``observe(state, seat)`` adds to the public view: ``seat``, the seat's
    ``hand``, its ``legal_moves`` and the best ``arrangement`` of its hand.

    ``known``: a best arrangement of this very hand, known already (a host
    stores one with the game, built for the same :func:`arrangement_key` or
    carried over a discard by :func:`arrangement_after_discard`, so that viewing a
    hand needs no solve of it); taken as it is, except while the arrangement
    depends on the table (the key is None), when it is solved again.

    >>> from service.engine.rules import Game
    >>> from service.engine.state import State
    >>> state = State.new(Game(2), seed="01" * 32)
    >>> part = seat_part(state, 1)
    >>> sorted(part)
    ['arrangement', 'hand', 'legal_moves', 'seat']
    >>> observe(state, 1) == {**observe(state), **part}
    True
    >>> seat_part(state, 1, known=part["arrangement"]) == part
    True
    """
    rnd = state.round
    if rnd is None:
        return empty_seat_part(seat)
    on_table = _arranged_with_table(state)
    if known is None or on_table:
        known = hand_arrangement(state, seat)
    # the floor of the going-out checks is the hand's own, without the table
    floor = None if on_table else known["points"]
    return {
        "seat": seat,
        "hand": [c.code for c in rnd.hands[seat]],
        "legal_moves": [m.to_dict() for m in legal_moves(state, seat, floor=floor)],
        "arrangement": known,
    }


def hand_arrangement(state: State, seat: int) -> dict[str, Any]:
    """The best arrangement of ``seat``'s hand, solved, in its JSON form (with the
    melds on the table while hands are arranged with them: ``lay_off``, once
    someone went out).

    >>> from service.engine.rules import Game
    >>> state = State.new(Game(2), seed="01" * 32)
    >>> sorted(hand_arrangement(state, 0))
    ['deadwood', 'melds', 'points']
    """
    rnd = state.round
    assert rnd is not None, "no round in play"
    table = tuple(rnd.table) if _arranged_with_table(state) else ()
    hand = rnd.hands[seat]
    return best_arrangement(hand, state.spec.wild_rank, state.game.options, table).to_dict()


def arrangement_key(state: State, seat: int) -> ArrangementKey | None:
    """What the best arrangement of ``seat``'s hand depends on, besides the game's
    options: the round (its wild rank) and the cards.  None while it also depends
    on the melds on the table (``lay_off``, once someone went out).

    >>> from service.engine.rules import Game
    >>> from service.engine.state import State
    >>> arrangement_key(State.new(Game(2), seed="01" * 32), 0)[0]
    0
    """
    rnd = state.round
    if rnd is None or _arranged_with_table(state):
        return None
    return rnd.index, tuple(sorted([c.id for c in rnd.hands[seat]]))


def arrangement_after_discard(
    state: State, now: ArrangementKey | None, before: tuple[ArrangementKey, dict[str, Any]]
) -> dict[str, Any] | None:
    """The best arrangement of a seat's hand, without a solve, when the hand --
    ``now``, its :func:`arrangement_key` -- is the one of ``before`` -- (key, best
    arrangement) of an earlier hand of this round -- less one card that lay in
    that arrangement's deadwood (a discard, as players mostly make them); else None.

    It is that arrangement less the card: an arrangement of the hand now, plus
    the card as deadwood, is one of the hand before and costs the card's points
    more, so none can beat it.  It may differ from what a solve picks among
    equally good arrangements; the melds a player was shown then stay as they were.

    >>> from service.engine.cards import parse_cards
    >>> from service.engine.moves import Discard, Draw, Source
    >>> from service.engine.rules import Game
    >>> state = State.new(Game(2), seed="01" * 32)
    >>> seat = state.round.turn
    >>> _ = state.apply(seat, Draw(Source.STOCK))
    >>> before = (arrangement_key(state, seat), seat_part(state, seat)["arrangement"])
    >>> card = parse_cards(before[1]["deadwood"][0])[0]
    >>> _ = state.apply(seat, Discard(card))
    >>> after = arrangement_after_discard(state, arrangement_key(state, seat), before)
    >>> after["points"] == seat_part(state, seat)["arrangement"]["points"]
    True
    >>> after["melds"] == before[1]["melds"]
    True
    >>> len(after["deadwood"]) + 1 == len(before[1]["deadwood"])
    True
    """
    (index, ids), arrangement = before
    if now is None or index != now[0] or len(ids) != len(now[1]) + 1:
        return None
    held = now[1]
    i = next((k for k, (a, b) in enumerate(zip(held, ids, strict=False)) if a != b), len(held))
    if ids[:i] + ids[i + 1 :] != held:
        return None
    gone = Card.from_id(ids[i])
    deadwood = list(arrangement["deadwood"])
    if gone.code not in deadwood:
        return None
    deadwood.remove(gone.code)
    points = points_table(state.spec.wild_rank, state.game.options)[gone.id]
    return {**arrangement, "deadwood": deadwood, "points": arrangement["points"] - points}


def empty_seat_part(seat: int) -> dict[str, Any]:
    """:func:`seat_part` of a seat that holds no hand (a game waiting or finished)."""
    return {"seat": seat, "hand": [], "legal_moves": [], "arrangement": None}


def _arranged_with_table(state: State) -> bool:
    """True while hands are arranged with the table's melds (``lay_off``, once
    someone went out)."""
    rnd = state.round
    return rnd is not None and state.game.options.lay_off and rnd.went_out is not None
