"""Field types of the HTTP contract: names, card codes, strict integers and the
query string's numbers, each validated as the API documents it; enums of closed
sets, and fields documented as a named component of the spec (:func:`component`)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, overload

from apispec import APISpec
from marshmallow import Schema, ValidationError, fields, validate

from service.store.history import Position, parse_event_id


class FullMatch(validate.Regexp):
    """``validate.Regexp`` matching the whole value: with ``re.match`` a pattern
    ending in ``$`` also takes a value ending in a newline.  The pattern stays
    documented in the spec (apispec reads ``regex``)."""

    regex: re.Pattern[str]  # built from str patterns only

    # str only: with a str pattern the parent's bytes overload raises TypeError too
    def __call__(self, value: str) -> str:  # type: ignore[override]
        if self.regex.fullmatch(value) is None:
            raise ValidationError(self._format_error(value))
        return value


NAME = FullMatch(
    r"^[^\x00-\x1f\x7f<>]{1,40}$",
    error="names are 1 to 40 characters, without control characters or < >",
)

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
"""Unicode categories no name may hold: controls (C0 and C1), format characters
(bidi overrides and isolates, zero-width ones, the BOM, the soft hyphen), line
and paragraph separators, surrogates, private use and unassigned code points --
what renders as nothing, or moves or disguises the text around it."""


def _shown_as_is(name: str) -> str:
    hidden = next((c for c in name if unicodedata.category(c) in HIDDEN_CATEGORIES), None)
    if hidden is not None:
        raise ValidationError(
            f"names may not hold U+{ord(hidden):04X} ({unicodedata.category(hidden)}):"
            " no control, format, separator, private-use or unassigned characters"
        )
    if name != name.strip():
        raise ValidationError("names may not begin or end with white space")
    return name


class Name(fields.String):
    """A player's name, normalised to NFC (so that one name has one spelling,
    and its length counts what is shown), then validated: :data:`NAME` and no
    character of :data:`HIDDEN_CATEGORIES`, no white space at either end."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(validate=[NAME, _shown_as_is], **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        return unicodedata.normalize("NFC", text)


_CARD_CODE = re.compile(r"[0-9A-Za-z]{1,3}")


def _card_characters(value: str) -> str:
    # the engine reads the code itself (MALFORMED when it names no card); no
    # white space or other character may reach it (Card.parse strips, upper-cases)
    if _CARD_CODE.fullmatch(value) is None:
        raise ValidationError("a card code: rank then suit in ASCII (7H, 10S, th, JK)")
    return value


def card_field(description: str | None = None, **kwargs: Any) -> fields.String:
    """A card code (``description``: what the card is, beside its code)."""
    shown = "Card code: A 2..10 J Q K + C D H S, or JK (T, lower case accepted)"
    return fields.String(
        validate=[validate.Length(1, 3), _card_characters],
        metadata={
            "description": shown if description is None else f"{description}. {shown}",
            "example": "7H",
        },
        **kwargs,
    )


def closed_set(
    name: str, values: Iterable[str], description: str, *, checked: bool = True, **kwargs: Any
) -> fields.String:
    """A string of a closed set, documented as a reference to the named enum
    ``name`` of the spec (added to the components the first time a field uses
    it), so that generated clients share one enum type for it.  ``checked``:
    the field refuses another value (else the engine checks it, and says so)."""
    allowed = list(values)
    more = kwargs.pop("validate", None)
    checks = ([validate.OneOf(allowed)] if checked else []) + ([more] if more else [])
    field = fields.String(validate=checks, **kwargs)
    schema = {"type": "string", "enum": allowed, "description": description}
    return component(name, field, schema=schema)


def discriminator(kind: str) -> fields.String:
    """The ``type`` of a member of a union: required, and ``kind`` only."""
    return fields.String(required=True, validate=validate.Equal(kind))


_FieldT = TypeVar("_FieldT", bound=fields.Field[Any])


@overload
def component(
    name: str, field: _FieldT, *, schema: dict[str, Any] | None = None, **kwargs: Any
) -> _FieldT: ...


@overload
def component(
    name: str, field: None = None, *, schema: dict[str, Any] | None = None, **kwargs: Any
) -> fields.Raw: ...


