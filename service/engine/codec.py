"""The engine state <-> its stored form, a JSON-ready dict (never pickle).

There is one layout, :data:`STATE_FORMAT`, checked on load (any other number:
:class:`~service.engine.errors.StateFormatError`).  Cards are one character
each (:func:`~service.engine.cards.chars_of`), and the state leaves out what
its owner, the game record, stores itself: the players and options (its
:class:`~service.engine.rules.Game`), the seed, and the results of finished
rounds, stored apart as their JSON text (they change once a round, the rest on
every move; loading a game does not build their many small objects until they
are read, see :class:`~service.engine.game_events.ResultLog`).

>>> from service.engine.rules import Game
>>> from service.engine.state import State
>>> state = State.new(Game(3), seed="ab" * 32)
>>> data = state_to_compact(state)
>>> state_from_compact(data, state.game, state.seed, state.results.json()) == state
True
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from service.engine.cards import CARD_CHARS, cards_from_chars, chars_of
from service.engine.errors import StateFormatError
from service.engine.game_events import HandResult, ResultLog, meld_from_dict
from service.engine.options import Options
from service.engine.rounds import Phase, Round
from service.engine.rules import Game
from service.engine.state import State

STATE_FORMAT = 3
"""The number of the stored layout (``"v"``), the only one this release reads."""


@lru_cache(maxsize=256)
def _options(items: tuple[tuple[str, Any], ...]) -> Options:
    return Options.from_dict(dict(items))


_PHASES = {phase.value: phase for phase in Phase}


def options_from_dict(data: dict[str, Any]) -> Options:
    """Stored options, validated once per distinct set (they repeat across games)."""
    return _options(tuple(data.items()))


@lru_cache(maxsize=256)
def game_for(players: int, options: Options) -> Game:
    """The rules of a stored table (built and validated once per distinct one)."""
    return Game(players, options)


def state_to_compact(state: State) -> dict[str, Any]:
    """The state as stored (:data:`STATE_FORMAT`): cards one character each, and
    neither the players nor the options nor the seed nor the results, which
    :func:`state_from_compact` is given back.

    >>> from service.engine.rules import Game
    >>> from service.engine.state import State
    >>> state = State.new(Game(2), seed="cd" * 32)
    >>> data = state_to_compact(state)
    >>> sorted(data), data["v"], len(data["round"]["hands"][0])
    (['round', 'totals', 'v', 'winners'], 3, 3)
    """
    return {
        "v": STATE_FORMAT,
        "totals": list(state.totals),
        "round": _round_to_dict(state.round) if state.round else None,
        "winners": list(state.winners),
    }


def state_from_compact(data: dict[str, Any], game: Game, seed: str, results: bytes) -> State:
    """The state of :func:`state_to_compact`, with its game, seed and results' text.

    >>> from service.engine.rules import Game
    >>> state_from_compact({"v": 2}, Game(2), "cd" * 32, b"[]")
    Traceback (most recent call last):
    ...
    service.engine.errors.StateFormatError: unknown state format 2 (this release reads 3)
    """
    version = data.get("v")
    if type(version) is not int or version != STATE_FORMAT:
        raise StateFormatError(
            f"unknown state format {version!r} (this release reads {STATE_FORMAT})"
        )
    return State(
        game=game,
        seed=seed,
        totals=list(data["totals"]),
        round=_round_from_dict(data["round"]) if data["round"] else None,
        results=ResultLog.from_json(results),
        winners=list(data["winners"]),
    )


def _round_to_dict(rnd: Round) -> dict[str, Any]:
    drawn = rnd.drawn_from_discard
    return {
        "index": rnd.index,
        "dealer": rnd.dealer,
        "turn": rnd.turn,
        "phase": rnd.phase.value,
        "stock": chars_of(rnd.stock),
        "discard": chars_of(rnd.discard),
        "hands": [chars_of(h) for h in rnd.hands],
        "went_out": rnd.went_out,
        "final_turns_left": rnd.final_turns_left,
        "turns_taken": rnd.turns_taken,
        "drawn_from_discard": None if drawn is None else drawn.char,
        "claim_refused": rnd.claim_refused,
        "reshuffles": rnd.reshuffles,
        "table": [m.to_dict() for m in rnd.table],
        "table_owners": list(rnd.table_owners),
        "scored": [r.to_dict() for r in rnd.scored.values()],
        "penalties": list(rnd.penalties),
    }


def _round_from_dict(data: dict[str, Any]) -> Round:
    drawn = data["drawn_from_discard"]
    return Round(
        index=data["index"],
        dealer=data["dealer"],
        turn=data["turn"],
        stock=cards_from_chars(data["stock"]),
        discard=cards_from_chars(data["discard"]),
        hands=[cards_from_chars(h) for h in data["hands"]],
        phase=_PHASES.get(data["phase"]) or Phase(data["phase"]),  # unknown: ValueError
        went_out=data["went_out"],
        final_turns_left=data["final_turns_left"],
        turns_taken=data["turns_taken"],
        drawn_from_discard=cards_from_chars(drawn)[0] if drawn else None,
        claim_refused=data["claim_refused"],
        reshuffles=data["reshuffles"],
        table=[meld_from_dict(m) for m in data["table"]],
        table_owners=list(data["table_owners"]),
        scored={r["seat"]: HandResult.from_dict(r) for r in data["scored"]},
        penalties=list(data["penalties"]),
    )


def ids_of_chars(text: str) -> tuple[int, ...]:
    """Card ids of a :func:`~service.engine.cards.chars_of` text.

    >>> ids_of_chars("aJ*")
    (0, 38, 52)
    """
    try:
        ids = text.encode("ascii").translate(_IDS)
    except (AttributeError, UnicodeEncodeError):
        raise StateFormatError(f"not card characters: {text!r}") from None
    if _NOT_A_CARD in ids:
        raise StateFormatError(f"not card characters: {text!r}")
    return tuple(ids)


def chars_of_ids(ids: tuple[int, ...]) -> str:
    """:func:`ids_of_chars` the other way round.

    >>> chars_of_ids((0, 38, 52))
    'aJ*'
    """
    return bytes(ids).translate(_CHARS).decode("ascii")


# bytes.translate tables, id <-> character (C all along: no string per card)
_NOT_A_CARD = 255
_CHARS = bytes(ord(CARD_CHARS[i]) if i < len(CARD_CHARS) else 0 for i in range(256))
_IDS = bytes(CARD_CHARS.find(chr(b)) if chr(b) in CARD_CHARS else _NOT_A_CARD for b in range(256))
