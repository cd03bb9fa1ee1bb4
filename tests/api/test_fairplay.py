"""Turn timers, autopilot seats, verified replays and rematches."""

from __future__ import annotations

import copy
import json
import time

import orjson

from service.engine.shuffle import commitment
from service.hosting.bot_turns import BOT_MOVES_PER_CALL
from service.hosting.replays import verify_replay
from service.hosting.verify import main as verify_main
from service.store import key
from service.store.keys import BOT_HINT, DUE, outbox_key, slot_of, wake_channel
from service.store.wakeups import parse_wake_up
from tests.api.conftest import create_game, until


def expire_deadline(redis_client, game_id: str) -> None:
    """Move the stored turn deadline into the past (as if the clock ran out), and
    the game's due time with it (told to the bot workers)."""
    state_key = key(game_id, "state")
    doc = orjson.loads(redis_client.hget(state_key, "d"))
    doc["timing"][2] = time.time() - 1
    redis_client.hset(state_key, mapping={"d": orjson.dumps(doc), "t": repr(doc["timing"][2])})
    due_ms = int(doc["timing"][2] * 1000)
    redis_client.zadd(outbox_key(slot_of(game_id), DUE), {game_id: due_ms})
    redis_client.publish(BOT_HINT, f"{slot_of(game_id)} {due_ms}")  # as a write does


def test_timed_out_turn_is_played_automatically_by_the_bot_worker(client, redis_client):
    game = create_game(client, [{"name": "a"}, {"name": "b"}], turn_timeout_seconds=60)
    public = game.public()
    seat, version = public["round"]["turn"], public["version"]
    assert public["timer"]["turn_timeout_seconds"] == 60
    assert public["timer"]["deadline"] > time.time() + 50
    expire_deadline(redis_client, game.id)
    after = until(lambda: (p := game.public())["version"] > version and p)
    assert after["round"]["turn"] == 1 - seat
    assert after["version"] == version + 1
    assert after["timer"]["deadline"] > time.time() + 50
    automatic = [e for e in game.events() if e.get("automatic")]
    kinds = [e["type"] for e in automatic]
    assert kinds[0] == "drew" and kinds[1] in ("discarded", "went_out")
    assert all(e["seat"] == seat for e in automatic)
    assert after["players"][seat]["autopilot"] is False


def test_missed_turns_hand_the_seat_to_a_bot_and_the_player_takes_it_back(client, redis_client):
    game = create_game(
        client,
        [{"name": "a"}, {"name": "b"}],
        turn_timeout_seconds=60,
        autopilot_after_missed_turns=1,
    )
    seat = game.public()["round"]["turn"]
    expire_deadline(redis_client, game.id)
    public = until(lambda: (p := game.public())["players"][seat]["autopilot"] and p)
    assert public["players"][seat]["bot"] == "basic"
    other = 1 - seat
    draw = game.move(other, {"type": "draw", "source": "stock"})
    view = draw.get_json()
    discard = next(m for m in view["legal_moves"] if m["type"] == "discard")
    assert game.move(other, discard).status_code == 200
    # the bot worker plays the absent player's turn: the turn comes back
    answer = game.turn_of(other)
    assert answer["round"] is None or answer["round"]["turn"] == other or answer["results"]
    back = client.delete(f"/v1/games/{game.id}/autopilot", headers=game.auth(seat))
    assert back.status_code == 200
    assert back.get_json()["players"][seat]["autopilot"] is False
    assert back.get_json()["players"][seat]["bot"] is None


def test_player_hands_seat_to_bot_and_back(client):
    game = create_game(client, [{"name": "a"}, {"name": "b"}, {"name": "c"}])
    seat = game.public()["round"]["turn"]
    bad = client.post(
        f"/v1/games/{game.id}/autopilot", json={"level": "genius"}, headers=game.auth(seat)
    )
    assert bad.status_code == 422
    handed = client.post(
        f"/v1/games/{game.id}/autopilot", json={"level": "random"}, headers=game.auth(seat)
    )
    assert handed.status_code == 200
    view = handed.get_json()
    assert view["players"][seat]["autopilot"] is True
    # the bot worker plays the turn at once
    until(lambda: game.public()["round"]["turn"] != seat)
    back = client.delete(f"/v1/games/{game.id}/autopilot", headers=game.auth(seat))
    assert back.get_json()["players"][seat]["autopilot"] is False
    assert client.delete(f"/v1/games/{game.id}/autopilot").status_code == 401


def finished_game(client, seed="replay-1"):
    """A game played to the end: one human on autopilot against a bot."""
    game = create_game(client, [{"name": "me"}, {"name": "bot", "bot": "basic"}], seed=seed)
    response = client.post(
        f"/v1/games/{game.id}/autopilot", json={"level": "basic"}, headers=game.auth(0)
    )
    assert response.status_code == 200
    play_out(game)
    return game


def play_out(game, timeout: float = 120) -> None:
    """Wait until the bot worker has played the game to the end."""
    until(lambda: game.public()["status"] == "finished", timeout, pause=0.1)


