"""A replay costs little: an unfinished game is refused before its log is read,
a finished game's replay is built once and kept with the game (it never
changes), and replays are rate limited per address."""

from __future__ import annotations

from service.store.keys import REPLAY, STATE, key
from tests.api.conftest import create_game, make_app, store_reads, until
from tests.api.test_fairplay import finished_game


def test_an_unfinished_game_is_refused_before_its_log_is_read(client, monkeypatch):
    game = create_game(client, [{"name": "a"}, {"name": "b"}], seed="unfinished")
    reads = store_reads(monkeypatch, "events")
    answer = client.get(f"/v1/games/{game.id}/replay")
    assert answer.status_code == 409
    assert answer.get_json()["code"] == "GAME_NOT_FINISHED"
    assert reads == []


def test_a_finished_replay_is_built_once_and_kept_with_the_game(client, redis_client, monkeypatch):
    game = finished_game(client, seed="replay-once")
    # the archiver builds it once the game is finished (its archive holds it)
    until(lambda: redis_client.get(key(game.id, REPLAY)) is not None, 30, pause=0.1)
    saved = redis_client.get(key(game.id, REPLAY))
    assert saved is not None and saved.startswith(b'{"f":1,"r":')
    expiry = [
        redis_client.execute_command("PEXPIRETIME", key(game.id, name)) for name in (REPLAY, STATE)
    ]
    assert expiry[0] > 0 and abs(expiry[0] - expiry[1]) <= 1  # it goes with the game

    reads = store_reads(monkeypatch, "events")
    again = [client.get(f"/v1/games/{game.id}/replay") for _ in range(3)]
    assert reads == []  # nothing but the game's document and its replay are read
    first = again[0].get_json()
    assert all(a.status_code == 200 and a.get_json() == first for a in again)
    assert first["id"] == game.id and first["actions"]

    # a saved replay of another format, or none, is built again from every seat's
    # log, and saved over
    for gone in (
        lambda: redis_client.set(key(game.id, REPLAY), b'{"f":99,"r":{}}'),
        lambda: redis_client.delete(key(game.id, REPLAY)),
    ):
        gone()
        reads.clear()
        rebuilt = client.get(f"/v1/games/{game.id}/replay")
        assert rebuilt.get_json() == first and len(reads) >= 2
        assert redis_client.get(key(game.id, REPLAY)) == saved


def test_replays_are_limited_per_address(redis_client, redis_url):
    client = make_app(redis_url, RATE_LIMITS="true", RATE_LIMIT_REPLAY="2/minute").test_client()
    game = create_game(client, [{"name": "a"}, {"name": "b"}], seed="limited-replay")
    assert [client.get(f"/v1/games/{game.id}/replay").status_code for _ in range(2)] == [409, 409]
    limited = client.get(f"/v1/games/{game.id}/replay")
    assert limited.status_code == 429
    assert limited.get_json()["code"] == "RATE_LIMITED"
    assert 1 <= int(limited.headers["Retry-After"]) <= 60
    other = client.get(f"/v1/games/{game.id}/replay", environ_base={"REMOTE_ADDR": "10.9.8.7"})
    assert other.status_code == 409
