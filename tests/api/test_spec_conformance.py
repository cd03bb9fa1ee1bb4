"""Real answers keep to the spec's schemas, strictly: games played to the end
under options that produce every event type, every body checked against the
schema the spec declares for its operation, status and media type (no field
left undeclared: the spec's objects forbid other properties), every event
against its member of the ``Event`` union, and every contract header sent
declared by the operation's answer."""

from __future__ import annotations

import re
import uuid
from typing import Any

import jsonschema
import pytest
from flask.testing import FlaskClient

from service.api.problems import CODES, answer_for
from service.api.schemas.event_schemas import EVENT_SCHEMAS
from service.engine.errors import EngineError
from service.hosting.refusals import HostingError
from tests.api.conftest import Game, until
from tests.api.test_fairplay import expire_deadline

CONTRACT_HEADERS = ("ETag", "Location", "Retry-After", "Idempotent-Replayed", "WWW-Authenticate")


def json_schema(node: Any) -> Any:
    """An OpenAPI 3.0 schema as JSON Schema: ``nullable`` becomes a null type
    (or a null alternative of a composed or referenced schema)."""
    if isinstance(node, list):
        return [json_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    if not isinstance(node.get("nullable", False), bool):  # a map of names: properties...
        return {k: json_schema(v) for k, v in node.items()}
    out = {k: json_schema(v) for k, v in node.items() if k != "nullable"}
    if node.get("nullable"):
        if "type" in out:
            out["type"] = [out["type"], "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


class Spec:
    """The served spec, to check answers against (:meth:`check`)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.components = json_schema(spec["components"])
        self.routes = [
            (re.compile("^" + re.sub(r"\{[a-z_]+\}", "[^/]+", path) + "$"), path)
            for path in spec["paths"]
        ]
        self.seen: set[tuple[str, str, str]] = set()

    def validate(self, instance: Any, schema: dict[str, Any]) -> None:
        jsonschema.Draft7Validator(
            {"components": self.components, "allOf": [json_schema(schema)]}
        ).validate(instance)

    def answer(self, method: str, path: str, status: int) -> dict[str, Any]:
        template = next(t for pattern, t in self.routes if pattern.match(path.split("?")[0]))
        responses = self.spec["paths"][template][method.lower()]["responses"]
        assert str(status) in responses, (method, template, status)
        answer = responses[str(status)]
        if "$ref" in answer:
            answer = self.spec["components"]["responses"][answer["$ref"].rsplit("/", 1)[1]]
        self.seen.add((method, template, str(status)))
        return answer

    def check(self, method: str, path: str, response: Any) -> None:
        answer = self.answer(method, path, response.status_code)
        declared = set(answer.get("headers", {}))
        for header in CONTRACT_HEADERS:
            if header in response.headers:
                assert header in declared, (method, path, response.status_code, header)
        if response.status_code == 304:
            return
        content = answer["content"][response.mimetype]
        body = response.get_json()
        self.validate(body, content["schema"])
        if response.status_code >= 400:
            assert body["code"] in CODES


class CheckedClient:
    """The Flask test client, every answer checked against the spec."""

    def __init__(self, client: FlaskClient, spec: Spec) -> None:
        self.client = client
        self.spec = spec

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.client.open(path, method=method, **kwargs)
        self.spec.check(method, path, response)
        return response

    def create(self, players: list[dict[str, Any]], **body: Any) -> Game:
        response = self.request("POST", "/v1/games", json={"players": players, **body})
        assert response.status_code == 201, response.get_json()
        game = Game(self.client, response.get_json()["id"])
        game.tokens = {
            p["seat"]: p["token"] for p in response.get_json()["players"] if "token" in p
        }
        return game

    def view(self, game: Game, seat: int) -> dict[str, Any]:
        response = self.request("GET", f"/v1/games/{game.id}/view", headers=game.auth(seat))
        assert response.status_code == 200
        body: dict[str, Any] = response.get_json()
        return body

    def move(self, game: Game, seat: int, move: dict[str, Any], **headers: str) -> Any:
        return self.request(
            "POST", f"/v1/games/{game.id}/moves", json=move, headers={**game.auth(seat), **headers}
        )

    def events(self, game: Game, seat: int | None = None) -> list[dict[str, Any]]:
        headers = game.auth(seat) if seat is not None else {}
        response = self.request("GET", f"/v1/games/{game.id}/events", headers=headers)
        events: list[dict[str, Any]] = response.get_json()["events"]
        return events

    def play(self, game: Game, turns: int, *, keep_drawing: bool = False) -> None:
        """Play ``turns`` turns greedily (go out when possible, else draw and
        discard the costliest deadwood), or, with ``keep_drawing``, draw from the
        stock and discard the card drawn (nobody goes out: the stock runs out)."""
        for _turn in range(turns):
            game.settled()  # the bot worker plays the bots' turns
            public = self.request("GET", f"/v1/games/{game.id}").get_json()
            if public["round"] is None:
                return
            seat = public["round"]["turn"]
            view = self.view(game, seat)
            if view["round"]["phase"] == "draw":
                view = self.move(game, seat, {"type": "draw", "source": "stock"}).get_json()
            moves = view["legal_moves"]
            go_out = [m for m in moves if m["type"] == "go_out"]
            discards = [m for m in moves if m["type"] == "discard"]
            if keep_drawing:
                drawn = self.events(game, seat)[-1]
                move = next((m for m in discards if m["card"] == drawn.get("card")), discards[0])
            elif go_out:
                move = go_out[0]
            else:
                dead = view["arrangement"]["deadwood"]
                move = next((m for m in discards if dead and m["card"] == dead[-1]), discards[0])
            assert self.move(game, seat, move).status_code == 200


@pytest.fixture
def spec(client: FlaskClient) -> Spec:
    return Spec(client.get("/openapi.json").get_json())


@pytest.fixture
def checked(client: FlaskClient, spec: Spec) -> CheckedClient:
    return CheckedClient(client, spec)


def check_events(spec: Spec, events: list[dict[str, Any]]) -> set[str]:
    """Every event against the ``Event`` union (exactly one member matches); the types seen."""
    for event in events:
        spec.validate(event, {"$ref": "#/components/schemas/Event"})
    return {e["type"] for e in events}


def test_every_event_type_and_answer_keeps_to_the_spec(checked, spec, redis_client, client):
    seen: set[str] = set()
    # a game with the lay-off variant and false go-out penalties, played to its end
    party = checked.create(
        [{"name": "ann"}, {"name": "bob"}],
        options={"lay_off": True, "false_go_out_penalty": 20, "max_turns_per_round": 6},
        seed="spec-conformance",
    )
    seat = checked.request("GET", f"/v1/games/{party.id}").get_json()["round"]["turn"]
    checked.move(party, seat, {"type": "draw", "source": "stock"})
    hand = checked.view(party, seat)["hand"]
    refused = checked.move(party, seat, {"type": "go_out", "discard": hand[0], "melds": [hand[1:]]})
    assert refused.status_code == 200  # a false claim costs points and is refused
    checked.play(party, 200)
    for viewer in (0, 1, None):
        seen |= check_events(spec, checked.events(party, viewer))
    # its replay and rematch
    checked.request("GET", f"/v1/games/{party.id}/replay")
    for player in (0, 1):
        again = checked.request("POST", f"/v1/games/{party.id}/rematch", headers=party.auth(player))
        assert again.status_code == 201
    seen |= check_events(spec, checked.events(party))
    seen |= check_events(spec, checked.events(Game(client, again.get_json()["id"])))

    # a long round: the stock runs out and is reshuffled
    long = checked.create([{"name": "ann"}, {"name": "bob"}], seed="spec-conformance")
    checked.play(long, 50, keep_drawing=True)
    seen |= check_events(spec, checked.events(long, 0))

    # bots, a waiting game, the turn timer and the autopilot
    lobby = checked.create(
        [{"name": "ann"}, {"name": "bot", "bot": "basic"}],
        seats=3,
        turn_timeout_seconds=60,
        autopilot_after_missed_turns=1,
    )
    joined = checked.request("POST", f"/v1/games/{lobby.id}/players", json={"name": "cy"})
    lobby.tokens[2] = joined.get_json()["token"]
    checked.play(lobby, 6)
    turn = lobby.settled()["round"]["turn"]
    expire_deadline(redis_client, lobby.id)
    until(lambda: lobby.public()["players"][turn]["autopilot"])  # the bot worker played it
    checked.request("GET", f"/v1/games/{lobby.id}")
    checked.request("DELETE", f"/v1/games/{lobby.id}/autopilot", headers=lobby.auth(turn))
    checked.request(
        "POST", f"/v1/games/{lobby.id}/autopilot", json={"level": "random"}, headers=lobby.auth(0)
    )
    seen |= check_events(spec, checked.events(lobby, 0)) | check_events(spec, checked.events(lobby))

    # the lobby: a listed game, renamed, left and cancelled; quick-join; a resignation
    listed = checked.create([{"name": "ann"}], seats=2, listed=True)
    assert checked.request("GET", "/v1/games?status=waiting&limit=5").status_code == 200
    assert checked.request("GET", f"/v1/games/{listed.id}").get_json()["listed"] is True
    seat = f"/v1/games/{listed.id}/seat"
    assert (
        checked.request("PATCH", seat, json={"name": "di"}, headers=listed.auth(0)).status_code
        == 200
    )
    assert checked.request("DELETE", seat, headers=listed.auth(0)).status_code == 200
    assert checked.request("GET", f"/v1/games/{listed.id}").get_json()["status"] == "cancelled"
    seen |= check_events(spec, checked.events(listed))
    for name in ("eve", "fay"):
        seated = checked.request("POST", "/v1/lobby/quick-join", json={"name": name, "seats": 2})
        assert seated.status_code in (200, 201), seated.get_json()
    quick = Game(client, seated.get_json()["id"])
    quick.tokens[seated.get_json()["seat"]] = seated.get_json()["token"]
    resigned = checked.request(
        "POST", f"/v1/games/{quick.id}/resign", headers=quick.auth(seated.get_json()["seat"])
    )
    assert resigned.status_code == 200, resigned.get_json()
    seen |= check_events(spec, checked.events(quick))

    # a game with a webhook: its one-time secret and token, and its delivery log
    hooked = checked.request(
        "POST",
        "/v1/games",
        json={
            "players": [{"name": "ann"}],
            "seats": 2,
            "webhook": {"url": "https://hooks.example.com/t13"},
        },
    )
    assert hooked.status_code == 201, hooked.get_json()
    created = hooked.get_json()
    log = checked.request(
        "GET",
        f"/v1/games/{created['id']}/webhook",
        headers={"Authorization": f"Bearer {created['webhook']['token']}"},
    )
    assert log.status_code == 200, log.get_json()

    # an app's abort (apps mode): tests/apps/test_app_admin.py checks its event
    assert seen == set(EVENT_SCHEMAS) - {"game_aborted"}, set(EVENT_SCHEMAS) - seen


def test_conditional_and_idempotent_answers_declare_their_headers(checked, spec):
    game = checked.create([{"name": "ann"}, {"name": "bob"}])
    public = checked.request("GET", f"/v1/games/{game.id}")
    etag = public.headers["ETag"]
    assert (
        checked.request("GET", f"/v1/games/{game.id}", headers={"If-None-Match": etag}).status_code
        == 304
    )
    seat = public.get_json()["round"]["turn"]
    stale = checked.move(game, seat, {"type": "draw", "source": "stock"}, **{"If-Match": '"0"'})
    assert stale.status_code == 412 and stale.get_json()["current_version"] == 1
    key = str(uuid.uuid4())
    first = checked.move(
        game, seat, {"type": "draw", "source": "stock"}, **{"Idempotency-Key": key}
    )
    again = checked.move(
        game, seat, {"type": "draw", "source": "stock"}, **{"Idempotency-Key": key}
    )
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()
    reused = checked.move(
        game, seat, {"type": "draw", "source": "discard"}, **{"Idempotency-Key": key}
    )
    assert reused.get_json()["code"] == "IDEMPOTENCY_KEY_REUSED"


def test_other_answers_and_problems_keep_to_the_spec(checked, spec):
    game = checked.create([{"name": "ann"}, {"name": "bob"}])
    checked.request("GET", "/v1/rulesets")
    checked.request(
        "POST", "/v1/hands/evaluate", json={"cards": ["7H", "8H", "9H", "KD"], "round": 3}
    )
    checked.request("GET", "/healthz")
    checked.request("GET", "/readyz")
    checked.request("POST", f"/v1/games/{game.id}/stream-tickets", headers=game.auth(0))
    problems = [
        checked.request("POST", "/v1/games", data="{", content_type="application/json"),
        checked.request("POST", "/v1/games", json={"players": [{"name": ""}]}),
        checked.request(
            "POST", "/v1/games", json={"players": [{"name": "a"}], "options": {"aces": 1}}
        ),
        checked.request("GET", f"/v1/games/{game.id}/view"),
        checked.request("GET", "/v1/games/nosuchgame"),
        checked.request("GET", f"/v1/games/{game.id}/replay"),
        checked.request("POST", f"/v1/games/{game.id}/players", json={"name": "cy"}),
        checked.move(game, 0, {"type": "fly"}),
        checked.move(game, 0, {"type": "discard", "card": "ZZ"}),
        checked.request("GET", f"/v1/games/{game.id}/events?after=x"),
    ]
    public = checked.request("GET", f"/v1/games/{game.id}").get_json()
    problems.append(
        checked.move(game, 1 - public["round"]["turn"], {"type": "draw", "source": "stock"})
    )
    assert {p.status_code for p in problems} == {400, 401, 404, 409, 422}


def test_every_engine_and_hosting_error_is_answered_with_a_code_of_the_enum(app):
    def subclasses(cls: type) -> list[type]:
        return [cls, *(s for sub in cls.__subclasses__() for s in subclasses(sub))]

    with app.app_context():
        for error in subclasses(EngineError) + subclasses(HostingError):
            answer = answer_for(error("refused"))
            assert answer.get_json()["code"] in CODES, error


OPEN_MAPS = {("Problem", "errors")}
"""The one property whose values are free: marshmallow's messages, nested by field."""


def test_no_schema_of_the_spec_leaves_a_field_untyped(spec):
    def typed(node: dict[str, Any]) -> bool:
        return bool({"type", "$ref", "allOf", "oneOf", "anyOf"} & set(node))

    for name, schema in spec.spec["components"]["schemas"].items():
        if "oneOf" in schema or "enum" in schema:
            assert "oneOf" not in schema or "mapping" in schema["discriminator"], name
            continue
        assert schema.get("additionalProperties") is False, name
        for field, prop in schema["properties"].items():
            if (name, field) in OPEN_MAPS:
                continue
            assert typed(prop), (name, field)
            for inner in (prop.get("items"), prop.get("additionalProperties")):
                assert inner is None or inner is False or typed(inner), (name, field)


def test_the_request_examples_are_accepted(checked, spec):
    """What /docs "Try it out" sends by default: each operation's request example,
    sent to a game where the seat to play acts, is answered 2xx."""
    sent = 0
    for template, item in spec.spec["paths"].items():
        for method, operation in item.items():
            if method == "parameters" or "requestBody" not in operation:
                continue
            if {"players", "app"} & set(operation.get("tags", ())):  # apps mode: tests/apps
                continue
            media = operation["requestBody"]["content"]["application/json"]
            game = checked.create([{"name": "ann"}, {"name": "bob"}])
            turn = checked.request("GET", f"/v1/games/{game.id}").get_json()["round"]["turn"]
            if template.endswith(("/players", "/seat")):  # before the start
                game = checked.create([{"name": "ann"}], seats=2)
                turn = 0
            path = template.replace("{game_id}", game.id)
            answer = checked.request(
                method.upper(), path, json=media["example"], headers=game.auth(turn)
            )
            assert answer.status_code in (200, 201), (template, answer.get_json())
            sent += 1
    assert sent >= 5  # create, join, move, autopilot, evaluate