def component(
    name: str,
    field: fields.Field[Any] | None = None,
    *,
    schema: dict[str, Any] | None = None,
    **kwargs: Any,
) -> fields.Field[Any]:
    """``field`` (default: any JSON value), documented in the spec as a reference
    to the component schema ``name`` and nothing else: a union (``Move``,
    ``Event``), a schema built apart (the options) or ``schema`` itself, which
    is then added to the components.  The field still loads as ``field`` does;
    the component is what the spec shows (nullable when the field allows null)."""
    made = field if field is not None else fields.Raw(**kwargs)
    made.metadata = {**made.metadata, COMPONENT: (name, schema)}
    return made


COMPONENT = "t13_component"
"""The metadata key :func:`component` sets (not a property of the OpenAPI schema object)."""


def component_property(converter: Any, field: fields.Field[Any], **kwargs: Any) -> dict[str, Any]:
    """The apispec attribute function that documents a :func:`component` field as
    its ``$ref`` alone, or, when it allows null, as ``allOf: [$ref]`` with
    ``nullable`` and its description: what generators read as "this type or
    null" (run last, it drops what the other functions derived)."""
    if COMPONENT not in field.metadata:
        return {}
    name, schema = field.metadata[COMPONENT]
    if schema is not None and name not in converter.spec.components.schemas:
        converter.spec.components.schema(name, schema)
    kwargs["ret"].clear()
    ref = {"$ref": f"#/components/schemas/{name}"}
    if not field.allow_none:
        return ref
    description = field.metadata.get("description")
    return {"allOf": [ref], "nullable": True} | (
        {"description": description} if description else {}
    )


def register_union(
    spec: APISpec,
    name: str,
    members: Mapping[str, type[Schema]],
    description: str,
    examples: Mapping[str, Any] | None = None,
) -> None:
    """Add ``members`` (by their ``type``) and ``name``, their ``oneOf``, to the
    spec's components, with the discriminator's explicit mapping: what generated
    clients need to tell the members apart (and a member sent back unchanged
    is a valid body of any operation taking the union). ``examples`` (by
    ``type``): the ``example`` of each member's schema."""
    refs = {}
    for kind, schema in members.items():
        example = {} if examples is None else {"example": examples[kind]}
        spec.components.schema(schema.__name__, example, schema=schema)
        refs[kind] = f"#/components/schemas/{schema.__name__}"
    union = {
        "description": description,
        "oneOf": [{"$ref": ref} for ref in refs.values()],
        "discriminator": {"propertyName": "type", "mapping": refs},
    }
    spec.components.schema(name, union)


def integer(**kwargs: Any) -> fields.Integer:
    """A JSON integer, and only that: no float (``2.5``, nor ``2.0``), string or boolean."""
    return fields.Integer(strict=True, **kwargs)


class QueryInteger(fields.Integer):
    """An integer of the query string in ASCII digits: ``int()`` would also read
    ``１`` (full width), ``٣``, ``1_0``, ``+1`` and `` 1``."""

    PATTERN = re.compile(r"[0-9]{1,20}")

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        if not isinstance(value, str) or self.PATTERN.fullmatch(value) is None:
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)


class EventId(fields.Field):  # type: ignore[type-arg]
    """An event's id, ``<seq>.<tag>`` (:mod:`service.store.history`), or a bare seq
    (taken on trust), read as a :class:`~service.store.history.Position`."""

    PATTERN = re.compile(r"[0-9]{1,18}(\.[0-9a-f]{16})?")
    default_error_messages = {"invalid": "Not a valid event id (`<seq>.<tag>`, or a seq)."}

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("metadata", {}).update(type="string", pattern=f"^{self.PATTERN.pattern}$")
        super().__init__(**kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Position:
        position = parse_event_id(value) if isinstance(value, str) else None
        if position is None or position.seq > MAX_EVENT_SEQ:
            raise self.make_error("invalid", input=value)
        return position


MAX_EVENT_SEQ = 2**53
"""The largest event seq a client may name (``after``, ``Last-Event-ID``)."""


class QueryNumber(fields.Float):
    """A number of the query string in ASCII digits, with an optional fraction
    (``0.5``): no exponent, sign, underscore, ``nan`` or ``inf``."""

    PATTERN = re.compile(r"[0-9]{1,10}(\.[0-9]{1,10})?")

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> float:
        if not isinstance(value, str) or self.PATTERN.fullmatch(value) is None:
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)
