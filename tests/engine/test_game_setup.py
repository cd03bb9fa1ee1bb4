"""A game's table and schedule: 2 to 8 players, the number of decks, and the rounds
(classic, extra rounds, up and down) with their hand sizes and wild ranks."""

from __future__ import annotations

import math

import pytest

from service.engine import Game, Options, Rank, build_shoe, errors

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
