"""Conflicting writers never both succeed: the same move fired from many threads
at two app instances (separate stores, one Redis) lands exactly once."""

from __future__ import annotations

import threading
import uuid
from collections import Counter

import pytest

from tests.api.conftest import create_game, make_app

THREADS = 16


def fire(apps, game, seat, move, headers_for=lambda i: {}):
    barrier = threading.Barrier(THREADS)
    answers: list[tuple[int, dict]] = [None] * THREADS  # type: ignore[list-item]

    def worker(i: int) -> None:
        client = apps[i % len(apps)].test_client()
        barrier.wait()
        response = client.post(
            f"/v1/games/{game.id}/moves", json=move, headers={**game.auth(seat), **headers_for(i)}
        )
        answers[i] = (response.status_code, response.get_json())

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answers


@pytest.fixture
def two_apps(redis_client, redis_url):
    return [make_app(redis_url), make_app(redis_url)]


def new_game(apps):
    """A fresh two-player game: the game, its public view, the seat to play, the version."""
    game = create_game(apps[0].test_client(), [{"name": "a"}, {"name": "b"}])
    public = game.public()
    return game, public, public["round"]["turn"], public["version"]


def test_same_move_from_many_threads_lands_once(two_apps):
    game, public, seat, version = new_game(two_apps)
    answers = fire(two_apps, game, seat, {"type": "draw", "source": "stock"})
    statuses = Counter(status for status, _ in answers)
    assert statuses[200] == 1, statuses
    assert set(statuses) <= {200, 409}
    assert all(body["code"] == "WRONG_PHASE" for status, body in answers if status == 409)
    after = game.public()
    assert after["version"] == version + 1
    assert after["players"][seat]["hand_size"] == public["players"][seat]["hand_size"] + 1
    draws = [e for e in game.events() if e["type"] == "drew"]
    assert len(draws) == 1


def test_same_move_with_if_match_lands_once_and_losers_get_412(two_apps):
    game, _public, seat, version = new_game(two_apps)
    answers = fire(
        two_apps,
        game,
        seat,
        {"type": "draw", "source": "stock"},
        lambda i: {"If-Match": f'"{version}"'},
    )
    statuses = Counter(status for status, _ in answers)
    assert statuses[200] == 1, statuses
    assert set(statuses) <= {200, 412}
    assert game.public()["version"] == version + 1


def test_same_idempotency_key_from_many_threads_acts_once_and_all_see_one_answer(two_apps):
    game, _public, seat, version = new_game(two_apps)
    answers = fire(
        two_apps,
        game,
        seat,
        {"type": "draw", "source": "stock"},
        lambda i: {"Idempotency-Key": "same-draw"},
    )
    assert {status for status, _ in answers} == {200}
    bodies = {repr(body) for _, body in answers}
    assert len(bodies) == 1
    assert game.public()["version"] == version + 1


def test_a_retried_create_that_overtakes_the_first_gets_the_same_game(redis_client, redis_url):
    """The first request has found no game for its key; before it creates one, a
    retry with the same key creates it (with its answer). The first must then
    answer 201 as well, the same answer (it once answered 500 GameExists, seen in
    the soak): the game its key made is there, with the answer saved for the key."""
    app = make_app(redis_url)
    store = app.extensions["t13"].store
    client = app.test_client()
    body = {"players": [{"name": "a"}, {"name": "b"}]}
    headers = {"Idempotency-Key": uuid.uuid4().hex}
    retried: list[object] = []
    create = store.create

    def let_the_retry_in_then_create(game_id: str, *args: object, **kwargs: object) -> int:
        if not retried:
            retried.append(None)  # the retry's own create goes straight through
            retried[0] = app.test_client().post("/v1/games", json=body, headers=headers)
        return create(game_id, *args, **kwargs)

    store.create = let_the_retry_in_then_create
    first = client.post("/v1/games", json=body, headers=headers)
    (retry,) = retried
    assert first.status_code == 201, first.get_json()
    assert retry.status_code == 201 and first.headers["Idempotent-Replayed"] == "true"
    assert first.get_json() == retry.get_json()
    game_id = first.get_json()["id"]
    assert client.get(f"/v1/games/{game_id}").get_json()["version"] == 1


def test_racing_rematch_requests_make_one_game(redis_client, redis_url, bots_for):
    """Both players ask for the rematch at once: the second request reads the
    finished game before the first has linked its rematch.  Each once created a
    game of its own, and one of them was left unreachable; now there is one."""
    from service.store.keys import STATE, key
    from tests.api.test_fairplay import play_out

    app = make_app(redis_url)
    bots_for(app)
    client = app.test_client()
    game = create_game(client, [{"name": "ann"}, {"name": "bob"}], seed="rematch-race")
    for seat in (0, 1):
        client.post(
            f"/v1/games/{game.id}/autopilot", json={"level": "basic"}, headers=game.auth(seat)
        )
    play_out(game)
    store = app.extensions["t13"].store
    create = store.create
    inner: list[object] = []

    def create_while_the_other_asks(game_id: str, *args, **kwargs):
        if not inner:  # the other player's request runs through, in between
            inner.append(None)
            inner[0] = app.test_client().post(f"/v1/games/{game.id}/rematch", headers=game.auth(1))
        return create(game_id, *args, **kwargs)

    before = sum(1 for _ in redis_client.scan_iter(match=key("*", STATE)))
    store.create = create_while_the_other_asks
    first = client.post(f"/v1/games/{game.id}/rematch", headers=game.auth(0))
    store.create = create
    (second,) = inner
    assert first.status_code == second.status_code == 201, (first.get_json(), second.get_json())
    assert first.get_json()["id"] == second.get_json()["id"]
    assert sum(1 for _ in redis_client.scan_iter(match=key("*", STATE))) == before + 1
    assert game.public()["rematch"]["game"] == first.get_json()["id"]
    rematch = client.get(f"/v1/games/{first.get_json()['id']}").get_json()
    assert rematch["status"] == "playing"  # both seats claimed: dealt
