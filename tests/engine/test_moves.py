"""Moves (JSON form and text notation), options, the table and schedule rules,
card points, and the state codec's format version."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine import (
    CLASSIC,
    OPTION_SPECS,
    PRESETS,
    STATE_FORMAT,
    Aces,
    Card,
    Discard,
    Draw,
    FaceCardPoints,
    Game,
    GoOut,
    Move,
    Options,
    Rank,
    Source,
    State,
    build_shoe,
    card_points,
    errors,
    legal_moves,
    preset,
    state_from_compact,
    state_to_compact,
)
from service.engine.moves import MAX_MELD_CARDS, MAX_MELDS

ALL_CARDS = [Card.from_id(i) for i in range(53)]

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


# -- moves -----------------------------------------------------------------------


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


# -- options -----------------------------------------------------------------------

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


def test_every_option_is_tested() -> None:
    assert set(GOOD_VALUES) == set(OPTION_SPECS) == set(BAD_VALUES)
    assert set(OPTION_SPECS) == set(CLASSIC.to_dict())


@pytest.mark.parametrize(
    ("name", "value"), [(n, v) for n, values in GOOD_VALUES.items() for v in values]
)
def test_options_accept_allowed_values(name: str, value: Any) -> None:
    options = Options.from_dict({name: value})
    assert options.to_dict()[name] == value
    assert Options.from_dict(options.to_dict()) == options
    rest = {k: v for k, v in options.to_dict().items() if k != name}
    assert rest == {k: v for k, v in CLASSIC.to_dict().items() if k != name}


@pytest.mark.parametrize(
    ("name", "value"), [(n, v) for n, values in BAD_VALUES.items() for v in values]
)
def test_options_reject_bad_values(name: str, value: Any) -> None:
    with pytest.raises(errors.InvalidOptionError) as info:
        Options.from_dict({name: value})
    assert info.value.field == name and name in info.value.message
    assert info.value.code == "INVALID_OPTION"
    assert isinstance(info.value, errors.MalformedError)


@pytest.mark.parametrize("name", ["acess", "Aces", "decks ", "jokers", "", "preset", "seed"])
def test_options_reject_unknown_names(name: str) -> None:
    with pytest.raises(errors.InvalidOptionError) as info:
        Options.from_dict({"aces": "low", name: 1})
    assert info.value.field == name


@pytest.mark.parametrize("data", [None, [], "classic", 1, [("aces", "low")]])
def test_options_must_be_an_object(data: Any) -> None:
    with pytest.raises(errors.InvalidOptionError) as info:
        Options.from_dict(data)
    assert info.value.field == "options"


def test_options_base_and_presets() -> None:
    assert Options.from_dict({}) == CLASSIC == Options()
    finnish = preset("finnish")
    assert finnish.max_wilds_per_meld == 1 and finnish.unused_wild_points == 15
    party = preset("party")
    assert party.jokers_per_deck > 0 and party.lay_off and party.double_face_rounds
    assert Options.from_dict({"lay_off": False}, base=party).jokers_per_deck == 2
    assert set(PRESETS) >= {"classic", "finnish", "party"}
    for bad in ("Classic", "nope", None):
        with pytest.raises(errors.InvalidOptionError) as info:
            preset(bad)  # type: ignore[arg-type]
        assert info.value.field == "ruleset"


# -- table: players and decks -------------------------------------------------------------


@pytest.mark.parametrize("n", [-1, 0, 1, 9, 10, 100])
def test_game_rejects_player_counts_outside_2_to_8(n: int) -> None:
    with pytest.raises(errors.InvalidOptionError) as info:
        Game(n)
    assert info.value.field == "players"


@pytest.mark.parametrize("n", range(2, 9))
@pytest.mark.parametrize("extra", [0, 1, 2])
def test_deck_formula(n: int, extra: int) -> None:
    largest = 13 + extra
    expected = 1 if n == 2 else max(2, math.ceil(n * (largest + 2) / 52))
    game = Game(n, Options(extra_rounds=extra))
    assert game.decks == expected
    assert max(s.hand_size for s in game.rounds) == largest
    # the largest deal leaves a discard and a stock
    assert 52 * game.decks - n * largest >= 2
    for decks in range(1, expected):
        with pytest.raises(errors.InvalidOptionError) as info:
            Game(n, Options(extra_rounds=extra, decks=decks))
        assert info.value.field == "decks"
    for decks in (expected, expected + 1, 12):
        assert Game(n, Options(extra_rounds=extra, decks=decks)).decks == decks


def test_deck_formula_examples() -> None:
    assert [Game(n).decks for n in range(2, 9)] == [1, 2, 2, 2, 2, 3, 3]
    assert Game(7, Options(extra_rounds=2)).decks == 3
    with pytest.raises(errors.InvalidOptionError):
        Game(3, Options.from_dict({"decks": 1}))
    assert len(build_shoe(2, 2)) == 108 and len(build_shoe(3, 0)) == 156


# -- round schedules -------------------------------------------------------------------------


def _schedule(game: Game) -> list[tuple[int, int, Rank]]:
    return [(s.number, s.hand_size, s.wild_rank) for s in game.rounds]


def test_classic_schedule() -> None:
    expected = [(k, k + 2, Rank(k + 2)) for k in range(1, 12)]
    assert _schedule(Game(2)) == expected
    assert [s.wild_rank for s in Game(2).rounds][-3:] == [Rank.JACK, Rank.QUEEN, Rank.KING]


def test_extra_rounds_schedules() -> None:
    one = Game(3, Options(extra_rounds=1)).rounds
    assert len(one) == 12 and (one[-1].hand_size, one[-1].wild_rank) == (14, Rank.ACE)
    two = Game(3, Options(extra_rounds=2)).rounds
    assert len(two) == 13
    assert [(s.hand_size, s.wild_rank) for s in two[-2:]] == [(14, Rank.ACE), (15, Rank.TWO)]


def test_up_down_schedules() -> None:
    rounds = Game(4, Options.from_dict({"round_order": "up_down"})).rounds
    sizes = [s.hand_size for s in rounds]
    assert len(rounds) == 22
    assert sizes == list(range(3, 14)) + list(range(13, 2, -1))
    assert [s.number for s in rounds] == list(range(1, 23))
    both = Game(4, Options.from_dict({"round_order": "up_down", "extra_rounds": 2})).rounds
    assert len(both) == 26
    assert [s.hand_size for s in both] == list(range(3, 16)) + list(range(15, 2, -1))
    for spec in list(rounds) + list(both):
        wild = {14: Rank.ACE, 15: Rank.TWO}.get(spec.hand_size, Rank(min(spec.hand_size, 13)))
        assert spec.wild_rank == wild


# -- card points --------------------------------------------------------------------------------


def _expected_points(card: Card, wild: Rank, o: Options) -> int:
    if card.is_joker:
        return 20
    rank = card.rank
    assert rank is not None
    if o.unused_wild_points is not None and rank == wild:
        return 15
    if rank == Rank.ACE:
        return 15 if o.aces is Aces.HIGH_OR_LOW else 1
    if rank >= Rank.JACK:
        return (
            {Rank.JACK: 11, Rank.QUEEN: 12, Rank.KING: 13}[rank]
            if (o.face_card_points is FaceCardPoints.RANK)
            else 10
        )
    return int(rank)


def test_card_points_classic_table() -> None:
    expected = {"A": 1, "J": 10, "Q": 10, "K": 10} | {str(v): v for v in range(2, 11)}
    for card in ALL_CARDS:
        want = 20 if card.is_joker else expected[card.code[:-1]]
        for wild in Rank:  # an unused wild scores its face value by default
            assert card_points(card, wild, CLASSIC) == want, (card, wild)


@pytest.mark.parametrize("aces", list(Aces))
@pytest.mark.parametrize("faces", list(FaceCardPoints))
@pytest.mark.parametrize("unused", [None, 15])
def test_card_points_options(aces: Aces, faces: FaceCardPoints, unused: int | None) -> None:
    o = Options(aces=aces, face_card_points=faces, unused_wild_points=unused, jokers_per_deck=1)
    for wild in Rank:
        for card in ALL_CARDS:
            assert card_points(card, wild, o) == _expected_points(card, wild, o), (card, wild)


def test_card_points_examples() -> None:
    rank = Options(face_card_points=FaceCardPoints.RANK)
    assert [card_points(Card.parse(c), Rank.SEVEN, rank) for c in ("JH", "QH", "KH")] == [
        11,
        12,
        13,
    ]
    assert card_points(Card.parse("AS"), Rank.SEVEN, Options(aces=Aces.HIGH_OR_LOW)) == 15
    assert card_points(Card.parse("7C"), Rank.SEVEN, Options(unused_wild_points=15)) == 15
    assert card_points(Card.parse("JK"), Rank.SEVEN, Options(unused_wild_points=15)) == 20


# -- codec -----------------------------------------------------------------------------------------


def _midgame() -> State:
    state = State.new(Game(3, Options(jokers_per_deck=1, false_go_out_penalty=20)), "c3" * 32)
    for _ in range(7):
        rnd = state.round
        assert rnd is not None
        state.apply(rnd.turn, legal_moves(state, rnd.turn)[0])
    return state


@pytest.mark.parametrize("version", [None, 0, 1, 2, STATE_FORMAT + 1, "3", 3.0, [3]])
def test_codec_rejects_unknown_format_version(version: Any) -> None:
    state = _midgame()
    data = state_to_compact(state)
    if version is None:
        del data["v"]
    else:
        data["v"] = version
    with pytest.raises(errors.StateFormatError) as info:
        state_from_compact(data, state.game, state.seed, state.results.json())
    assert info.value.code == "STATE_FORMAT"


def test_codec_keeps_the_results_of_finished_rounds() -> None:
    """The results, stored apart as their JSON text, come back whole."""
    state = State.new(Game(2, Options(max_turns_per_round=4)), "c4" * 32)
    while len(state.results) < 2:  # each round ends after 4 turns
        rnd = state.round
        assert rnd is not None
        state.apply(rnd.turn, legal_moves(state, rnd.turn)[0])
    data = state_to_compact(state)
    results = state.results.json()
    assert len(json.loads(results)) == 2 and "results" not in data
    restored = state_from_compact(data, state.game, state.seed, results)
    assert restored == state and len(restored.results) == len(state.results)
    assert state_to_compact(restored) == data and restored.results.json() == results


def test_codec_round_trip_is_json_and_exact() -> None:
    state = _midgame()
    data = state_to_compact(state)
    assert data["v"] == STATE_FORMAT
    text = json.dumps(data)
    restored = state_from_compact(json.loads(text), state.game, state.seed, state.results.json())
    assert restored == state
    assert state_to_compact(restored) == data
    rnd = restored.round
    assert rnd is not None
    seat = rnd.turn
    assert legal_moves(restored, seat) == legal_moves(state, seat)
