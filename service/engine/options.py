"""The options of a game (its variants, RULES.md section 7): their values,
their validation and description for clients, and the named presets.

>>> Options.from_dict({"acess": "low"})
Traceback (most recent call last):
...
service.engine.errors.InvalidOptionError: unknown option 'acess'
>>> preset("party").lay_off
True
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from service.engine.errors import InvalidOptionError

MAX_DECKS = 12
MAX_TURNS_LIMIT = 10_000


class Aces(enum.Enum):
    LOW = "low"
    HIGH_OR_LOW = "high_or_low"


class FaceCardPoints(enum.Enum):
    TEN = "ten"
    RANK = "rank"


class RoundOrder(enum.Enum):
    UP = "up"
    UP_DOWN = "up_down"


@dataclass(frozen=True)
class Options:
    """Every rule variant of RULES.md section 7; the defaults are ``classic``."""

    aces: Aces = Aces.LOW
    face_card_points: FaceCardPoints = FaceCardPoints.TEN
    unused_wild_points: int | None = None
    jokers_per_deck: int = 0
    max_wilds_per_meld: int | None = None
    all_wild_melds: bool = False
    extra_rounds: int = 0
    round_order: RoundOrder = RoundOrder.UP
    double_face_rounds: bool = False
    lay_off: bool = False
    false_go_out_penalty: int | None = None
    decks: int | None = None
    max_turns_per_round: int | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base: Options | None = None) -> Options:
        """Options from JSON-like data, over ``base`` (default: classic).

        Unknown names and values outside the allowed ones raise
        :class:`InvalidOptionError` naming the option; nothing is corrected.

        >>> Options.from_dict({"aces": "high_or_low"}).aces
        <Aces.HIGH_OR_LOW: 'high_or_low'>
        >>> Options.from_dict({"jokers_per_deck": 3})
        Traceback (most recent call last):
        ...
        service.engine.errors.InvalidOptionError: option 'jokers_per_deck' must be one of 0, 1, 2
        """
        if not isinstance(data, Mapping):
            raise InvalidOptionError("options must be an object", field="options")
        values: dict[str, Any] = {}
        for name, raw in data.items():
            spec = OPTION_SPECS.get(name)
            if spec is None:
                raise InvalidOptionError(f"unknown option {name!r}", field=name)
            values[name] = spec.convert(raw)
        return dataclasses.replace(base or CLASSIC, **values)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, every option present (a new dict each call).

        >>> Options().to_dict()["aces"]
        'low'
        """
        form: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            form[f.name] = value.value if isinstance(value, enum.Enum) else value
        return form


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """How one option is validated and described (``GET /v1/rulesets``)."""

    name: str
    default: Any
    allowed: tuple[Any, ...] | None  # None: a number range, see minimum/maximum
    description: str
    enum_type: type[enum.Enum] | None = None
    minimum: int | None = None
    maximum: int | None = None
    nullable: bool = False

    def convert(self, raw: Any) -> Any:
        if raw is None:
            if self.nullable:
                return None
            raise InvalidOptionError(f"option {self.name!r} may not be null", field=self.name)
        if self.enum_type is not None:
            try:
                return self.enum_type(raw)
            except ValueError:
                raise self._bad() from None
        if isinstance(self.default, bool):
            if not isinstance(raw, bool):
                raise InvalidOptionError(
                    f"option {self.name!r} must be true or false", field=self.name
                )
            return raw
        if not isinstance(raw, int) or isinstance(raw, bool):
            raise self._bad()
        if self.allowed is not None and raw not in self.allowed:
            raise self._bad()
        if self.minimum is not None and raw < self.minimum:
            raise self._bad()
        if self.maximum is not None and raw > self.maximum:
            raise self._bad()
        return raw

    def _bad(self) -> InvalidOptionError:
        if self.allowed is not None:
            shown = ", ".join("null" if a is None else str(a) for a in self.allowed)
            return InvalidOptionError(
                f"option {self.name!r} must be one of {shown}", field=self.name
            )
        return InvalidOptionError(
            f"option {self.name!r} must be null or a whole number "
            f"from {self.minimum} to {self.maximum}",
            field=self.name,
        )

    def describe(self) -> dict[str, Any]:
        """JSON-ready description for clients."""
        out: dict[str, Any] = {
            "name": self.name,
            "default": self.default,
            "description": self.description,
        }
        if self.allowed is not None:
            out["allowed"] = list(self.allowed)
        else:
            out["nullable"] = self.nullable
            out["minimum"] = self.minimum
            out["maximum"] = self.maximum
        return out


