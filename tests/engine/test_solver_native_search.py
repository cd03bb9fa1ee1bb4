"""The C search (service/engine/_solver_native.c) against the Python one.

The C is a port of ``solver_python``'s search, state for state; the solver
uses it when it is built (``solver_switch`` decides).  These tests hold it to
giving the same Result -- value, melds in the same order, designated cards,
leftover wilds and room -- for any input, so the Python search stays the
reference and the fallback.  The rest of the solver's tests (worked examples,
brute-force reference, properties) run on whichever search is in use: the C
one wherever it could be built.
"""

from __future__ import annotations

import random
import shutil
import sysconfig
from array import array
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from service.engine import (
    Aces,
    Arrangement,
    Card,
    Draw,
    FaceCardPoints,
    Game,
    Meld,
    Options,
    Rank,
    Source,
    State,
    build_shoe,
    card_points,
    legal_moves,
    parse_cards,
    points_table,
)
from service.engine import solver_search as search
from service.engine import solver_switch as switch
from service.engine.solver import (
    best_arrangement,
    clear_memos,
    going_out_discards,
    going_out_melds,
)
from service.engine.solver_c import c_rules
from service.engine.solver_python import INF, Result

native = switch.EXTENSION
needs_native = pytest.mark.skipif(native is None, reason="the C extension is not built")


def _can_build() -> bool:
    include = sysconfig.get_paths().get("include")
    return shutil.which("cc") is not None and bool(include) and Path(include, "Python.h").exists()


@pytest.mark.skipif(not _can_build(), reason="no C compiler or Python headers here")
def test_the_extension_is_built_where_it_can_be() -> None:
    """`make install` builds it; a silent fall back to Python would cost every draw."""
    assert native is not None


def both(name: str, *args: object) -> tuple[Any, Any]:
    """What ``name`` (a function of ``solver_search``: "solve_free", "solve_one_each"...)
    answers in C and in Python."""
    fn = getattr(search, name)
    with pytest.MonkeyPatch.context() as mp:
        c = fn(*args)
        mp.setattr(switch, "EXTENSION", None)
        py = fn(*args)
    return c, py


def fields(res: Result) -> tuple[object, ...]:
    return (res.value, res.melds, res.designated, res.leftover, res.cap, res.wr_shift)


costs = st.lists(st.sampled_from([0, 1, 2, 5, 10, 15, INF]), min_size=53, max_size=53)
two_decks = st.lists(st.integers(0, 51), max_size=16).filter(
    lambda ids: all(ids.count(i) <= 2 for i in ids)
)


@needs_native
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ids=two_decks,
    wilds=st.integers(0, 8),
    pts=costs,
    wild_costs=st.lists(st.sampled_from([0, 15, 20, 50, INF]), min_size=8, max_size=8),
    allwild_ok=st.booleans(),
    high=st.booleans(),
)
def test_free_mode_agrees(
    ids: list[int],
    wilds: int,
    pts: list[int],
    wild_costs: list[int],
    allwild_ok: bool,
    high: bool,
) -> None:
    cheap = [0]
    for x in sorted(wild_costs[:wilds]):
        cheap.append(min(INF, cheap[-1] + x))
    c, py = both("solve_free", ids, wilds, pts, cheap, allwild_ok, high)
    assert fields(c) == fields(py)


@needs_native
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ids=two_decks,
    jokers=st.integers(0, 4),
    wild_rank=st.integers(0, 12),
    pts=costs,
    leaf=st.tuples(
        st.integers(0, 4),
        st.sampled_from([0, 20, INF]),
        st.integers(0, 3),
        st.sampled_from([0, 7, 15, INF]),
    ),
    high=st.booleans(),
)
def test_one_mode_agrees(
    ids: list[int],
    jokers: int,
    wild_rank: int,
    pts: list[int],
    leaf: tuple[int, int, int, int],
    high: bool,
) -> None:
    c, py = both("solve_one", ids, jokers, wild_rank * 4, pts, leaf, high)
    assert fields(c) == fields(py)


