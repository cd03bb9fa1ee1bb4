"""Card points under every scoring option, against a table written out."""

from __future__ import annotations

import pytest

from service.engine import CLASSIC, Aces, Card, FaceCardPoints, Options, Rank, card_points
from tests.engine.all_cards import ALL_CARDS


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
