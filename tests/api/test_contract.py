"""The fixed points of API.md: lobby, views, conditional requests, idempotency."""

from __future__ import annotations

import threading
import time

from prometheus_client.parser import text_string_to_metric_families

from service.store import VersionConflict
from tests.api.conftest import create_game


def test_create_returns_tokens_location_and_etag(client):
    response = client.post("/v1/games", json={"players": [{"name": "ann"}, {"name": "bob"}]})
    assert response.status_code == 201
    body = response.get_json()
    assert response.headers["Location"] == f"/v1/games/{body['id']}"
    assert response.headers["ETag"].startswith(f'"{body["version"]}.')
    assert body["status"] == "playing"
    assert [p["seat"] for p in body["players"]] == [0, 1]
    assert all(len(p["token"]) >= 43 for p in body["players"])  # 256 bits, base64url
    assert len(body["id"]) >= 22  # 128 bits


def test_lobby_join_deals_when_full(client):
    game = create_game(client, [{"name": "ann"}], seats=3)
    public = game.public()
    assert public["status"] == "waiting"
    assert public["open_seats"] == [1, 2]
    assert public["round"] is None
    moved = game.move(0, {"type": "draw", "source": "stock"})
    assert moved.status_code == 409
    assert moved.get_json()["code"] == "GAME_NOT_IN_PROGRESS"
    joined = client.post(f"/v1/games/{game.id}/players", json={"name": "bob"})
    assert joined.status_code == 201
    assert joined.get_json()["seat"] == 1
    assert game.public()["status"] == "waiting"
    last = client.post(f"/v1/games/{game.id}/players", json={"name": "cy"})
    assert last.get_json()["seat"] == 2
    game.tokens[1] = joined.get_json()["token"]
    game.tokens[2] = last.get_json()["token"]
    public = game.public()
    assert public["status"] == "playing"
    assert public["round"]["number"] == 1
    assert [p["hand_size"] for p in public["players"]] == [3, 3, 3]
    full = client.post(f"/v1/games/{game.id}/players", json={"name": "dan"})
    assert full.status_code == 409
    assert full.get_json()["code"] == "GAME_FULL"
    assert full.headers["Content-Type"] == "application/problem+json"


