"""The committed spec is what the app serves, is complete, and the app keeps to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openapi_spec_validator import OpenAPIV30SpecValidator
from schemathesis.specs.openapi.checks import ignored_auth, positive_data_acceptance

from tests.api.conftest import create_game
from tools.openapi import DEFAULT_PATH, spec_text

OPERATIONS = ("get", "post", "put", "patch", "delete")


def test_committed_spec_matches_served(client):
    served = client.get("/openapi.json").get_json()
    committed = Path(DEFAULT_PATH).read_text()
    assert committed == spec_text(served), "openapi/openapi.json is stale: run `make openapi`"


def test_committed_and_served_specs_are_valid_openapi_3_0(client):
    """What generators read: the committed file and what the app serves (the same
    document, by the test above), each valid by openapi-spec-validator."""
    committed = json.loads(Path(DEFAULT_PATH).read_text())
    served = client.get("/openapi.json").get_json()
    assert committed["openapi"].startswith("3.0.")
    for spec in (committed, served):
        validator = OpenAPIV30SpecValidator(spec)
        errors = [f"{list(e.absolute_path)}: {e.message}"[:300] for e in validator.iter_errors()]
        assert errors == []


def test_every_nullable_reference_is_all_of(client):
    """A nullable reference is ``{allOf: [$ref], nullable: true}`` (with a description
    or not), never apispec's ``anyOf`` with an object: openapi-python-client reads
    that as a new, empty type instead of ``Ref | None``."""
    todo, found = [client.get("/openapi.json").get_json()], 0
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            assert {"type": "object", "nullable": True} not in node.get("anyOf", []), node
            found += "allOf" in node and node.get("nullable") is True
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    assert found > 0  # PlayerView.arrangement, GameView.round...


def test_every_operation_is_documented(client):
    spec = client.get("/openapi.json").get_json()
    seen = set()
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method not in OPERATIONS:
                continue
            assert operation.get("operationId"), (method, path)
            assert operation["operationId"] not in seen
            seen.add(operation["operationId"])
            assert operation.get("summary"), (method, path)
            errors = [code for code in operation["responses"] if code.startswith(("4", "5"))]
            if path.startswith("/v1/games/"):
                assert "404" in errors, (method, path)
    assert {
        "createGame",
        "joinGame",
        "getGame",
        "getPlayerView",
        "makeMove",
        "listEvents",
        "evaluateHand",
        "listRulesets",
        "healthz",
        "readyz",
    } <= seen


def test_move_body_is_discriminated_one_of(client):
    spec = client.get("/openapi.json").get_json()
    move = spec["components"]["schemas"]["Move"]
    assert move["discriminator"]["propertyName"] == "type"
    assert set(move["discriminator"]["mapping"]) == {"draw", "discard", "go_out"}
    body = spec["paths"]["/v1/games/{game_id}/moves"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Move"}
    json.dumps(spec)  # serializable


OPERATION_IDS = [
    "createGame",
    "getGame",
    "getPlayerView",
    "joinGame",
    "listGames",
    "quickJoin",
    "renameSeat",
    "leaveGame",
    "resign",
    "makeMove",
    "listEvents",
    "evaluateHand",
    "listRulesets",
    "healthz",
    "readyz",
    "metrics",
]


@pytest.mark.parametrize("operation_id", OPERATION_IDS)
def test_api_keeps_to_its_spec(app, client, operation_id):
    """Generated requests (schemathesis): never a 5xx, every answer as the spec
    says. About half the requests on game paths go to a real game, with a real
    seat's token. The app is in open mode, which takes no credential where the
    spec's ``security`` (apps mode's) asks for an app's or a player's: that
    check is tests/apps/test_spec_security.py's."""
    schema = schemathesis.openapi.from_wsgi("/openapi.json", app)
    operation = schema.find_operation_by_id(operation_id)
    game = create_game(client, [{"name": "a"}, {"name": "b"}])

    @given(case=operation.as_strategy(), real=st.booleans())
    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    def check(case, real):
        if real and case.path_parameters and "game_id" in case.path_parameters:
            case.path_parameters["game_id"] = game.id
            case.headers = {**(case.headers or {}), **game.auth(0)}
        # Schema-valid is not always game-valid (seat counts, option combinations,
        # moves the state forbids), so positive_data_acceptance does not apply.
        case.call_and_validate(excluded_checks=[positive_data_acceptance, ignored_auth])

    check()