OPTION_SETS = [
    Options(aces=aces, face_card_points=face, jokers_per_deck=2, max_wilds_per_meld=mw)
    for aces in Aces
    for face in FaceCardPoints
    for mw in (None, 1)
]


def dealt_hands(count: int) -> Iterator[tuple[list[Card], Rank, Options]]:
    rng = random.Random(13)
    shoe = build_shoe(2, 2)
    for k in range(count):
        yield rng.sample(shoe, rng.randint(3, 16)), Rank(rng.randint(1, 13)), OPTION_SETS[k % 8]


@needs_native
def test_dealt_hands_arrange_the_same() -> None:
    """Whole arrangements of dealt hands, C and Python searches behind them."""
    for cards, wild, opts in dealt_hands(1500):
        clear_memos()
        a = best_arrangement(cards, wild, opts)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(switch, "EXTENSION", None)
            clear_memos()
            b = best_arrangement(cards, wild, opts)
        assert a == b
        assert a.points == sum(card_points(c, wild, opts) for c in a.deadwood)
    clear_memos()


PTS = [0] * 53


@needs_native
@pytest.mark.parametrize(
    "args",
    [
        ([52], 0, PTS, [0], False, False),  # a joker is a wild, never a natural id
        ([-1], 0, PTS, [0], False, False),
        ([0], 2, PTS, [0], False, False),  # cheap shorter than wilds + 1
        (["2C"], 0, PTS, [0], False, False),
        ([0] * 16, 0, PTS, [0], False, False),  # more copies than a nibble counts
        (list(range(33)), 0, PTS, [0], False, False),  # more cards than MAX_CARDS
        ([0], 0, [0] * 20, [0], False, False),  # a cost for every natural id
        ([0], 0, [-5] * 53, [0], False, False),  # costs are 0..INF
        ([0], 1, PTS, [0, INF + 1], False, False),
    ],
)
def test_bad_input_is_refused_free(args: tuple[object, ...]) -> None:
    assert native is not None
    with pytest.raises((ValueError, TypeError)):
        native.solve_free(*args)


@needs_native
@pytest.mark.parametrize(
    "args",
    [
        ([0], 0, 2, PTS, (0, 0, 0, 0), False),  # the wild rank's first id is a multiple of 4
        ([0], 0, 52, PTS, (0, 0, 0, 0), False),
        ([0], -1, 0, PTS, (0, 0, 0, 0), False),
        ([0], 0, 0, PTS, (0, 2**62, 0, 0), False),  # leaf costs are 0..INF
        ([0], 0, 0, PTS, (0, 0, -1, 0), False),
        ([0], 0, 0, PTS, (0, 0, 0), False),
        ([0], 0, 0, [1] * 53, "leaf", False),
    ],
)
def test_bad_input_is_refused_one(args: tuple[object, ...]) -> None:
    assert native is not None
    with pytest.raises((ValueError, TypeError)):
        native.solve_one(*args)


def test_inputs_over_the_c_limit_go_to_the_python() -> None:
    """Three decks' worth of clubs, 39 cards: the search in Python answers."""
    ids = [i for i in range(52) if i & 3 == 0] * 3
    assert native is None or len(ids) > native.MAX_CARDS
    res = search.solve_free(ids, 0, [1] * 53, [0], False, False)
    assert res.value == 0 and sorted(i for meld in res.melds for i in meld[0]) == sorted(ids)


@needs_native
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ids=two_decks.filter(bool),
    wilds=st.integers(0, 4),
    pts=costs,
    allwild_ok=st.booleans(),
    high=st.booleans(),
    data=st.data(),
)
def test_free_each_agrees_with_one_search_per_drop(
    ids: list[int], wilds: int, pts: list[int], allwild_ok: bool, high: bool, data: st.DataObject
) -> None:
    """One memo for every drop finds each search's own plan, in C and in Python."""
    drops = data.draw(st.lists(st.sampled_from(ids), max_size=8))
    cheap = [0] + [INF] * wilds
    c, py = both("solve_free_each", ids, wilds, pts, cheap, allwild_ok, high, drops)
    alone = []
    for d in drops:
        rest = list(ids)
        rest.remove(d)
        alone.append(search.solve_free(rest, wilds, pts, cheap, allwild_ok, high))
    assert [fields(r) for r in c] == [fields(r) for r in py] == [fields(r) for r in alone]


