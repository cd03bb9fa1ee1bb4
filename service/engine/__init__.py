"""The Three Thirteen engine: cards, rules, moves, the game state and its
transitions, the hand solver, views and the stored form of a state.  No
Flask, no Redis: plain Python (the hand solver's search also in C, where built).

Its public names are gathered here for scripts and notebooks (the other
layers import each name from the module that defines it)::

    from service.engine import Game, Move, Options, State, legal_moves

    state = State.new(Game(2, Options()), seed)
    events = state.apply(seat, Move.parse("draw stock"))

:class:`State` is mutable, like python-chess's ``Board``; a move it refuses
raises an :class:`EngineError` (:mod:`service.engine.errors`) and changes
nothing.  The modules behind these names hold one idea each; the
``solver`` subpackage holds the hand solver, its face ``service.engine.solver``.
"""

from __future__ import annotations

from service.engine.cards import JOKER, JOKER_ID, Card, Rank, Suit, build_shoe, parse_cards
from service.engine.codec import (
    STATE_FORMAT,
    chars_of_ids,
    game_for,
    ids_of_chars,
    options_from_dict,
    state_from_compact,
    state_to_compact,
)
from service.engine.errors import (
    CardNotInHandError,
    DiscardForbiddenError,
    EngineError,
    GameNotInProgressError,
    GoOutForbiddenError,
    IllegalMoveError,
    InvalidMeldsError,
    InvalidOptionError,
    MalformedError,
    NotYourTurnError,
    SearchTooLargeError,
    StateConflictError,
    StateFormatError,
    StockUnavailableError,
    WrongPhaseError,
)
from service.engine.game_events import Event, HandResult, ResultLog, RoundResult
from service.engine.melds import Arrangement, LayOff, Meld, MeldKind, classify_meld, extend_meld
from service.engine.moves import Discard, Draw, GoOut, Move, Source
from service.engine.options import (
    CLASSIC,
    MAX_DECKS,
    OPTION_SPECS,
    PRESET_DESCRIPTIONS,
    PRESETS,
    Aces,
    FaceCardPoints,
    Options,
    RoundOrder,
    preset,
)
from service.engine.rounds import Phase, Round
from service.engine.rules import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    Game,
    RoundSpec,
    card_points,
    points_table,
)
from service.engine.shuffle import Shuffler, commitment, new_seed, seed_from_client
from service.engine.solver import (
    best_arrangement,
    bounded_arrangement,
    going_out_discards,
    going_out_melds,
)
from service.engine.state import State, Status, legal_moves
from service.engine.view import (
    ArrangementKey,
    arrangement_after_discard,
    arrangement_key,
    empty_seat_part,
    hand_arrangement,
    observe,
    seat_part,
)

__all__ = [
    # cards
    "JOKER",
    "JOKER_ID",
    "Card",
    "Rank",
    "Suit",
    "build_shoe",
    "parse_cards",
    # options and rules
    "CLASSIC",
    "MAX_DECKS",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "OPTION_SPECS",
    "PRESETS",
    "PRESET_DESCRIPTIONS",
    "Aces",
    "FaceCardPoints",
    "Game",
    "Options",
    "RoundOrder",
    "RoundSpec",
    "card_points",
    "points_table",
    "preset",
    # moves, melds, the state and what it records
    "Arrangement",
    "Discard",
    "Draw",
    "Event",
    "GoOut",
    "HandResult",
    "LayOff",
    "Meld",
    "MeldKind",
    "Move",
    "Phase",
    "ResultLog",
    "Round",
    "RoundResult",
    "Source",
    "State",
    "Status",
    "classify_meld",
    "extend_meld",
    "legal_moves",
    # the solver
    "best_arrangement",
    "bounded_arrangement",
    "going_out_discards",
    "going_out_melds",
    # views
    "ArrangementKey",
    "arrangement_after_discard",
    "arrangement_key",
    "empty_seat_part",
    "hand_arrangement",
    "observe",
    "seat_part",
    # the stored form, the shuffle
    "STATE_FORMAT",
    "Shuffler",
    "chars_of_ids",
    "commitment",
    "game_for",
    "ids_of_chars",
    "new_seed",
    "seed_from_client",
    "options_from_dict",
    "state_from_compact",
    "state_to_compact",
    # errors
    "CardNotInHandError",
    "DiscardForbiddenError",
    "EngineError",
    "GameNotInProgressError",
    "GoOutForbiddenError",
    "IllegalMoveError",
    "InvalidMeldsError",
    "InvalidOptionError",
    "MalformedError",
    "NotYourTurnError",
    "SearchTooLargeError",
    "StateConflictError",
    "StateFormatError",
    "StockUnavailableError",
    "WrongPhaseError",
]