def test_the_worker_plays_bounded_stretches_of_bot_moves(client, redis_client):
    """Handing the last human seat to a bot once played the whole game inside that
    request (seconds of CPU for eight strong seats).  Now the request plays nothing;
    the bot worker plays at most BOT_MOVES_PER_CALL bot moves a write, the game is
    then due again, and the next stretch is another write, until the game ends."""
    players = [{"name": "me"}, *({"name": f"b{i}", "bot": "strong"} for i in range(7))]
    game = create_game(client, players, seed="bounded", ruleset="party")
    moves = {"drew", "discarded", "went_out"}
    writes = redis_client.pubsub()
    writes.ssubscribe(wake_channel(game.id))  # each write publishes its events once
    assert writes.get_message(timeout=5)["type"] == "ssubscribe"
    handed = client.post(
        f"/v1/games/{game.id}/autopilot", json={"level": "strong"}, headers=game.auth(0)
    )
    assert handed.status_code == 200
    assert handed.get_json()["status"] == "playing"
    play_out(game, timeout=300)
    stretches = []  # the moves of each write
    while (message := writes.get_message(timeout=1)) is not None:
        entries = parse_wake_up(message["data"]).entries  # public ones: seat b""
        stretches.append(sum(not s and orjson.loads(e)["type"] in moves for s, _t, e in entries))
    writes.close()
    assert max(stretches) <= BOT_MOVES_PER_CALL
    assert sum(stretches) > 10 * BOT_MOVES_PER_CALL  # a whole game, many writes
    assert game.public()["timer"]["deadline"] is None  # nothing left to play


def test_replay_verifies_and_a_tampered_one_is_rejected(client, tmp_path, capsys):
    game = create_game(client, [{"name": "a"}, {"name": "b"}])
    early = client.get(f"/v1/games/{game.id}/replay")
    assert early.status_code == 409
    assert early.get_json()["code"] == "GAME_NOT_FINISHED"
    committed = game.public()["fairness"]["commitment"]

    game = finished_game(client)
    public = game.public()
    replay = client.get(f"/v1/games/{game.id}/replay").get_json()
    assert replay["commitment"] == public["fairness"]["commitment"] == commitment(replay["seed"])
    assert len(replay["deals"]) == 11
    assert verify_replay(replay) == []
    assert committed != replay["commitment"]

    tampered_deal = copy.deepcopy(replay)
    hand = tampered_deal["deals"][3]["hands"]["0"]
    hand[0] = "KS" if hand[0] != "KS" else "QS"
    assert verify_replay(tampered_deal)
    tampered_score = copy.deepcopy(replay)
    tampered_score["results"][0]["hands"][1]["points"] += 1
    assert verify_replay(tampered_score)
    tampered_seed = copy.deepcopy(replay)
    tampered_seed["seed"] = "00" * 32
    assert any("commitment" in p for p in verify_replay(tampered_seed))
    tampered_move = copy.deepcopy(replay)
    tampered_move["actions"][5], tampered_move["actions"][6] = (
        tampered_move["actions"][6],
        tampered_move["actions"][5],
    )
    assert verify_replay(tampered_move)

    path = tmp_path / "replay.json"
    path.write_text(json.dumps(replay))
    assert verify_main([str(path)]) == 0
    path.write_text(json.dumps(tampered_deal))
    assert verify_main([str(path)]) == 1
    assert "REJECTED" in capsys.readouterr().out


def test_rematch_keeps_seats_options_and_bots_with_new_tokens(client):
    game = create_game(
        client,
        [{"name": "ann"}, {"name": "bob"}, {"name": "cy", "bot": "random"}],
        options={"jokers_per_deck": 1},
    )
    assert client.post(f"/v1/games/{game.id}/rematch", headers=game.auth(0)).status_code == 409
    for seat in (0, 1):
        assert (
            client.post(
                f"/v1/games/{game.id}/autopilot", json={"level": "basic"}, headers=game.auth(seat)
            ).status_code
            == 200
        )
    play_out(game)
    assert game.public()["status"] == "finished"
    first = client.post(f"/v1/games/{game.id}/rematch", headers=game.auth(1))
    assert first.status_code == 201
    new = first.get_json()
    assert new["seat"] == 1 and new["token"] != game.tokens[1]
    assert first.headers["Location"] == f"/v1/games/{new['id']}"
    assert game.public()["rematch"]["game"] == new["id"]
    waiting = client.get(f"/v1/games/{new['id']}").get_json()
    assert waiting["status"] == "waiting"
    assert waiting["open_seats"] == []  # seat 0 is reserved for ann, not joinable
    assert client.post(f"/v1/games/{new['id']}/players", json={"name": "eve"}).status_code == 409
    again = client.post(f"/v1/games/{game.id}/rematch", headers=game.auth(1))
    assert again.status_code == 409
    second = client.post(f"/v1/games/{game.id}/rematch", headers=game.auth(0))
    assert second.status_code == 201
    assert second.get_json()["id"] == new["id"] and second.get_json()["seat"] == 0
    started = client.get(f"/v1/games/{new['id']}").get_json()
    assert started["status"] == "playing"
    assert [p["name"] for p in started["players"]] == ["ann", "bob", "cy"]
    assert [p["bot"] for p in started["players"]] == [None, None, "random"]
    assert started["options"]["jokers_per_deck"] == 1
    assert started["rematch"]["of"] == game.id
    assert client.post(f"/v1/games/{game.id}/rematch").status_code == 401
