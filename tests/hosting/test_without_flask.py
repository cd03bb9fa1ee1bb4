"""The hosting layer is plain Python over a store: moves committed, quick-joins
seated and idempotent writes replayed with no Flask app, no request and no
context -- only a :class:`GameStore` on the session's throwaway redis-server and
a :class:`Config` (the fixtures of tests/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import flask
import orjson
import pytest

from service.config import Config
from service.engine.moves import Move
from service.hosting import game_creation, lobby_listing, matchmaking, seating, write_loop
from service.hosting.record import GameRecord
from service.hosting.refusals import (
    HistoryDivergedError,
    IdempotencyKeyReusedError,
    VersionMismatchError,
)
from service.hosting.saved_answers import Idempotency, replayed
from service.hosting.snapshots import snapshot
from service.hosting.write_loop import Write
from service.store import GameStore, IdempotentReplay
from service.store.history import Position, event_id

DRAW = Move.parse("draw stock")


def _new_game(store: GameStore, config: Config) -> str:
    record, _tokens, events = seating.create_record(
        [{"name": "ann"}, {"name": "bob"}], 2, "classic", {}, None, False
    )
    write_loop.create_game(store, config, record, events)
    return record.id


def _to_move(record: GameRecord) -> int:
    assert record.state is not None and record.state.round is not None
    return record.state.round.turn


def _draw(version: int, record: GameRecord) -> tuple[Write, int]:
    events = record.play(_to_move(record), DRAW)
    return Write(events, snapshot(record, version + 1)), version + 1


def test_hosting_imports_no_flask() -> None:
    """The modules of the layer load without Flask (nor the API) in the process."""
    code = (
        "import sys\n"
        "import service.hosting.write_loop, service.hosting.matchmaking\n"
        "import service.hosting.lobby_listing, service.hosting.saved_answers\n"
        "print(sorted(m for m in sys.modules if m == 'flask' or m.startswith('service.api')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


def test_a_move_is_committed_without_a_request(store: GameStore, config: Config) -> None:
    game_id = _new_game(store, config)
    assert not flask.has_app_context() and not flask.has_request_context()
    version, before, first_last = write_loop.current(store, config, game_id)
    seat = _to_move(before)
    assert version == 1

    new_version, drawn_last = write_loop.optimistic_write(store, config, game_id, _draw)
    assert new_version == 2 and drawn_last.seq > first_last.seq

    version, after, last = write_loop.current(store, config, game_id)
    assert version == 2 and last == drawn_last
    assert after.state is not None and after.state.round is not None
    assert len(after.state.round.hands[seat]) == len(before.state.round.hands[seat]) + 1
    kinds = [event["type"] for event in write_loop.public_events(store, game_id)]
    assert kinds[-1] == "drew"
    saved = store.load_public(game_id)
    assert saved is not None and saved[0] == 2  # the views were saved with the write
    assert saved.last == last  # with the last event the version's ETag names


def test_a_stale_expected_version_changes_nothing(store: GameStore, config: Config) -> None:
    game_id = _new_game(store, config)
    write_loop.optimistic_write(store, config, game_id, _draw)
    with pytest.raises(VersionMismatchError) as refused:
        write_loop.optimistic_write(store, config, game_id, _draw, expected=(1, None))
    assert refused.value.current_version == 2
    assert write_loop.current(store, config, game_id)[0] == 2


def test_an_expected_event_of_another_history_is_refused(store: GameStore, config: Config) -> None:
    game_id = _new_game(store, config)
    version, _record, last = write_loop.current(store, config, game_id)
    assert last.tag  # every event is tagged
    other = Position(last.seq, "0" * 16 if last.tag != "0" * 16 else "1" * 16)
    with pytest.raises(HistoryDivergedError) as refused:
        write_loop.optimistic_write(store, config, game_id, _draw, expected=(version, other))
    extra = refused.value.extra()
    assert extra["current_version"] == version and extra["shared_seq"] < last.seq
    assert write_loop.current(store, config, game_id)[0] == version  # nothing written
    # the game's own state is accepted, and so is a bare version (on trust)
    for expected in ((version, last), (version, None)):
        assert write_loop.optimistic_write(
            store, config, game_id, lambda v, _r: (None, v), expected=expected
        ) == (version, last)


def test_an_idempotent_write_is_replayed_not_made_twice(store: GameStore, config: Config) -> None:
    game_id = _new_game(store, config)
    idem = Idempotency.of(f"{game_id}\0seat", "3f2b8c4e-9d1a-4f6b-8e2c", b"POST draw stock")

    def keyed(version: int, record: GameRecord) -> tuple[Write, dict[str, Any]]:
        write, new_version = _draw(version, record)
        answer = {"version": new_version, "token": "secret-token"}
        saved = idem.record(200, answer, new_version)
        return Write(write.events, write.saved, saved), answer

    first, last = write_loop.optimistic_write(store, config, game_id, keyed, idem=idem)
    with pytest.raises(IdempotentReplay) as again:
        write_loop.optimistic_write(store, config, game_id, keyed, idem=idem)
    answer = replayed(idem, again.value.fingerprint, again.value.response)
    assert (answer.status, answer.body, answer.version) == (200, first, 2)
    assert again.value.last == event_id(last.seq, last.tag or "").encode()  # for its ETag
    assert b"secret-token" not in again.value.response  # saved masked
    assert write_loop.current(store, config, game_id)[0] == 2  # drawn once

    other = Idempotency.of(f"{game_id}\0seat", "3f2b8c4e-9d1a-4f6b-8e2c", b"POST discard")
    with pytest.raises(IdempotentReplay) as reused:
        write_loop.optimistic_write(store, config, game_id, keyed, idem=other)
    with pytest.raises(IdempotencyKeyReusedError):
        replayed(other, reused.value.fingerprint, reused.value.response)


def _quick_join(
    store: GameStore, config: Config, name: str, idem: Idempotency | None = None
) -> dict[str, Any]:
    body = {
        "name": name,
        "ruleset": "classic",
        "options": {},
        "seats": 2,
        "turn_timeout_seconds": None,
        "autopilot_after_missed_turns": None,
    }
    answer, last = matchmaking.quick_join(
        store, config, body, idem, address="127.0.0.1", location=lambda game: f"/v1/games/{game}"
    )
    assert last == write_loop.current(store, config, answer["id"])[2]  # its ETag's event
    return answer


def test_quick_join_seats_two_strangers_at_one_table(store: GameStore, config: Config) -> None:
    first = _quick_join(store, config, "ann")
    second = _quick_join(store, config, "bob")
    assert (first["created"], first["seat"], first["status"]) == (True, 0, "waiting")
    assert (second["created"], second["seat"], second["status"]) == (False, 1, "playing")
    assert second["id"] == first["id"] and second["token"] != first["token"]
    version, record, _last = write_loop.current(store, config, first["id"])
    assert version == second["version"] == 2
    assert [seat.name for seat in record.seats] == ["ann", "bob"]
    assert record.listed and record.status == "playing"


def test_a_keyed_quick_join_is_replayed(store: GameStore, config: Config) -> None:
    idem = Idempotency.of("quick-join", "q8Zr2LxV0nWbT5yKpD3sHc", orjson.dumps({"name": "ann"}))
    first = _quick_join(store, config, "ann", idem)
    with pytest.raises(IdempotentReplay) as again:
        _quick_join(store, config, "ann", idem)
    answer = replayed(idem, again.value.fingerprint, again.value.response)
    assert answer.status == 201 and answer.body == first
    assert answer.headers == {"Location": f"/v1/games/{first['id']}"}
    _version, record, _last = write_loop.current(store, config, first["id"])
    assert [seat.name for seat in record.seats] == ["ann", None]  # seated once


def test_a_keyed_create_is_made_once(store: GameStore, config: Config) -> None:
    idem = Idempotency.of("create", "0f1e2d3c4b5a69788796a5b4c3d2e1f0", b"POST /v1/games {}")
    body = {"players": [{"name": "ann"}], "seats": 2, "ruleset": "classic", "options": {},
            "listed": True}  # fmt: skip
    made = game_creation.create(
        store, config, body, idem, address="127.0.0.1", location=lambda game: f"/g/{game}"
    )
    assert made.headers == {"Location": f"/g/{made.body['id']}"}
    assert made.last == write_loop.current(store, config, made.body["id"])[2]
    assert [p["name"] for p in made.body["players"]] == ["ann"] and made.body["version"] == 1
    earlier = game_creation.earlier_answer(store, idem)
    assert earlier is not None
    answer = replayed(idem, earlier[0], earlier[1])
    assert (answer.status, answer.body) == (201, made.body)
    assert earlier[2] == event_id(made.last.seq, made.last.tag or "").encode()
    with pytest.raises(IdempotentReplay):  # the same request again makes nothing new
        game_creation.create(
            store, config, body, idem, address="127.0.0.1", location=lambda game: f"/g/{game}"
        )
    assert write_loop.current(store, config, made.body["id"])[0] == 1


def test_the_lobby_lists_a_quick_join_table(store: GameStore, config: Config) -> None:
    seated = _quick_join(store, config, "ann")
    games, cursor = lobby_listing.listing(store, config, "waiting", None, 20, None, None)
    assert [game["id"] for game in games] == [seated["id"]] and cursor is None
    _quick_join(store, config, "bob")  # the table fills: it leaves the waiting games
    assert lobby_listing.listing(store, config, "waiting", None, 20, None, None) == ([], None)
    playing, _next = lobby_listing.listing(store, config, "playing", None, 20, None, None)
    assert [game["id"] for game in playing] == [seated["id"]]