@needs_native
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ids=two_decks.filter(bool),
    jokers=st.integers(0, 3),
    wild_rank=st.integers(0, 12),
    pts=costs,
    high=st.booleans(),
    data=st.data(),
)
def test_one_each_agrees_with_one_search_per_drop(
    ids: list[int], jokers: int, wild_rank: int, pts: list[int], high: bool, data: st.DataObject
) -> None:
    naturals = [i for i in ids if i >> 2 != wild_rank]
    drops = data.draw(st.lists(st.sampled_from(naturals), max_size=8)) if naturals else []
    leaf = (jokers, INF, 0, INF)
    c, py = both("solve_one_each", ids, jokers, wild_rank * 4, pts, leaf, high, drops)
    alone = []
    for d in drops:
        rest = list(ids)
        rest.remove(d)
        alone.append(search.solve_one(rest, jokers, wild_rank * 4, pts, leaf, high))
    assert [fields(r) for r in c] == [fields(r) for r in py] == [fields(r) for r in alone]


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("solve_free_each", ([0, 4], 0, PTS, [0], False, False, [8])),  # not among the ids
        ("solve_free_each", ([0, 4], 0, PTS, [0], False, False, [52])),  # a joker is no natural id
        ("solve_one_each", ([0, 4, 8], 0, 4, PTS, (0, 0, 0, 0), False, [4])),  # of the wild rank
    ],
)
def test_drops_must_be_natural_ids_of_the_hand(name: str, args: tuple[object, ...]) -> None:
    """Both searches refuse the same drops (the C would otherwise search a
    multiset with a count below zero, the Python an int gone negative)."""
    with pytest.raises(ValueError):
        getattr(search, name)(*args)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(switch, "EXTENSION", None)
        with pytest.raises(ValueError):
            getattr(search, name)(*args)


# -- whole hands in C (arrange_free, go_out_free) ------------------------------
#
# In mode free without table melds, the C also prepares the hand and turns the
# plan into cards (solver_c.CRules).  These tests hold it to the Python's
# whole answers: the same melds (kinds and cards, in order), deadwood and
# points, the same going-out discards in the same order with the same melds.

FREE_OPTIONS = [
    Options(
        aces=aces,
        face_card_points=face,
        unused_wild_points=uwp,
        jokers_per_deck=2,
        all_wild_melds=aw,
    )
    for aces in Aces
    for face in FaceCardPoints
    for uwp in (None, 15)
    for aw in (False, True)
]

WAYS = ("c", "python assembly", "python")


def three_ways(fn: Any, *args: Any) -> list[Any]:
    """``fn(*args)``: all in C; the Python assembling the C search's plans; all
    in Python -- with cold memos each time."""
    out = []
    for way in WAYS:
        with pytest.MonkeyPatch.context() as mp:
            if way != "c":
                mp.setattr(switch, "WHOLE_HANDS", False)
            if way == "python":
                mp.setattr(switch, "EXTENSION", None)
            clear_memos()
            out.append(fn(*args))
    clear_memos()
    return out


def shape(a: Arrangement) -> tuple[object, ...]:
    """An arrangement spelled out, so that a difference shows in the message."""
    melds = [(m.kind.value, [c.code for c in m.cards]) for m in a.melds]
    layoffs = [(lo.target, [c.code for c in lo.cards]) for lo in a.layoffs]
    return melds, [c.code for c in a.deadwood], a.points, layoffs


def go_out_shape(found: list[tuple[Card, tuple[Meld, ...]]]) -> list[object]:
    return [(c.code, [(m.kind.value, [x.code for x in m.cards]) for m in ms]) for c, ms in found]


