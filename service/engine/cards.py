"""Cards, ranks and suits, and the one card notation used everywhere.

A card code is a rank (``A 2 3 4 5 6 7 8 9 10 J Q K``) followed by a suit
(``C D H S``); the joker is ``JK``.  Input also accepts lower case and ``T``
for ten; output is always canonical.

>>> Card.parse("7h")
Card.parse('7H')
>>> str(Card.parse("td"))
'10D'
>>> Card.parse("jk").is_joker
True
>>> [str(c) for c in parse_cards("AS 10c qd")]
['AS', '10C', 'QD']
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import attrgetter

from service.engine.errors import MalformedError


class Suit(enum.Enum):
    """The four suits, valued by their one-letter code."""

    CLUBS = "C"
    DIAMONDS = "D"
    HEARTS = "H"
    SPADES = "S"

    @property
    def index(self) -> int:
        """0..3 in the order C, D, H, S."""
        return _SUIT_INDEX[self]


_SUIT_INDEX = {suit: i for i, suit in enumerate(Suit)}
SUITS: tuple[Suit, ...] = tuple(Suit)


class Rank(enum.IntEnum):
    """Ranks valued 1 (ace, low) to 13 (king)."""

    ACE = 1
    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13

    @property
    def symbol(self) -> str:
        """The rank's code: ``A``, ``2`` .. ``10``, ``J``, ``Q``, ``K``.

        >>> Rank.TEN.symbol, Rank.QUEEN.symbol
        ('10', 'Q')
        """
        return _RANK_SYMBOLS[self.value]

    @classmethod
    def parse(cls, text: str) -> Rank:
        """Parse a rank code (``A``, ``2``..``10`` or ``T``, ``J``, ``Q``, ``K``).

        >>> Rank.parse("t")
        <Rank.TEN: 10>
        """
        try:
            return cls(_RANK_BY_SYMBOL[text.upper()])
        except KeyError:
            raise MalformedError(f"unknown rank {text!r}", field="rank") from None


_RANK_SYMBOLS = {1: "A", 11: "J", 12: "Q", 13: "K"} | {v: str(v) for v in range(2, 11)}
_RANK_BY_SYMBOL = {s: v for v, s in _RANK_SYMBOLS.items()} | {"T": 10}
RANKS: tuple[Rank, ...] = tuple(Rank)

JOKER_ID = 52

CARD_CHARS = (
    "".join(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[suit * 13 + rank]
        for rank in range(13)
        for suit in range(4)
    )
    + "*"
)
"""One character per card id, for compact storage (:func:`chars_of`): clubs
``a``..``m`` (ace to king), diamonds ``n``..``z``, hearts ``A``..``M``, spades
``N``..``Z``, the joker ``*``.  None needs escaping in JSON, and decoding them
makes no string per card (one-character strings are the interpreter's own)."""


@dataclass(frozen=True, slots=True)
class Card:
    """One playing card; cards from different decks with one code are equal.

    ``id`` is ``(rank - 1) * 4 + suit index`` for a suited card and 52 for
    the joker, so cards sort by rank, then suit, with the joker last.

    >>> Card.of(Rank.SEVEN, Suit.HEARTS) == Card.parse("7H")
    True
    >>> sorted(parse_cards("JK 2C AS"))
    [Card.parse('AS'), Card.parse('2C'), Card.parse('JK')]
    """

    id: int
    code: str = field(init=False, repr=False, compare=False)
    """The canonical code, e.g. ``10S`` or ``JK`` (an attribute, not a property:
    views and documents read it for every card they show or store)."""

    char: str = field(init=False, repr=False, compare=False)
    """The card's character in :data:`CARD_CHARS` (compact storage)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", _code(self.id))
        object.__setattr__(self, "char", CARD_CHARS[self.id])

    @classmethod
    def of(cls, rank: Rank, suit: Suit) -> Card:
        """The card of a rank and suit."""
        return _CARDS[(rank - 1) * 4 + suit.index]

    @classmethod
    def from_id(cls, card_id: int) -> Card:
        """The card with this ``id`` (0..52)."""
        return _CARDS[card_id]

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse a card code; raises :class:`MalformedError` when it is not one.

        >>> Card.parse(" 10s ")
        Card.parse('10S')
        >>> Card.parse("1S")
        Traceback (most recent call last):
        ...
        service.engine.errors.MalformedError: not a card code: '1S'
        """
        if not isinstance(text, str):
            raise MalformedError(f"not a card code: {text!r}", field="card")
        card = _BY_CODE.get(text.strip().upper())
        if card is None:
            raise MalformedError(f"not a card code: {text!r}", field="card")
        return card

    @property
    def is_joker(self) -> bool:
        """True for the joker."""
        return self.id == JOKER_ID

    @property
    def rank(self) -> Rank | None:
        """The rank, or None for the joker."""
        return None if self.id == JOKER_ID else Rank(self.id // 4 + 1)

    @property
    def suit(self) -> Suit | None:
        """The suit, or None for the joker."""
        return None if self.id == JOKER_ID else SUITS[self.id % 4]

    # Cards order by id.  Written out, not ``order=True``: the generated methods
    # compare one-field tuples, and hands are sorted and bisected on every move.
    def __lt__(self, other: object) -> bool:
        return self.id < other.id if type(other) is Card else NotImplemented

    def __le__(self, other: object) -> bool:
        return self.id <= other.id if type(other) is Card else NotImplemented

    def __gt__(self, other: object) -> bool:
        return self.id > other.id if type(other) is Card else NotImplemented

    def __ge__(self, other: object) -> bool:
        return self.id >= other.id if type(other) is Card else NotImplemented

    def __str__(self) -> str:
        return _CODES[self.id]

    def __repr__(self) -> str:
        return f"Card.parse({_CODES[self.id]!r})"


def _code(card_id: int) -> str:
    if card_id == JOKER_ID:
        return "JK"
    return _RANK_SYMBOLS[card_id // 4 + 1] + SUITS[card_id % 4].value


_CODES: tuple[str, ...] = tuple(_code(i) for i in range(53))
_CARDS: tuple[Card, ...] = tuple(Card(i) for i in range(53))
_BY_CODE: dict[str, Card] = {c: _CARDS[i] for i, c in enumerate(_CODES)} | {
    "T" + s.value: _CARDS[36 + s.index] for s in Suit
}
JOKER: Card = _CARDS[JOKER_ID]
"""The joker (every deck's jokers are equal)."""
_BY_CHAR: dict[str, Card] = {CARD_CHARS[i]: _CARDS[i] for i in range(53)}


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parse cards given as a space-separated string or as a list of codes.

    >>> parse_cards(["7h", "TS"])
    [Card.parse('7H'), Card.parse('10S')]
    """
    codes = text.split() if isinstance(text, str) else list(text)
    return [Card.parse(code) for code in codes]


def cards_from_codes(codes: Iterable[str]) -> list[Card]:
    """Cards from canonical codes, as this service writes them (fast: no
    normalization; anything else raises :class:`MalformedError`).

    >>> cards_from_codes(["10S", "JK"])
    [Card.parse('10S'), Card.parse('JK')]
    """
    try:
        return list(map(_BY_CODE.__getitem__, codes))
    except (KeyError, TypeError):
        raise MalformedError(f"not canonical card codes: {codes!r}", field="card") from None


def chars_of(cards: Iterable[Card]) -> str:
    """Cards as one character each (:data:`CARD_CHARS`), the compact storage form.

    >>> chars_of(parse_cards("AC 10H JK"))
    'aJ*'
    """
    return "".join([card.char for card in cards])


def cards_from_chars(text: str) -> list[Card]:
    """The cards of :func:`chars_of`'s text; anything else raises :class:`MalformedError`.

    >>> cards_from_chars("aJ*")
    [Card.parse('AC'), Card.parse('10H'), Card.parse('JK')]
    """
    try:
        return list(map(_BY_CHAR.__getitem__, text))
    except (KeyError, TypeError):
        raise MalformedError(f"not card characters: {text!r}", field="card") from None


def format_cards(cards: Iterable[Card]) -> str:
    """Print cards as space-separated codes.

    >>> format_cards(parse_cards("10h js"))
    '10H JS'
    """
    return " ".join(map(_code_of, cards))


_code_of = attrgetter("code")


def build_shoe(decks: int, jokers_per_deck: int) -> list[Card]:
    """All cards of ``decks`` decks with their jokers, in a fixed order.

    >>> len(build_shoe(2, 2))
    108
    """
    deck = list(_CARDS[:52]) + [JOKER] * jokers_per_deck
    return deck * decks
