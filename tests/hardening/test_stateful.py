"""Stateful fuzzing: a hypothesis state machine creates games, joins open seats, reads
views and events and plays moves -- legal ones taken from ``legal_moves`` and
generated ones (valid or not, any seat's token, stale If-Match, reused keys) -- and
checks every answer against the OpenAPI spec with schemathesis' checks: never a 5xx,
no status, content type or body outside the spec.  After each step every game's
version and event log agree.

The spec has no OpenAPI links, so schemathesis' own stateful mode cannot chain
create -> join -> moves; this machine does the chaining instead.
"""

from __future__ import annotations

import os
from typing import Any

import hypothesis.strategies as st
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, rule
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.api.conftest import make_app

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
SEEDS = st.integers(0, 2**16)
EXAMPLES = int(os.environ.get("STATEFUL_EXAMPLES", "150"))
STEPS = 30

CARDS = st.sampled_from(
    ["AS", "2C", "7H", "10D", "JK", "KS", "QH", "th", "9c", "ZZ", "", "1S", "7H7H"]
)
NAMES = st.one_of(
    st.sampled_from(["ann", "bob", "x" * 40, "x" * 41, "<b>", "a\nb", "", "Zoë"]),
    st.text(max_size=45),
)
RAW_MOVES = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("draw"), "source": st.sampled_from(["stock", "discard", "sky", ""])}
    ),
    st.fixed_dictionaries({"type": st.just("discard"), "card": CARDS}),
    st.fixed_dictionaries(
        {"type": st.just("go_out"), "discard": CARDS},
        optional={"melds": st.lists(st.lists(CARDS, max_size=5), max_size=4)},
    ),
    st.dictionaries(st.sampled_from(["type", "card", "source", "x"]), st.integers() | CARDS),
)


def header(response: Any, name: str) -> str | None:
    """A header of a schemathesis response (its keys are lower case, its values lists)."""
    values = response.headers.get(name.lower())
    return values[0] if values else None


class ApiMachine(RuleBasedStateMachine):
    games = Bundle("games")

    def __init__(self) -> None:
        super().__init__()
        self.app = ApiMachine.app
        self.client = self.app.test_client()
        self.known: dict[str, dict[str, Any]] = {}

    app: Any = None
    schema: Any = None
    calls = 0

    def call(self, operation_id: str, **kwargs: Any) -> Any:
        operation = ApiMachine.schema.find_operation_by_id(operation_id)
        case = operation.Case(**kwargs)
        response = case.call(app=self.app)
        case.validate_response(response, checks=CHECKS)
        ApiMachine.calls += 1
        return response

    @initialize(target=games, seed=SEEDS)
    def first_game(self, seed: int) -> str:
        return self._create(2, 2, seed)

    def _create(self, players: int, seats: int, seed: int) -> str:
        # Seeded deals: a failing run replays (and shrinks) exactly.
        body = {
            "players": [{"name": f"p{i}"} for i in range(players)],
            "seats": seats,
            "seed": f"stateful-{seed}",
        }
        r = self.call("createGame", body=body, media_type="application/json")
        assert r.status_code == 201, r.text
        data = r.json()
        self.known[data["id"]] = {
            "tokens": {p["seat"]: p["token"] for p in data["players"] if "token" in p},
            "version": data["version"],
        }
        return str(data["id"])

    @rule(target=games, players=st.integers(1, 3), extra=st.integers(0, 2), seed=SEEDS)
    def create(self, players: int, extra: int, seed: int) -> str:
        return self._create(players, max(2, players + extra), seed)

    @rule(body=st.one_of(st.none(), st.dictionaries(st.text(max_size=8), st.integers())))
    def create_garbage(self, body: Any) -> None:
        r = self.call("createGame", body=body, media_type="application/json")
        assert 400 <= r.status_code < 500

    @rule(game=games, name=NAMES)
    def join(self, game: str, name: str) -> None:
        r = self.call(
            "joinGame", path_parameters={"game_id": game}, body={"name": name},
            media_type="application/json",
        )  # fmt: skip
        if r.status_code == 201:
            data = r.json()
            self.known[game]["tokens"][data["seat"]] = data["token"]
            self.known[game]["version"] = data["version"]
        else:
            assert r.status_code in (409, 422), r.text

    @rule(game=games)
    def public(self, game: str) -> None:
        r = self.call("getGame", path_parameters={"game_id": game})
        assert r.status_code == 200
        assert r.json()["version"] == self.known[game]["version"]

    @rule(game=games, seat=st.integers(0, 3), after=st.integers(0, 40))
    def events(self, game: str, seat: int, after: int) -> None:
        token = self.known[game]["tokens"].get(seat)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        r = self.call(
            "listEvents", path_parameters={"game_id": game}, query={"after": after},
            headers=headers,
        )  # fmt: skip
        assert r.status_code == 200

    def _view(self, game: str, seat: int) -> dict[str, Any] | None:
        token = self.known[game]["tokens"].get(seat)
        if token is None:
            return None
        r = self.call(
            "getPlayerView", path_parameters={"game_id": game},
            headers={"Authorization": f"Bearer {token}"},
        )  # fmt: skip
        assert r.status_code == 200
        return dict(r.json())

    def _move(self, game: str, seat: int, body: Any, **headers: str) -> Any:
        token = self.known[game]["tokens"].get(seat, "not-a-token")
        r = self.call(
            "makeMove", path_parameters={"game_id": game}, body=body,
            media_type="application/json",
            headers={"Authorization": f"Bearer {token}", **headers},
        )  # fmt: skip
        if r.status_code == 200 and header(r, "Idempotent-Replayed") != "true":
            self.known[game]["version"] = r.json()["version"]
        return r

    @rule(game=games, pick=st.integers(0, 1000), data=st.data())
    def legal_move(self, game: str, pick: int, data: st.DataObject) -> None:
        view = self._view(game, data.draw(st.integers(0, 3)))
        public = self.client.get(f"/v1/games/{game}").get_json()
        if public["round"] is None:
            return
        view = self._view(game, public["round"]["turn"])
        if not view or not view["legal_moves"]:
            return
        move = view["legal_moves"][pick % len(view["legal_moves"])]
        key = {"Idempotency-Key": f"k{pick}"} if pick % 3 == 0 else {}
        r = self._move(game, view["seat"], move, **key)
        assert r.status_code in (200, 422) if key else r.status_code == 200, r.text

    @rule(game=games, seat=st.integers(0, 4), body=RAW_MOVES, stale=st.booleans())
    def any_move(self, game: str, seat: int, body: Any, stale: bool) -> None:
        headers = {"If-Match": '"1"'} if stale else {}
        r = self._move(game, seat, body, **headers)
        assert r.status_code < 500

    @invariant()
    def versions_agree(self) -> None:
        for game, info in self.known.items():
            view = self.client.get(f"/v1/games/{game}").get_json()
            assert view["version"] == info["version"], game


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_api_state_machine(redis_client, redis_url):
    ApiMachine.app = make_app(redis_url)
    ApiMachine.schema = schemathesis.openapi.from_wsgi("/openapi.json", ApiMachine.app)
    test = ApiMachine.TestCase
    test.settings = settings(
        max_examples=EXAMPLES,
        stateful_step_count=STEPS,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    test().runTest()
    print(f"\nstateful: {ApiMachine.calls} requests checked against the spec")
    assert ApiMachine.calls > EXAMPLES * 5
