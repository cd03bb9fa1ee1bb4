"""State <-> compact, versioned JSON-ready dicts (never pickle).

Card lists are stored as one space-separated string of codes, which keeps a
game document small (in the compact form, :func:`state_to_compact`, as one
character a card); the results of finished rounds as one string of JSON
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

from service.engine.cards import (
    CARD_CHARS,
    Card,
    cards_from_chars,
    cards_from_codes,
    chars_of,
    format_cards,
)
from service.engine.errors import StateFormatError
from service.engine.records import HandResult, ResultLog, meld_from_dict
from service.engine.rules import Game, Options
from service.engine.state import Phase, Round, State

FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
COMPACT_VERSION = 3
"""The layout of :func:`state_to_compact`: cards one character each, and no
copy of what the state's owner stores anyway (players, options, seed)."""


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


def round_to_dict(rnd: Round, *, compact: bool = False) -> dict[str, Any]:
    """The round as JSON-ready data; its piles and hands as codes, or with
    ``compact`` one character a card (:func:`~service.engine.cards.chars_of`)."""
    cards = chars_of if compact else format_cards
    drawn = rnd.drawn_from_discard
    return {
        "index": rnd.index,
        "dealer": rnd.dealer,
        "turn": rnd.turn,
        "phase": rnd.phase.value,
        "stock": cards(rnd.stock),
        "discard": cards(rnd.discard),
        "hands": [cards(h) for h in rnd.hands],
        "went_out": rnd.went_out,
        "final_turns_left": rnd.final_turns_left,
        "turns_taken": rnd.turns_taken,
        "drawn_from_discard": None if drawn is None else drawn.char if compact else drawn.code,
        "claim_refused": rnd.claim_refused,
        "reshuffles": rnd.reshuffles,
        "table": [m.to_dict() for m in rnd.table],
        "table_owners": list(rnd.table_owners),
        "scored": [r.to_dict() for r in rnd.scored.values()],
        "penalties": list(rnd.penalties),
    }


def round_from_dict(data: dict[str, Any], *, compact: bool = False) -> Round:
    """The round of :func:`round_to_dict` (with the same ``compact``)."""
    cards = cards_from_chars if compact else _cards
    drawn = data["drawn_from_discard"]
    return Round(
        index=data["index"],
        dealer=data["dealer"],
        turn=data["turn"],
        stock=cards(data["stock"]),
        discard=cards(data["discard"]),
        hands=[cards(h) for h in data["hands"]],
        phase=_PHASES.get(data["phase"]) or Phase(data["phase"]),  # unknown: ValueError
        went_out=data["went_out"],
        final_turns_left=data["final_turns_left"],
        turns_taken=data["turns_taken"],
        drawn_from_discard=(cards(drawn)[0] if compact else Card.parse(drawn)) if drawn else None,
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


def state_to_compact(state: State) -> dict[str, Any]:
    """The state, as a document that stores its game, seed and results itself
    keeps it (:data:`COMPACT_VERSION`): cards one character each, and neither the
    players nor the options nor the seed nor the results, which
    :func:`state_from_compact` is given back.

    >>> from service.engine.rules import Game
    >>> from service.engine.state import State
    >>> state = State.new(Game(2), seed="cd" * 32)
    >>> data = state_to_compact(state)
    >>> sorted(data), len(data["round"]["hands"][0])
    (['round', 'totals', 'v', 'winners'], 3)
    >>> state_from_compact(data, state.game, state.seed, state.results.json()) == state
    True
    """
    return {
        "v": COMPACT_VERSION,
        "totals": list(state.totals),
        "round": round_to_dict(state.round, compact=True) if state.round else None,
        "winners": list(state.winners),
    }


def state_from_compact(data: dict[str, Any], game: Game, seed: str, results: bytes) -> State:
    """The state of :func:`state_to_compact`, with its game, seed and results' text."""
    if data.get("v") != COMPACT_VERSION:
        raise StateFormatError(f"unknown compact state format {data.get('v')!r}")
    return State(
        game=game,
        seed=seed,
        totals=list(data["totals"]),
        round=round_from_dict(data["round"], compact=True) if data["round"] else None,
        results=ResultLog.from_json(results),
        winners=list(data["winners"]),
    )


def game_for(players: int, options: Options) -> Game:
    """The rules of a stored table (built and validated once per distinct one)."""
    return _game(players, options)


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
