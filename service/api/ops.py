"""Operations endpoints: liveness, readiness, metrics and the API docs page.

``/docs`` is Swagger UI served from the installed ``swagger-ui-bundle``
package: no CDN is contacted.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, send_from_directory
from marshmallow import Schema, fields
from swagger_ui_bundle import swagger_ui_path

from service.api import metrics, schemas
from service.api.answers import json_response
from service.api.blueprint import Blueprint as ApiBlueprint
from service.api.context import store
from service.api.problems import RETRY_AFTER_SECONDS, problem
from service.store.shutdown import shutting_down

blp = ApiBlueprint("ops", __name__, description="Health, readiness and metrics")
docs_blp = Blueprint("docs", __name__)


class StatusOut(Schema):
    status = fields.String()


DOCS_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Three Thirteen API</title>
<link rel="stylesheet" href="/docs/static/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/docs/static/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({url: "/openapi.json", dom_id: "#ui"});</script>
</body></html>
"""


@blp.route("/healthz")
@blp.doc(operationId="healthz")
@blp.response(200, StatusOut)
def healthz() -> Response:
    """Liveness

    The process answers; says nothing about Redis.
    """
    return json_response({"status": "ok"})


@blp.route("/readyz")
@blp.doc(operationId="readyz")
@blp.response(200, StatusOut)
@blp.alt_response(
    503,
    schema=schemas.Problem,
    description="Redis unreachable",
    content_type="application/problem+json",
)
def readyz() -> Response:
    """Readiness

    503 while Redis is unreachable, or once the instance is shutting down (so the
    load balancer stops sending it requests).
    """
    if shutting_down():
        return problem(
            "STORE_UNAVAILABLE",
            "this instance is shutting down",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    if store().ping():
        return json_response({"status": "ready"})
    return problem(
        "STORE_UNAVAILABLE",
        "the game store is unreachable",
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


@blp.route("/metrics")
@blp.doc(
    operationId="metrics",
    responses={
        200: {
            "description": "Prometheus text exposition",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        }
    },
)
def metrics_view() -> Response:
    """Prometheus metrics

    Requests, latencies, moves, games and errors, in the text exposition format.
    """
    return metrics.exposition()


def finalize_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The generated spec with nullable references spelled the way client
    generators understand: apispec writes ``anyOf: [{type: object, nullable},
    {$ref}]``, which generators read as "any object"; OpenAPI 3.0's own form is
    ``allOf: [{$ref}]`` with ``nullable: true``."""

    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            any_of = node.get("anyOf")
            if (
                isinstance(any_of, list)
                and len(any_of) == 2
                and any_of[0] == {"type": "object", "nullable": True}
                and set(any_of[1]) == {"$ref"}
            ):
                rest = {k: fix(v) for k, v in node.items() if k != "anyOf"}
                return {**rest, "allOf": [any_of[1]], "nullable": True}
            return {k: fix(v) for k, v in node.items()}
        if isinstance(node, list):
            return [fix(v) for v in node]
        return node

    fixed: dict[str, Any] = fix(spec)
    return fixed


@docs_blp.get("/openapi.json")
def openapi_json() -> Response:
    """The OpenAPI document (``make openapi`` writes the same to openapi/openapi.json)."""
    spec = current_app.extensions.get("t13_spec_dict")
    if spec is None:
        spec = finalize_spec(current_app.extensions["t13_spec"].to_dict())
        current_app.extensions["t13_spec_dict"] = spec
    return json_response(spec)


@docs_blp.get("/docs")
def docs() -> Response:
    """Interactive API docs (Swagger UI, served locally)."""
    return Response(DOCS_PAGE, mimetype="text/html")


@docs_blp.get("/docs/static/<path:filename>")
def docs_static(filename: str) -> Response:
    return send_from_directory(swagger_ui_path, filename)
