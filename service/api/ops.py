"""Operations endpoints: liveness, readiness, metrics and the API docs page.

``/docs`` is Swagger UI served from the installed ``swagger-ui-bundle``
package: no CDN is contacted.
"""

from __future__ import annotations

from flask import Blueprint, Response, send_from_directory
from swagger_ui_bundle import swagger_ui_path

from service.api import metrics
from service.api.persistence import json_response, store
from service.api.problems import RETRY_AFTER_SECONDS, problem

blp = Blueprint("ops", __name__)

DOCS_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Three Thirteen API</title>
<link rel="stylesheet" href="/docs/static/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/docs/static/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({url: "/openapi.json", dom_id: "#ui"});</script>
</body></html>
"""


@blp.get("/healthz")
def healthz() -> Response:
    """Liveness: the process answers."""
    return json_response({"status": "ok"})


@blp.get("/readyz")
def readyz() -> Response:
    """Readiness: 503 while Redis is unreachable."""
    if store().ping():
        return json_response({"status": "ready"})
    return problem(
        "STORE_UNAVAILABLE",
        "the game store is unreachable",
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


@blp.get("/metrics")
def metrics_view() -> Response:
    """Prometheus metrics."""
    return metrics.exposition()


@blp.get("/docs")
def docs() -> Response:
    """Interactive API docs (Swagger UI, served locally)."""
    return Response(DOCS_PAGE, mimetype="text/html")


@blp.get("/docs/static/<path:filename>")
def docs_static(filename: str) -> Response:
    return send_from_directory(swagger_ui_path, filename)
