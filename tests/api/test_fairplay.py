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
from tests.api.conftest import create_game


def expire_deadline(redis_client, game_id: str) -> None:
    """Move the stored turn deadline into the past (as if the clock ran out)."""
    state_key = key(game_id, "state")
    doc = orjson.loads(redis_client.hget(state_key, "d"))
    doc["timing"][2] = time.time() - 1
    redis_client.hset(state_key, mapping={"d": orjson.dumps(doc), "t": repr(doc["timing"][2])})


def test_timed_out_turn_is_played_automatically_on_next_request(client, redis_client):
    game = create_game(client, [{"name": "a"}, {"name": "b"}], turn_timeout_seconds=60)
    public = game.public()
    seat, version = public["round"]["turn"], public["version"]
    assert public["timer"]["turn_timeout_seconds"] == 60
    assert public["timer"]["deadline"] > time.time() + 50
    expire_deadline(redis_client, game.id)
    after = game.public()  # any request touching the game plays the overdue turn
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
    public = game.public()
    assert public["players"][seat]["autopilot"] is True
    assert public["players"][seat]["bot"] == "basic"
    other = 1 - seat
    draw = game.move(other, {"type": "draw", "source": "stock"})
    view = draw.get_json()
    discard = next(m for m in view["legal_moves"] if m["type"] == "discard")
    answer = game.move(other, discard).get_json()
    # the bot played the absent player's turn within the same request
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
    assert view["round"]["turn"] != seat  # the bot played the turn at once
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


def play_out(game) -> None:
    """Read the game until its bots have played it to the end: each request plays
    at most one stretch of bot moves (``BOT_MOVES_PER_CALL``)."""
    for _request in range(400):
        if game.public()["status"] == "finished":
            return
    raise AssertionError("the bots did not finish the game in 400 requests")


def test_one_request_plays_a_bounded_stretch_of_bot_moves(client):
    """Handing the last human seat to a bot once played the whole game inside that
    request (seconds of CPU for eight strong seats).  Now each request plays at most
    BOT_MOVES_PER_CALL bot moves; the game is then due at once, and whichever request
    touches it next plays the next stretch, until the game ends."""
    players = [{"name": "me"}, *({"name": f"b{i}", "bot": "strong"} for i in range(7))]
    game = create_game(client, players, seed="bounded", ruleset="party")
    moves = {"drew", "discarded", "went_out"}

    def bot_moves_since(seq: int) -> tuple[int, int]:
        events = [e for e in game.events() if e["seq"] > seq]
        return sum(e["type"] in moves for e in events), max([seq, *(e["seq"] for e in events)])

    _count, seq = bot_moves_since(0)
    handed = client.post(
        f"/v1/games/{game.id}/autopilot", json={"level": "strong"}, headers=game.auth(0)
    )
    assert handed.status_code == 200
    assert handed.get_json()["status"] == "playing"
    count, seq = bot_moves_since(seq)
    stretches = [count]
    status = "playing"
    while status != "finished":
        status = game.public()["status"]  # a read plays the next stretch
        count, seq = bot_moves_since(seq)
        stretches.append(count)
        assert len(stretches) < 400
    assert max(stretches) <= BOT_MOVES_PER_CALL
    assert sum(stretches) > 10 * BOT_MOVES_PER_CALL  # a whole game, many requests
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
