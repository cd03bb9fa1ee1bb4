"""Moves: their JSON form and text notation, round trips and malformed input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine import Card, Discard, Draw, GoOut, Move, Source, errors
from service.engine.moves import MAX_MELD_CARDS, MAX_MELDS
from tests.engine.all_cards import ALL_CARDS

cards_st = st.sampled_from(ALL_CARDS)
melds_st = st.lists(
    st.lists(cards_st, min_size=1, max_size=MAX_MELD_CARDS).map(tuple),
    min_size=1,
    max_size=MAX_MELDS,
).map(tuple)
moves_st = st.one_of(
    st.sampled_from(list(Source)).map(Draw),
    cards_st.map(Discard),
    st.builds(GoOut, cards_st, st.none() | melds_st),
)


@settings(max_examples=300, deadline=None)
@given(moves_st)
def test_move_round_trips(move: Move) -> None:
    data = move.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["type"] == move.type
    assert Move.from_dict(data) == move
    text = str(move)
    assert Move.parse(text) == move
    assert str(Move.parse(text)) == text
    # input may be lower case and use T for ten; output stays canonical
    sloppy = text.lower().replace("10", "t")
    assert Move.parse(sloppy) == move and str(Move.parse(sloppy)) == text


def test_move_examples() -> None:
    assert Move.parse("draw stock") == Draw(Source.STOCK)
    assert Move.parse("DRAW Discard") == Draw(Source.DISCARD)
    assert Move.from_dict({"type": "discard", "card": "th"}) == Discard(Card.parse("10H"))
    move = Move.parse("go_out KD 4H-5H-6H 9C-9D-7S")
    assert move.to_dict() == {
        "type": "go_out",
        "discard": "KD",
        "melds": [["4H", "5H", "6H"], ["9C", "9D", "7S"]],
    }
    assert Move.parse("go_out kd") == GoOut(Card.parse("KD"))
    assert "melds" not in GoOut(Card.parse("KD")).to_dict()
    # an empty melds list is kept apart from "no melds given" in the JSON form
    empty = GoOut(Card.parse("KD"), ())
    assert Move.from_dict(empty.to_dict()) == empty != GoOut(Card.parse("KD"))


MALFORMED_DICTS: list[tuple[Any, str]] = [
    ({"type": "pass"}, "type"),
    ({}, "type"),
    ({"type": 5}, "type"),
    ({"type": None}, "type"),
    ({"type": ["draw"]}, "type"),
    ("draw stock", "type"),
    (["draw", "stock"], "type"),
    ({"type": "draw", "source": "stock", "card": "7H"}, "card"),
    ({"type": "draw", "source": "stock", "extra": 1}, "extra"),
    ({"type": "discard", "card": "7H", "source": "stock"}, "source"),
    ({"type": "go_out", "discard": "7H", "card": "7H"}, "card"),
    ({"type": "draw", "source": "deck"}, "source"),
    ({"type": "draw"}, "source"),
    ({"type": "draw", "source": ["stock"]}, "source"),
    ({"type": "draw", "source": None}, "source"),
    ({"type": "discard", "card": "1S"}, "card"),
    ({"type": "discard", "card": "7X"}, "card"),
    ({"type": "discard", "card": ""}, "card"),
    ({"type": "discard", "card": 7}, "card"),
    ({"type": "discard", "card": ["7H"]}, "card"),
    ({"type": "discard"}, "card"),
    ({"type": "go_out", "discard": "ZZ"}, "discard"),
    ({"type": "go_out"}, "discard"),
    ({"type": "go_out", "discard": 10}, "discard"),
    ({"type": "go_out", "discard": "KD", "melds": "4H 5H 6H"}, "melds"),
    ({"type": "go_out", "discard": "KD", "melds": {"a": ["4H"]}}, "melds"),
    ({"type": "go_out", "discard": "KD", "melds": [["4H"], "5H"]}, "melds"),
    ({"type": "go_out", "discard": "KD", "melds": ["4H 5H 6H"]}, "melds"),
    ({"type": "go_out", "discard": "KD", "melds": [[]]}, "melds"),
    ({"type": "go_out", "discard": "KD", "melds": [["4H", "XX", "6H"]]}, "melds"),
    ({"type": "go_out", "discard": "KD", "melds": [[4, 5, 6]]}, "melds"),
    ({"type": "go_out", "discard": "KD", "melds": [["4H"]] * (MAX_MELDS + 1)}, "melds"),
    ({"type": "go_out", "discard": "KD", "melds": [["4H"] * (MAX_MELD_CARDS + 1)]}, "melds"),
]


@pytest.mark.parametrize(("data", "field"), MALFORMED_DICTS)
def test_malformed_move_dicts_name_the_field(data: Any, field: str) -> None:
    with pytest.raises(errors.MalformedError) as info:
        Move.from_dict(data)
    assert info.value.field == field
    assert info.value.code == "MALFORMED"
    assert not isinstance(info.value, errors.IllegalMoveError)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("", "type"),
        ("   ", "type"),
        ("jump", "type"),
        ("draw", "type"),
        ("draw stock now", "type"),
        ("discard", "type"),
        ("discard 7H 8H", "type"),
        ("go_out", "type"),
        ("draw deck", "source"),
        ("discard 1H", "card"),
        ("go_out QQ", "discard"),
        ("go_out KD 4H-5H-1H", "melds"),
        ("go_out KD 4H--5H", "melds"),
    ],
)
def test_malformed_move_text(text: str, field: str) -> None:
    with pytest.raises(errors.MalformedError) as info:
        Move.parse(text)
    assert info.value.field == field