def check_hand(cards: list[Card], wild: Rank, opts: Options, more: Sequence[Card] = ()) -> None:
    """Every C answer about ``cards`` against the two others: the arrangement,
    the melds of going out, and the going-out discards of every card, of the
    cards a floor lets through (as legal_moves asks) and of ``more``."""
    assert native is None or c_rules(wild, opts, len(cards)) is not None
    arranged = three_ways(best_arrangement, cards, wild, opts)
    assert [shape(a) for a in arranged[1:]] == [shape(arranged[0])] * 2
    assert arranged[1] == arranged[2] == arranged[0]
    melded = three_ways(going_out_melds, cards, wild, opts)
    assert melded[1] == melded[2] == melded[0]
    pts = points_table(wild, opts)
    floor = arranged[0].points
    unique = [Card.from_id(i) for i in sorted({c.id for c in cards})]
    for candidates in (cards, [c for c in unique if pts[c.id] >= floor], more):
        found = three_ways(going_out_discards, cards, wild, opts, candidates)
        assert [go_out_shape(f) for f in found[1:]] == [go_out_shape(found[0])] * 2
        assert found[1] == found[2] == found[0]


SIZES = list(range(17)) + [12, 13, 14, 15, 16] * 3
"""Hand sizes, drawn evenly (not smallest first), those of the game's last rounds more often."""


@st.composite
def free_hands(draw: st.DrawFn) -> tuple[list[Card], Rank, Options, list[Card]]:
    """A hand of 0..16 cards from 1..3 decks with 0..2 jokers a deck, any wild rank
    and scoring; often from a few ranks only (wild-rank cards and jokers kept),
    so that melds, wilds and duplicates abound; and a list of candidates (any
    of its cards, some twice)."""
    decks, jokers = draw(st.integers(1, 3)), draw(st.integers(0, 2))
    wild = Rank(draw(st.integers(1, 13)))
    shoe = build_shoe(decks, jokers)
    if draw(st.booleans()):
        ranks = draw(st.sets(st.sampled_from(list(Rank)), min_size=2, max_size=5))
        shoe = [c for c in shoe if c.is_joker or c.rank == wild or c.rank in ranks]
    size = min(len(shoe), draw(st.sampled_from(SIZES)))
    picks = st.lists(st.integers(0, len(shoe) - 1), min_size=size, max_size=size, unique=True)
    cards = sorted(shoe[i] for i in draw(picks))
    opts = Options(
        aces=draw(st.sampled_from(list(Aces))),
        face_card_points=draw(st.sampled_from(list(FaceCardPoints))),
        # 20 (a joker's points) and 25 put wild-rank cards level with or after jokers
        unused_wild_points=draw(st.sampled_from([None, 0, 15, 20, 25])),
        jokers_per_deck=jokers,
        all_wild_melds=draw(st.booleans()),
    )
    more = draw(st.lists(st.sampled_from(cards), max_size=6)) if cards else []
    return cards, wild, opts, more


@needs_native
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(free_hands())
def test_whole_hands_agree(hand: tuple[list[Card], Rank, Options, list[Card]]) -> None:
    cards, wild, opts, more = hand
    check_hand(cards, wild, opts, more)
    wilds = sum(c.is_joker or c.rank == wild for c in cards)
    event(f"{len(cards) // 5 * 5}+ cards, {min(wilds, 4)}{'+' if wilds >= 4 else ''} wilds")


@needs_native
@pytest.mark.parametrize(
    "text",
    [
        "KC JK JK JK",  # KC the only wild-rank card: without it, no group of wilds alone
        "KC JK JK JK JK",
        "KC KD JK JK JK",
        "KC JK JK JK 4H 5H 6H",  # (the run takes the jokers: the rule does not count)
        "KC JK JK JK 4H 5H 6H 9S 9D",
        "KC KD JK JK JK 4H 5H 6H",
        "KC JK JK 4H 5H 6H",  # two wilds left: the all-wild rule cannot count
        "KC 4H 6H 8S 8D",  # one wild, then none: a card without a partner
        "JK 4H 6H 9C 9D",
        "KC KC KD JK 3S 4S 5S 5D",  # duplicates of a wild-rank card
        "AS 2S QS KS KH JK",  # aces high or low
    ],
)
@pytest.mark.parametrize("opts", FREE_OPTIONS[::3])
def test_wild_drops_agree(text: str, opts: Options) -> None:
    """Wild candidates, which go_out_free searches in the memo of the natural
    ones (or in one of their own when dropping the only wild-rank card turns
    the all-wild rule off): every card a candidate, kings wild."""
    cards = parse_cards(text)
    check_hand(cards, Rank.KING, opts, cards[:3] + cards[:1])