def test_etag_and_if_none_match(new_game):
    game = new_game()
    first = game.client.get(f"/v1/games/{game.id}")
    etag = first.headers["ETag"]
    again = game.client.get(f"/v1/games/{game.id}", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.headers["ETag"] == etag
    seat = first.get_json()["round"]["turn"]
    view = game.client.get(
        f"/v1/games/{game.id}/view", headers={**game.auth(seat), "If-None-Match": etag}
    )
    assert view.status_code == 304
    assert game.move(seat, {"type": "draw", "source": "stock"}).status_code == 200
    changed = game.client.get(f"/v1/games/{game.id}", headers={"If-None-Match": etag})
    assert changed.status_code == 200
    assert changed.headers["ETag"] != etag


def test_stale_if_match_is_412_and_changes_nothing(new_game):
    game = new_game()
    public = game.public()
    seat, version = public["round"]["turn"], public["version"]
    stale = game.move(seat, {"type": "draw", "source": "stock"}, **{"If-Match": f'"{version - 1}"'})
    assert stale.status_code == 412
    assert stale.get_json()["code"] == "PRECONDITION_FAILED"
    assert game.public()["version"] == version
    fresh = game.move(seat, {"type": "draw", "source": "stock"}, **{"If-Match": f'"{version}"'})
    assert fresh.status_code == 200
    assert fresh.get_json()["version"] == version + 1


def test_a_token_holding_no_seat_is_401_before_a_stale_if_match(new_game):
    """Who may move is answered before whether the version is current: a stranger
    learns nothing of the game's version from a 412."""
    game = new_game()
    public = game.public()
    version = public["version"]
    answer = game.client.post(
        f"/v1/games/{game.id}/moves",
        json={"type": "draw", "source": "stock"},
        headers={"Authorization": "Bearer " + "x" * 43, "If-Match": f'"{version - 1}"'},
    )
    assert answer.status_code == 401, answer.get_json()
    assert answer.get_json()["code"] == "UNAUTHORIZED"
    assert game.public()["version"] == version


def test_idempotency_key_replays_and_rejects_other_bodies(new_game):
    game = new_game()
    public = game.public()
    seat, version = public["round"]["turn"], public["version"]
    key = {"Idempotency-Key": "draw-1"}
    first = game.move(seat, {"type": "draw", "source": "stock"}, **key)
    second = game.move(seat, {"type": "draw", "source": "stock"}, **key)
    assert first.status_code == second.status_code == 200
    assert first.get_json() == second.get_json()
    assert second.headers["Idempotent-Replayed"] == "true"
    assert game.public()["version"] == version + 1
    other = game.move(seat, {"type": "draw", "source": "discard"}, **key)
    assert other.status_code == 422
    assert other.get_json()["code"] == "IDEMPOTENCY_KEY_REUSED"
    assert game.public()["version"] == version + 1


def test_idempotency_keys_are_per_player(new_game):
    game = new_game()
    seat = game.public()["round"]["turn"]
    other = 1 - seat
    key = {"Idempotency-Key": "k"}
    assert game.move(seat, {"type": "draw", "source": "stock"}, **key).status_code == 200
    response = game.move(other, {"type": "draw", "source": "stock"}, **key)
    assert response.status_code == 409
    assert response.get_json()["code"] == "NOT_YOUR_TURN"


def test_events_public_private_and_long_poll(new_game):
    game = new_game()
    seat = game.public()["round"]["turn"]
    public_events = game.events()
    assert all("private" not in e for e in public_events)
    assert [e["seq"] for e in public_events] == sorted(e["seq"] for e in public_events)
    mine = game.events(seat)
    dealt = [e for e in mine if e["type"] == "dealt"]
    assert [e["seat"] for e in dealt] == [seat]
    last = game.client.get(f"/v1/games/{game.id}/events").get_json()["last_seq"]

    def later_move():
        time.sleep(0.5)
        game.move(seat, {"type": "draw", "source": "stock"})

    mover = threading.Thread(target=later_move)
    started = time.monotonic()
    mover.start()
    waited = game.client.get(f"/v1/games/{game.id}/events?after={last}&wait=10")
    mover.join()
    elapsed = time.monotonic() - started
    assert waited.status_code == 200
    events = waited.get_json()["events"]
    assert [e["type"] for e in events][:1] == ["drew"]
    assert "card" not in events[0]  # a stock draw's card is private
    assert elapsed < 8
    own = game.events(seat, after=last)
    assert any(e.get("private") and "card" in e for e in own)
    other = game.events(1 - seat, after=last)
    assert not any("card" in e for e in other if e["type"] == "drew")


def test_events_wait_times_out_empty(new_game):
    game = new_game()
    page = game.client.get(f"/v1/games/{game.id}/events").get_json()
    last, last_id = page["last_seq"], page["last_id"]
    assert last_id.startswith(f"{last}.")
    started = time.monotonic()
    response = game.client.get(f"/v1/games/{game.id}/events?after={last_id}&wait=1")
    assert response.get_json() == {"events": [], "last_seq": last, "last_id": last_id}
    assert time.monotonic() - started >= 0.9


def test_rulesets_lists_presets_options_and_bots(client):
    body = client.get("/v1/rulesets").get_json()
    names = [r["name"] for r in body["rulesets"]]
    assert names[:1] == ["classic"] and "finnish" in names and "party" in names
    options = {o["name"]: o for o in body["options"]}
    assert options["aces"]["allowed"] == ["low", "high_or_low"]
    assert options["jokers_per_deck"]["default"] == 0
    assert "random" in body["bots"]


def test_evaluate_worked_examples(client):
    def evaluate(cards, **extra):
        response = client.post("/v1/hands/evaluate", json={"cards": cards.split(), **extra})
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    assert evaluate("2C 2D 8S 9S JH QH KH", wild_rank="7")["points"] == 21
    assert evaluate("7C 7D AS 5H", wild_rank="7")["points"] == 1
    assert evaluate("7C AS 5H", round=5)["points"] == 13
    assert evaluate("7C AS 5H", wild_rank="7", options={"unused_wild_points": 15})["points"] == 21
    best = evaluate("4H 5H 6H 9C 9D 7S", wild_rank="7")
    assert best["deadwood"] == [] and len(best["melds"]) == 2
    # as many copies of a card as the most decks a game may have: one set
    assert evaluate("as " * 12, wild_rank="7")["points"] == 0


def test_evaluate_refuses_more_copies_than_decks(client):
    """16 aces of spades: more than 12 decks hold; the solver's multiset counts to 15."""
    for cards in (["AS"] * 16, ["AS"] * 13 + ["JK"]):
        response = client.post("/v1/hands/evaluate", json={"cards": cards, "wild_rank": "7"})
        assert response.status_code == 422
        problem = response.get_json()
        assert problem["code"] == "MALFORMED" and "12 decks" in problem["detail"]


def test_ops_endpoints(client):
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 200
    metrics = client.get("/metrics")
    assert b"t13_http_requests_total" in metrics.data
    docs = client.get("/docs")
    assert docs.status_code == 200
    assert b"http" not in docs.data.replace(b"http-equiv", b"")  # no CDN, all local
    assert client.get("/docs/static/swagger-ui-bundle.js").status_code == 200


def _sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample of the Prometheus text exposition (0 if absent)."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    return 0.0


def test_metrics_count_routes_errors_and_tame_methods(client, new_game):
    game = new_game()
    before = client.get("/metrics").get_data(as_text=True)
    client.get(f"/v1/games/{game.id}")
    client.get("/v1/games/no-such-game")
    client.open(f"/v1/games/{game.id}", method="BREW")
    after = client.get("/metrics").get_data(as_text=True)

    def grew(name: str, **labels: str) -> float:
        return _sample(after, name, **labels) - _sample(before, name, **labels)

    route = "/v1/games/<game_id:game_id>"
    counted = {"method": "GET", "route": route, "app": "none"}  # open mode: no app
    assert grew("t13_http_requests_total", **counted, status="200") == 1
    assert grew("t13_http_requests_total", **counted, status="404") == 1
    assert grew("t13_http_errors_total", code="GAME_NOT_FOUND") == 1
    # A method of the client's invention is not a label value of its own.
    assert (
        grew(
            "t13_http_requests_total", method="OTHER", route="<unmatched>", status="405", app="none"
        )
        == 1
    )
    assert "BREW" not in after


def test_metrics_count_accepted_moves_by_type(client, new_game):
    game = new_game()
    seat = game.public()["round"]["turn"]
    before = client.get("/metrics").get_data(as_text=True)
    assert game.move(seat, {"type": "draw", "source": "stock"}).status_code == 200
    assert game.move(seat, {"type": "draw", "source": "stock"}).status_code == 409
    assert game.move(seat, {"type": "draw", "source": "stock"}).status_code == 409
    after = client.get("/metrics").get_data(as_text=True)
    counted = [
        _sample(text, "t13_moves_total", type="draw", app="none") for text in (before, after)
    ]
    assert counted[1] - counted[0] == 1


def test_a_move_retried_after_a_lost_race_counts_once(app, client, new_game, monkeypatch):
    """The first commit loses a race (nothing written): the move is replayed on the
    reloaded game and saved; the metrics count the move that happened, once."""
    game = new_game()
    seat = game.public()["round"]["turn"]
    store = app.extensions["t13"].store
    commit, lost = store.commit, []

    def losing_once(game_id, expected_version, *args, **kwargs):
        if not lost:
            lost.append(expected_version)
            raise VersionConflict(expected_version)
        return commit(game_id, expected_version, *args, **kwargs)

    monkeypatch.setattr(store, "commit", losing_once)
    before = client.get("/metrics").get_data(as_text=True)
    assert game.move(seat, {"type": "draw", "source": "stock"}).status_code == 200
    after = client.get("/metrics").get_data(as_text=True)
    assert lost
    counted = [
        _sample(text, "t13_moves_total", type="draw", app="none") for text in (before, after)
    ]
    assert counted[1] - counted[0] == 1


def test_move_bodies_are_judged_every_time(new_game):
    """Short valid bodies are memoized once parsed; invalid ones must never be, and
    a memoized move still meets the game's rules each time."""
    game = new_game()
    seat = game.public()["round"]["turn"]
    for _ in range(2):
        bad = game.move(seat, {"type": "draw", "source": "sky"})
        assert bad.status_code == 422
        assert bad.get_json()["code"] == "VALIDATION_ERROR"
    draw = {"type": "draw", "source": "stock"}
    assert game.move(seat, draw).status_code == 200
    again = game.move(seat, draw)
    assert again.status_code == 409
    assert again.get_json()["code"] == "WRONG_PHASE"
