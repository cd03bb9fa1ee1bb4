"""Operations endpoints: liveness, readiness, metrics and the API docs page.

``/docs`` is Swagger UI served from the installed ``swagger-ui-bundle``
package: no CDN is contacted.
"""

from __future__ import annotations

from flask import Blueprint, Response, current_app, send_from_directory
from marshmallow import Schema
from swagger_ui_bundle import swagger_ui_path

from service.api import metrics
from service.api.blueprint import Blueprint as ApiBlueprint
from service.api.blueprint import document_errors
from service.api.context import store
from service.api.problems import RETRY_AFTER_SECONDS, problem
from service.api.responses import json_response
from service.api.schemas.enums import probe_status
from service.api.spec import finalize_spec
from service.store.shutdown import shutting_down

blp = ApiBlueprint("ops", __name__, description="Health, readiness and metrics")
docs_blp = Blueprint("docs", __name__)


class StatusOut(Schema):
    status = probe_status(required=True)


DOCS_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Three Thirteen API</title>
<link rel="stylesheet" href="/docs/static/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/docs/static/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({url: "/openapi.json", dom_id: "#ui"});</script>
</body></html>
"""


@blp.doc(operationId="healthz")
@blp.response(200, StatusOut)
def healthz() -> Response:
    """Liveness

    The process answers; says nothing about Redis.
    """
    return json_response({"status": "ok"})


@blp.doc(operationId="readyz")
@blp.response(200, StatusOut)
@document_errors(blp, {503: "Redis unreachable"})
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


@docs_blp.get("/openapi.json")
def openapi_json() -> Response:
    """The OpenAPI document (``make openapi`` writes the same to openapi/openapi.json)."""
    spec = current_app.extensions.get("t13_spec_dict")
    if spec is None:
        extensions = current_app.extensions
        spec = finalize_spec(extensions["t13_spec"].to_dict(), extensions["t13_securities"])
        current_app.extensions["t13_spec_dict"] = spec
    return json_response(spec)


@docs_blp.get("/docs")
def docs() -> Response:
    """Interactive API docs (Swagger UI, served locally)."""
    return Response(DOCS_PAGE, mimetype="text/html")


@docs_blp.get("/docs/static/<path:filename>")
def docs_static(filename: str) -> Response:
    return send_from_directory(swagger_ui_path, filename)