@needs_native
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(free_hands())
def test_go_out_free_agrees_with_a_search_per_candidate(
    hand: tuple[list[Card], Rank, Options, list[Card]],
) -> None:
    """One memo for every candidate, wild ones included, finds each search's own
    plan: go_out_free against arrange_free(hand less the candidate, must_meld)."""
    cards, wild, opts, more = hand
    free = c_rules(wild, opts, len(cards))
    assert free is not None and native is not None
    ids = [c.id for c in cards]
    candidates = [c.id for c in cards] + [c.id for c in more]
    alone = []
    for c in candidates:
        rest = list(ids)
        rest.remove(c)
        found = native.arrange_free(rest, *free.args, True)
        alone.append(None if found is None else found[0])
    assert native.go_out_free(ids, *free.args, candidates) == alone


def dealt_positions(count: int) -> Iterator[tuple[State, int]]:
    """States of real games just after a draw: a round dealt by the engine (any
    round, 2 to 8 players, so 1 to 3 decks), its first player's stock draw."""
    rng = random.Random(31)
    for k in range(count):
        opts = FREE_OPTIONS[k % len(FREE_OPTIONS)]
        game = Game(rng.choice([2, 2, 3, 4, 5, 8]), opts)
        state = State.new(game, f"{k:064x}")
        index = rng.choice([len(game.rounds) - 1, rng.randrange(len(game.rounds))])
        state.deal(index, rng.randrange(game.num_players))
        assert state.round is not None
        seat = state.round.turn
        state.apply(seat, Draw(Source.STOCK))
        yield state, seat


@needs_native
def test_dealt_hands_agree() -> None:
    """A few hundred hands of real deals (13 cards at the last round, 14 after
    the draw), and the legal moves of the drawing player, in all three ways."""
    hands = go_outs = 0
    for state, seat in dealt_positions(300):
        assert state.round is not None
        wild, opts = state.spec.wild_rank, state.game.options
        for s, hand in enumerate(state.round.hands):
            if s == seat or s == (seat + 1) % state.game.num_players:
                check_hand(list(hand), wild, opts)
                hands += 1
        moves = three_ways(legal_moves, state, seat)
        assert moves[1] == moves[2] == moves[0]
        floor = best_arrangement(state.round.hands[seat], wild, opts).points
        with_floor = three_ways(partial(legal_moves, floor=floor), state, seat)
        assert with_floor == [moves[0]] * 3
        go_outs += sum(m.type == "go_out" for m in moves[0])
    assert hands == 600 and go_outs >= 30


@needs_native
@pytest.mark.parametrize("text", ["4H" + " JK" * 13, "4H 5H" + " JK" * 12, "4H 9C" + " JK" * 9])
def test_more_jokers_than_decks_hold(text: str) -> None:
    """Past what a shoe holds (six jokers), where the room for spare wilds runs
    out (a set of one natural card takes ten), the C still answers as the Python."""
    for opts in FREE_OPTIONS[:2]:
        check_hand(parse_cards(text), Rank.KING, opts)


def test_what_the_c_does_not_do_goes_to_the_python() -> None:
    """Mode one, more cards than the C takes, no extension: c_rules says no."""
    if native is not None:
        assert c_rules(Rank.SEVEN, Options(), native.MAX_CARDS) is not None
        assert c_rules(Rank.SEVEN, Options(), native.MAX_CARDS + 1) is None
    assert c_rules(Rank.SEVEN, Options(max_wilds_per_meld=1), 14) is None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(switch, "EXTENSION", None)
        assert c_rules(Rank.SEVEN, Options(), 14) is None


