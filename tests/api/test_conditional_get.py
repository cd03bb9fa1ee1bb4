"""A conditional GET of the public view (a client polling) reads only the game's
version when it is answered 304, and the whole saved view otherwise."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from tests.api.conftest import create_game, store_reads


def test_a_304_reads_no_view_and_a_changed_game_answers_its_view(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = store_reads(monkeypatch, "load_public")
    game = create_game(client, [{"name": "a"}, {"name": "b"}], seed="conditional")
    path = f"/v1/games/{game.id}"
    unchanged = client.get(path, headers={"If-None-Match": '"1"'})  # a bare version: trusted
    etag = unchanged.headers["ETag"]
    assert unchanged.status_code == 304 and etag.startswith('"1.')
    assert unchanged.get_data() == b"" and reads == []
    assert client.get(path, headers={"If-None-Match": etag}).status_code == 304
    # the same version of another history (another last event): not the client's
    seq, tag = etag.strip('"').split(".")[1:]
    other = f'"1.{seq}.{"0" * 16 if tag != "0" * 16 else "1" * 16}"'
    assert client.get(path, headers={"If-None-Match": other}).status_code == 200
    seat = game.public()["round"]["turn"]
    assert game.move(seat, {"type": "draw", "source": "stock"}).status_code == 200
    reads.clear()
    reads.clear()
    changed = client.get(path, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["ETag"].startswith('"2.')
    assert changed.get_json() == game.public() and reads == [game.id, game.id]
    missing = client.get("/v1/games/no-such-game", headers={"If-None-Match": '"1"'})
    assert missing.status_code == 404
