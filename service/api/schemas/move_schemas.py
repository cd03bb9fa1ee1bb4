"""The body of ``POST /v1/games/{id}/moves``: one move, validated by its schema and
loaded to the engine's :class:`~service.engine.moves.Move` (:func:`load_move`).

The spec documents the body as a ``oneOf`` of the three schemas, discriminated
by ``type`` (:func:`register_spec`).
"""

from __future__ import annotations

from typing import Any

import orjson
from apispec import APISpec
from marshmallow import Schema, ValidationError, fields, post_load, validate

from service.api.problems import ApiError
from service.api.schemas.enums import draw_source
from service.api.schemas.fields import card_field, discriminator, register_union
from service.engine.moves import MAX_MELD_CARDS, MAX_MELDS, Move


class MoveSchema(Schema):
    """A move's fields; once they are valid, the move they make."""

    @post_load
    def _to_move(self, data: dict[str, Any], **_: Any) -> Move:
        return Move.from_dict(data)


class DrawMove(MoveSchema):
    type = discriminator("draw")
    source = draw_source(required=True)


class DiscardMove(MoveSchema):
    type = discriminator("discard")
    card = card_field(required=True)


class GoOutMove(MoveSchema):
    type = discriminator("go_out")
    discard = card_field(required=True)
    melds = fields.List(
        fields.List(card_field(), validate=validate.Length(1, MAX_MELD_CARDS)),
        validate=validate.Length(0, MAX_MELDS),
        metadata={"description": "Optional: without it the service finds an arrangement"},
    )


MOVE_SCHEMAS: dict[str, MoveSchema] = {
    "draw": DrawMove(),
    "discard": DiscardMove(),
    "go_out": GoOutMove(),
}


MOVE_EXAMPLES = {
    "draw": {"type": "draw", "source": "stock"},
    "discard": {"type": "discard", "card": "7H"},
    "go_out": {"type": "go_out", "discard": "KD", "melds": [["3C", "4C", "5C"]]},
}
"""One body of each move type (a draw from the stock is valid at the start of any turn)."""


def register_spec(spec: APISpec) -> None:
    """Add the move body to ``spec``: ``Move``, a ``oneOf`` of the three schemas
    discriminated by ``type``; a seat's view lists its legal moves with it."""
    register_union(
        spec,
        "Move",
        {kind: type(schema) for kind, schema in MOVE_SCHEMAS.items()},
        "One move, discriminated by `type`: any item of a view's `legal_moves` is one, "
        "to be posted back as it is.",
        MOVE_EXAMPLES,
    )


def load_move(body: bytes) -> Move:
    """The move of a JSON ``body``: 400 ``INVALID_JSON`` when it is not JSON, 422
    ``VALIDATION_ERROR`` (with ``errors`` by field) when it is not a move of a
    known type with valid fields, 422 ``MALFORMED`` when a card code names no card.

    >>> load_move(b'{"type": "discard", "card": "th"}')
    Discard(card=Card.parse('10H'))
    """
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise ApiError("INVALID_JSON", "the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise ApiError(
            "VALIDATION_ERROR",
            "a move is a JSON object",
            errors={"_schema": ["expected an object"]},
        )
    kind = data.get("type")
    schema = MOVE_SCHEMAS.get(kind) if isinstance(kind, str) else None
    if schema is None:
        raise ApiError(
            "VALIDATION_ERROR",
            "unknown move type; expected draw, discard or go_out",
            errors={"type": ["must be one of: draw, discard, go_out"]},
        )
    try:
        move: Move = schema.load(data)
    except ValidationError as exc:
        raise ApiError(
            "VALIDATION_ERROR", "some fields are invalid; see errors", errors=exc.messages
        ) from None
    return move
