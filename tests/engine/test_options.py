"""Rule options: allowed and refused values, unknown names, the base and the presets."""

from __future__ import annotations

from typing import Any

import pytest

from service.engine import CLASSIC, OPTION_SPECS, PRESETS, Options, errors, preset
from tests.engine.option_values import BAD_VALUES, GOOD_VALUES


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
