"""The game options in the spec, one typed property per option, built from the
engine's own list (:data:`~service.engine.options.OPTION_SPECS`): ``Options``
as answered (every option present) and ``OptionsIn`` as sent (overrides of the
ruleset's values, each optional).

The request's options are loaded as a plain object and checked by the engine
(``INVALID_OPTION`` names the option); these schemas document them."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from service.api.schemas.fields import closed_set
from service.engine.options import OPTION_SPECS, OptionSpec


def _field(spec: OptionSpec, *, answered: bool) -> fields.Boolean | fields.String | fields.Integer:
    kwargs: dict[str, Any] = {
        "required": answered,
        "allow_none": spec.nullable,
        "metadata": {"description": spec.description},
    }
    if isinstance(spec.default, bool):
        return fields.Boolean(**kwargs)
    if spec.enum_type is not None:
        values = [str(v) for v in spec.allowed or ()]
        return closed_set(spec.enum_type.__name__, values, spec.description, **kwargs)
    numbers = [v for v in spec.allowed or () if v is not None]
    low = spec.minimum if spec.allowed is None else min(numbers)
    high = spec.maximum if spec.allowed is None else max(numbers)
    assert spec.allowed is None or numbers == list(range(min(numbers), max(numbers) + 1))
    return fields.Integer(strict=True, validate=validate.Range(low, high), **kwargs)


Options = Schema.from_dict(
    {name: _field(spec, answered=True) for name, spec in OPTION_SPECS.items()}, name="Options"
)
OptionsIn = Schema.from_dict(
    {name: _field(spec, answered=False) for name, spec in OPTION_SPECS.items()}, name="OptionsIn"
)
OptionValue = {
    "oneOf": [{"type": "boolean"}, {"type": "integer"}, {"type": "string"}],
    "nullable": True,
}
"""Any option's value, in the description of the options (``GET /v1/rulesets``)."""
