"""CORS answers held to the spec a web page's client is built from
(openapi/openapi.json): a page on an allowed origin may send every method and
header parameter the spec documents, and read every response header it documents;
a preflight is cached; an origin not allowed gets nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.api.conftest import make_app

SPEC = json.loads((Path(__file__).resolve().parents[2] / "openapi" / "openapi.json").read_text())
ORIGIN = "https://page.example"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        found: Any = SPEC
        for part in node["$ref"].removeprefix("#/").split("/"):
            found = found[part]
        node = found
    return node


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, item in SPEC["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


def _header_parameters(operation: dict[str, Any]) -> list[str]:
    return [
        p["name"] for p in map(_resolve, operation.get("parameters", [])) if p["in"] == "header"
    ]


def _sample_path(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "g1", path)


def _names(value: str) -> set[str]:
    return {name.strip().lower() for name in value.split(",") if name.strip()}


@pytest.fixture
def cors_client(redis_url):
    return make_app(redis_url, CORS_ORIGINS=f"https://other.example, {ORIGIN}").test_client()


def test_the_spec_documents_what_a_page_needs():
    """The documented headers the tests below rely on are there (a spec that lost
    them would make the other tests pass for nothing)."""
    parameters = {h for _p, _m, op in _operations() for h in _header_parameters(op)}
    assert {"If-Match", "If-None-Match", "Idempotency-Key", "Last-Event-ID"} <= parameters
    answered = {
        h
        for _p, _m, op in _operations()
        for response in op["responses"].values()
        for h in _resolve(response).get("headers", {})
    }
    assert {"ETag", "Link", "Location", "Retry-After", "Idempotent-Replayed"} <= answered
    assert {m for _p, m, _op in _operations()} >= {"get", "post", "delete", "patch"}


@pytest.mark.parametrize(("path", "method", "operation"), _operations())
def test_every_documented_operation_passes_its_preflight(cors_client, path, method, operation):
    """The preflight a browser sends before each documented operation, with every
    header the operation documents (and those any page sends: Authorization for the
    bearer scheme, Content-Type for a JSON body, X-Request-ID), is allowed and cached."""
    assert SPEC["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    wanted = {*_header_parameters(operation), "Authorization", "X-Request-ID"}
    if "requestBody" in operation:
        wanted.add("Content-Type")
    answer = cors_client.options(
        _sample_path(path),
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": method.upper(),
            "Access-Control-Request-Headers": ", ".join(sorted(h.lower() for h in wanted)),
        },
    )
    assert 200 <= answer.status_code < 300, (path, method, answer.status_code)
    assert answer.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert "Origin" in answer.headers.get("Vary", "")
    assert method.upper() in answer.headers["Access-Control-Allow-Methods"].split(", ")
    assert {h.lower() for h in wanted} <= _names(answer.headers["Access-Control-Allow-Headers"])
    assert 600 <= int(answer.headers["Access-Control-Max-Age"]) <= 7200  # Chromium's cap


def test_every_documented_response_header_is_readable(cors_client):
    """Every response header any operation documents is exposed, on every answer to
    the page (a 404 here: the lists do not depend on the route)."""
    documented = {
        h.lower()
        for _p, _m, op in _operations()
        for response in op["responses"].values()
        for h in _resolve(response).get("headers", {})
    }
    for answer in (
        cors_client.get("/v1/games", headers={"Origin": ORIGIN}),
        cors_client.get("/v1/games/g1", headers={"Origin": ORIGIN}),
        cors_client.post("/v1/games", json={}, headers={"Origin": ORIGIN}),
    ):
        assert answer.headers["Access-Control-Allow-Origin"] == ORIGIN
        exposed = _names(answer.headers["Access-Control-Expose-Headers"])
        assert documented | {"x-request-id"} <= exposed, answer.status_code
        assert "Access-Control-Max-Age" not in answer.headers  # a preflight's only


def test_the_lobby_link_and_a_game_etag_reach_the_page(cors_client):
    created = cors_client.post(
        "/v1/games",
        json={"players": [{"name": "a"}, {"name": "b"}]},
        headers={"Origin": ORIGIN},
    )
    assert created.status_code == 201
    assert "location" in _names(created.headers["Access-Control-Expose-Headers"])
    viewed = cors_client.get(created.headers["Location"], headers={"Origin": ORIGIN})
    assert viewed.headers["ETag"]
    assert "etag" in _names(viewed.headers["Access-Control-Expose-Headers"])


def test_an_origin_not_allowed_gets_no_cors_answer(cors_client):
    for answer in (
        cors_client.options(
            "/v1/games/g1/seat",
            headers={
                "Origin": "https://evil.example",
                "Access-Control-Request-Method": "PATCH",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        ),
        cors_client.get("/v1/games", headers={"Origin": "https://evil.example"}),
        cors_client.get("/v1/games", headers={"Origin": "null"}),
    ):
        assert not [h for h in answer.headers if h[0].lower().startswith("access-control-")]


def test_any_origin_is_answered_its_own(redis_url):
    client = make_app(redis_url, CORS_ORIGINS="*").test_client()
    answer = client.options(
        "/v1/games/g1/seat",
        headers={"Origin": "https://any.example", "Access-Control-Request-Method": "PATCH"},
    )
    assert answer.headers["Access-Control-Allow-Origin"] == "https://any.example"
    assert "PATCH" in answer.headers["Access-Control-Allow-Methods"].split(", ")


def test_the_preflight_passes_with_rate_limits_on(redis_url):
    """A preflight is no request of the API's: it is not counted nor refused by the limits."""
    client = make_app(redis_url, CORS_ORIGINS=ORIGIN, RATE_LIMITS="true").test_client()
    for _ in range(3):
        answer = client.options(
            "/v1/games/g1/moves",
            headers={
                "Origin": ORIGIN,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type, if-match",
            },
        )
        assert answer.status_code == 200
        assert answer.headers["Access-Control-Max-Age"]
