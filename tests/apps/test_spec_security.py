"""The spec's ``security`` of each operation is what apps mode does: every operation
declares it, from its route's access (one place, the route table), and, sent to the
service in apps mode, a credential of a scheme the operation does not declare is
refused 403 ``CREDENTIAL_NOT_ALLOWED``, one it declares is not, and no credential is
401 unless the operation declares none."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from service.api.access import security
from service.api.routes import ROUTES, securities
from tests.apps.conftest import AppKey, bearer, mint

OPERATIONS = ("get", "put", "post", "patch", "delete")


def operations(spec: dict[str, Any]) -> list[tuple[str, str, list[dict[str, list[str]]]]]:
    return [
        (path, method, operation["security"])
        for path, item in spec["paths"].items()
        for method, operation in item.items()
        if method in OPERATIONS
    ]


def test_every_operation_declares_its_routes_access(apps_client):
    spec = apps_client.get("/openapi.json").get_json()
    declared = {(path, method): found for path, method, found in operations(spec)}
    assert declared == securities()
    assert len(declared) == sum(len(route.methods) for route in ROUTES)
    schemes = spec["components"]["securitySchemes"]
    used = {name for found in declared.values() for each in found for name in each}
    assert used == set(schemes)  # every scheme is taken somewhere, none undeclared
    for route in ROUTES:
        assert all(len(each) == 1 for each in security(route.access))  # any one is enough


def credentials(client: FlaskClient, app: AppKey) -> tuple[str, dict[str, str]]:
    """A game of ``app`` (seat 0 the player u1's, seat 1 a seat token's) and a
    credential of each scheme."""
    body = {"players": [{"name": "ann", "player_id": "u1"}, {"name": "cat"}]}
    created = client.post("/v1/games", json=body, headers=app.auth).get_json()
    return created["id"], {
        "appKey": app.key,
        "playerToken": mint(client, app, "u1", "ann"),
        "bearer": created["players"][1]["token"],
    }


@pytest.fixture
def spec_operations(apps_client):
    return operations(apps_client.get("/openapi.json").get_json())


def test_apps_mode_takes_what_each_operation_declares(apps_client, new_app, spec_operations):
    app = new_app("cards")
    checked = 0
    for path, method, declared in spec_operations:
        game_id, sent = credentials(apps_client, app)  # a game of its own for each
        url = path.replace("{game_id}", game_id).replace("{player_id}", "u2")
        url = url.replace("{ruleset}", "classic").replace("{table_size}", "2")
        names = {name for each in declared for name in each}
        bare = apps_client.open(url, method=method.upper(), json={})
        if declared:
            assert bare.status_code == 401, (method, path, bare.get_json())
        else:
            assert bare.status_code not in (401, 403), (method, path)
        for scheme, credential in sent.items():
            answer = apps_client.open(
                url, method=method.upper(), json={}, headers=bearer(credential)
            )
            refused = answer.status_code == 403 and (
                answer.get_json()["code"] == "CREDENTIAL_NOT_ALLOWED"
            )
            assert refused == (bool(declared) and scheme not in names), (method, path, scheme)
            checked += 1
    assert checked == 3 * len(spec_operations)