def test_the_rules_of_equal_options_are_kept_apart() -> None:
    """Looked up by the options object itself: equal options get rules of their
    own, and wild ranks theirs (no answer is taken for another's)."""
    if native is None:
        return
    a, b = Options(), Options()
    ra, rb = c_rules(Rank.SEVEN, a, 7), c_rules(Rank.SEVEN, b, 7)
    assert ra is not None and rb is not None and ra is not rb
    assert ra.args == rb.args
    assert c_rules(Rank.SEVEN, a, 7) is ra
    rk = c_rules(Rank.KING, a, 7)
    assert rk is not None and rk.args[1] == 48 and ra.args[1] == 24


POINTS = array("q", [1] * 53).tobytes()


@needs_native
@pytest.mark.parametrize(
    "args",
    [
        ([53], POINTS, 24, False, False, False),  # ids 0..52, the joker 52
        ([-1], POINTS, 24, False, False, False),
        (["2C"], POINTS, 24, False, False, False),
        (list(range(33)), POINTS, 24, False, False, False),  # more cards than MAX_CARDS
        ([0] * 16, POINTS, 24, False, False, False),  # more copies than a nibble counts
        (7, POINTS, 24, False, False, False),
        ([0], [1] * 53, 24, False, False, False),  # points: bytes
        ([0], POINTS[:-8], 24, False, False, False),  # 53 of them
        ([0], POINTS + POINTS[:8], 24, False, False, False),
        ([0], array("q", [-1] * 53).tobytes(), 24, False, False, False),  # 0..INF
        ([0], array("q", [INF + 1] * 53).tobytes(), 24, False, False, False),
        ([0], POINTS, 25, False, False, False),  # the wild rank's first id: 0, 4 .. 48
        ([0], POINTS, 52, False, False, False),
        ([0], POINTS, -4, False, False, False),
        ([0], POINTS, 24, False, False),  # must_meld is no option
    ],
)
def test_bad_input_is_refused_arrange(args: tuple[object, ...]) -> None:
    assert native is not None
    with pytest.raises((ValueError, TypeError)):
        native.arrange_free(*args)
    if len(args) == 6:  # the same hand and rules, to go_out_free
        with pytest.raises((ValueError, TypeError)):
            native.go_out_free(*args[:5], [0])


@needs_native
@pytest.mark.parametrize(
    "candidates",
    [
        [8],  # not in the hand
        [0, 8],
        [25],  # a wild-rank card the hand does not hold (sevens wild: 24..27)
        [52],  # no joker in the hand
        [53],
        [-1],
        ["AC"],
        [0.0],
        None,
    ],
)
def test_bad_candidates_are_refused(candidates: object) -> None:
    """go_out_free refuses what _going_out_discards refuses: candidates must be
    cards of the hand (all checked before any search)."""
    assert native is not None
    hand = [0, 0, 4, 24]  # AC AC 2C 7C
    with pytest.raises((ValueError, TypeError)):
        native.go_out_free(hand, POINTS, 24, False, False, candidates)
    cards = [Card.from_id(i) for i in hand]
    if isinstance(candidates, list) and all(
        isinstance(i, int) and 0 <= i <= 52 for i in candidates
    ):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(switch, "EXTENSION", None)
            with pytest.raises(ValueError):
                going_out_discards(
                    cards, Rank.SEVEN, Options(), list(map(Card.from_id, candidates))
                )


@needs_native
def test_go_out_free_answers_every_candidate_in_order() -> None:
    """One answer a candidate, duplicates included; no candidate, no answer."""
    assert native is not None
    pts = array("q", points_table(Rank.KING, Options())).tobytes()
    hand = [c.id for c in parse_cards("4H 5H 6H 7H 9C 9D 9S")]
    four, seven, nine = (Card.parse(x).id for x in ("4H", "7H", "9C"))
    found = native.go_out_free(hand, pts, 48, False, False, [nine, four, seven, four])
    assert found[0] is None
    assert found[1] == ((18, 22, 26), (32, 33, 35))  # 5H 6H 7H, 9C 9D 9S
    assert found[2] == ((14, 18, 22), (32, 33, 35)) and found[3] == found[1]
    assert native.go_out_free(hand, pts, 48, False, False, []) == []
