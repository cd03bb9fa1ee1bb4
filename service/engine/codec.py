"""State <-> compact, versioned JSON-ready dicts (never pickle).

Card lists are stored as one space-separated string of codes, which keeps a
game document small; the results of finished rounds as one string of JSON
text, so loading a game does not build their many small objects until they
are read (see :class:`ResultLog`).  A caller that stores the results apart
(they change once a round, the rest on every move) leaves them out of the
dict (``results=False``) and hands their text back to :func:`state_from_dict`.
``FORMAT_VERSION`` is bumped whenever the layout changes;
:func:`state_from_dict` reads every version it knows (1 kept the results as a
list) and refuses others.

>>> from service.engine.rules import Game
>>> from service.engine.state import State
>>> state = State.new(Game(3), seed="ab" * 32)
>>> state_to_dict(state_from_dict(state_to_dict(state))) == state_to_dict(state)
True
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from service.engine.cards import Card, cards_from_codes, format_cards
from service.engine.errors import StateFormatError
from service.engine.records import HandResult, ResultLog, meld_from_dict
from service.engine.rules import Game, Options
from service.engine.state import Phase, Round, State

FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)


def _cards(text: str) -> list[Card]:
    return cards_from_codes(text.split())


@lru_cache(maxsize=256)
def _options(items: tuple[tuple[str, Any], ...]) -> Options:
    return Options.from_dict(dict(items))


@lru_cache(maxsize=256)
def _game(players: int, options: Options) -> Game:
    """The rules of a stored game, built (and validated) once per distinct table."""
    return Game(players, options)


_PHASES = {phase.value: phase for phase in Phase}


def options_from_dict(data: dict[str, Any]) -> Options:
    """Stored options, validated once per distinct set (they repeat across games)."""
    return _options(tuple(data.items()))


def round_to_dict(rnd: Round) -> dict[str, Any]:
    return {
        "index": rnd.index,
        "dealer": rnd.dealer,
        "turn": rnd.turn,
        "phase": rnd.phase.value,
        "stock": format_cards(rnd.stock),
        "discard": format_cards(rnd.discard),
        "hands": [format_cards(h) for h in rnd.hands],
        "went_out": rnd.went_out,
        "final_turns_left": rnd.final_turns_left,
        "turns_taken": rnd.turns_taken,
        "drawn_from_discard": rnd.drawn_from_discard.code if rnd.drawn_from_discard else None,
        "claim_refused": rnd.claim_refused,
        "reshuffles": rnd.reshuffles,
        "table": [m.to_dict() for m in rnd.table],
        "table_owners": list(rnd.table_owners),
        "scored": [r.to_dict() for r in rnd.scored.values()],
        "penalties": list(rnd.penalties),
    }


def round_from_dict(data: dict[str, Any]) -> Round:
    drawn = data["drawn_from_discard"]
    return Round(
        index=data["index"],
        dealer=data["dealer"],
        turn=data["turn"],
        stock=_cards(data["stock"]),
        discard=_cards(data["discard"]),
        hands=[_cards(h) for h in data["hands"]],
        phase=_PHASES.get(data["phase"]) or Phase(data["phase"]),  # unknown: ValueError
        went_out=data["went_out"],
        final_turns_left=data["final_turns_left"],
        turns_taken=data["turns_taken"],
        drawn_from_discard=Card.parse(drawn) if drawn else None,
        claim_refused=data["claim_refused"],
        reshuffles=data["reshuffles"],
        table=[meld_from_dict(m) for m in data["table"]],
        table_owners=list(data["table_owners"]),
        scored={r["seat"]: HandResult.from_dict(r) for r in data["scored"]},
        penalties=list(data["penalties"]),
    )


def state_to_dict(state: State, *, results: bool = True) -> dict[str, Any]:
    """The whole state, secret seed included: for storage only, never for clients.

    ``results=False`` leaves out the finished rounds' results (``state.results.json()``
    is their text, to be stored apart and given back to :func:`state_from_dict`)."""
    out = {
        "v": FORMAT_VERSION,
        "players": state.game.num_players,
        "options": state.game.options.to_dict(),
        "seed": state.seed,
        "totals": list(state.totals),
        "round": round_to_dict(state.round) if state.round else None,
        "winners": list(state.winners),
    }
    if results:
        out["results"] = state.results.json().decode()
    return out


def state_from_dict(data: dict[str, Any], results: bytes | None = None) -> State:
    """Rebuild a state saved by :func:`state_to_dict`; ``results`` is the text of
    the results when they were left out of ``data``.

    >>> from service.engine.rules import Game
    >>> from service.engine.state import State
    >>> state = State.new(Game(2), seed="cd" * 32)
    >>> apart = state_to_dict(state, results=False)
    >>> state_from_dict(apart, state.results.json()) == state
    True
    >>> state_from_dict(apart)
    Traceback (most recent call last):
    ...
    service.engine.errors.StateFormatError: the state was saved without its results
    """
    version = data.get("v")
    if type(version) is not int or version not in READABLE_VERSIONS:
        raise StateFormatError(f"unknown state format {version!r}")
    game = _game(data["players"], options_from_dict(data["options"]))
    if "results" in data:
        inline = data["results"]
        log = ResultLog.from_json(inline.encode()) if version >= 2 else ResultLog(inline)
    elif results is not None:
        log = ResultLog.from_json(results)
    else:
        raise StateFormatError("the state was saved without its results")
    return State(
        game=game,
        seed=data["seed"],
        totals=list(data["totals"]),
        round=round_from_dict(data["round"]) if data["round"] else None,
        results=log,
        winners=list(data["winners"]),
    )