def _enum_values(e: type[enum.Enum]) -> tuple[Any, ...]:
    return tuple(m.value for m in e)


OPTION_SPECS: dict[str, OptionSpec] = {
    s.name: s
    for s in (
        OptionSpec(
            "aces",
            "low",
            _enum_values(Aces),
            "Aces low only, or high or low (Q K A); a leftover ace then scores 15.",
            enum_type=Aces,
        ),
        OptionSpec(
            "face_card_points",
            "ten",
            _enum_values(FaceCardPoints),
            "J, Q, K score 10 each, or 11, 12, 13.",
            enum_type=FaceCardPoints,
        ),
        OptionSpec(
            "unused_wild_points",
            None,
            (None, 15),
            "A wild-rank card left in hand scores its face value (null) or 15.",
            nullable=True,
        ),
        OptionSpec(
            "jokers_per_deck", 0, (0, 1, 2), "Jokers per deck, wild in every round; 20 points."
        ),
        OptionSpec(
            "max_wilds_per_meld",
            None,
            (None, 1),
            "No limit (null) or at most one card per meld playing as a wild.",
            nullable=True,
        ),
        OptionSpec("all_wild_melds", False, (False, True), "A meld may be wild cards only."),
        OptionSpec(
            "extra_rounds",
            0,
            (0, 1, 2),
            "Round 12 deals 14 cards with aces wild; round 13 deals 15 with 2s wild.",
        ),
        OptionSpec(
            "round_order",
            "up",
            _enum_values(RoundOrder),
            "Hand sizes go up (3..13), or up then down again (22 rounds).",
            enum_type=RoundOrder,
        ),
        OptionSpec(
            "double_face_rounds",
            False,
            (False, True),
            "Round scores double in rounds where J, Q or K are wild.",
        ),
        OptionSpec(
            "lay_off",
            False,
            (False, True),
            "Redemption round: final-turn players lay off cards onto melds on the table.",
        ),
        OptionSpec(
            "false_go_out_penalty",
            None,
            (None, 20),
            "An invalid go-out is rejected (null), or costs 20 points and is refused.",
            nullable=True,
        ),
        OptionSpec(
            "decks",
            None,
            None,
            "Number of decks; null for the minimum by the player count.",
            minimum=1,
            maximum=MAX_DECKS,
            nullable=True,
        ),
        OptionSpec(
            "max_turns_per_round",
            None,
            None,
            "End a round after this many turns without anyone going out; null for no limit.",
            minimum=1,
            maximum=MAX_TURNS_LIMIT,
            nullable=True,
        ),
    )
}

CLASSIC = Options()

PRESETS: dict[str, Options] = {
    "classic": CLASSIC,
    "finnish": Options(max_wilds_per_meld=1, unused_wild_points=15),
    "party": Options(jokers_per_deck=2, lay_off=True, double_face_rounds=True),
}

PRESET_DESCRIPTIONS: dict[str, str] = {
    "classic": "The rules of RULES.md with every option at its default.",
    "finnish": "The Finnish seed's main rules: one wild per meld, unused wilds score 15.",
    "party": "Two jokers per deck, lay-offs in the final turns, doubled face-card rounds.",
}


def preset(name: object) -> Options:
    """The options of a named preset (anything else: :class:`InvalidOptionError`).

    >>> preset("finnish").max_wilds_per_meld
    1
    """
    found = PRESETS.get(name) if isinstance(name, str) else None
    if found is None:
        raise InvalidOptionError(f"unknown ruleset {name!r}", field="ruleset")
    return found
