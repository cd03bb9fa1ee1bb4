"""The values each rule option takes and those it refuses (tests/engine/test_options.py
holds the engine to both; self-play draws its games' options from the first)."""

from __future__ import annotations

from typing import Any

GOOD_VALUES: dict[str, list[Any]] = {
    "aces": ["low", "high_or_low"],
    "face_card_points": ["ten", "rank"],
    "unused_wild_points": [None, 15],
    "jokers_per_deck": [0, 1, 2],
    "max_wilds_per_meld": [None, 1],
    "all_wild_melds": [False, True],
    "extra_rounds": [0, 1, 2],
    "round_order": ["up", "up_down"],
    "double_face_rounds": [False, True],
    "lay_off": [False, True],
    "false_go_out_penalty": [None, 20],
    "decks": [None, 1, 2, 12],
    "max_turns_per_round": [None, 1, 50, 10_000],
}

BAD_VALUES: dict[str, list[Any]] = {
    "aces": ["high", "LOW", None, 1, True, ["low"], {}],
    "face_card_points": ["eleven", "Rank", None, 10, False],
    "unused_wild_points": [10, 0, 20, "15", True, 15.0, [15]],
    "jokers_per_deck": [3, -1, None, "1", True, 1.0, 4],
    "max_wilds_per_meld": [0, 2, "1", True, 1.5],
    "all_wild_melds": ["true", 1, 0, None, "yes"],
    "extra_rounds": [3, -1, None, True, "2", 1.0],
    "round_order": ["down", "UP", None, 1, True],
    "double_face_rounds": [1, "yes", None, "false"],
    "lay_off": [0, None, "true"],
    "false_go_out_penalty": [10, 0, 21, True, "20", 20.0],
    "decks": [0, 13, -1, "2", True, 2.0, [2]],
    "max_turns_per_round": [0, -5, 10_001, 1.5, "10", True, False],
}
