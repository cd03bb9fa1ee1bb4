"""Resigning during play: a bot plays the seat to the end, the public view and the
events record it, the game finishes, and the resigned seat cannot act again."""

from __future__ import annotations

from tests.api.conftest import create_game, play_one, until
from tests.lobby.conftest import ids, list_all

MAX_MOVES = 3000


def resign(client, game, seat):
    return client.post(f"/v1/games/{game.id}/resign", headers=game.auth(seat))


def test_resign_hands_the_seat_to_a_bot_and_the_game_finishes(client):
    game = create_game(
        client,
        [{"name": "ann"}, {"name": "bob"}, {"name": "cat"}],
        listed=True,
        options={"max_turns_per_round": 6},
    )
    answer = resign(client, game, 1)
    assert answer.status_code == 200
    assert answer.get_json()["seat"] == 1
    public = game.public()
    bob = public["players"][1]
    assert (bob["name"], bob["bot"], bob["autopilot"], bob["resigned"]) == (
        "bob", "basic", True, True
    )  # fmt: skip
    assert not any(p["resigned"] for i, p in enumerate(public["players"]) if i != 1)
    [resigned] = [e for e in game.events() if e["type"] == "player_resigned"]
    assert (resigned["seat"], resigned["name"], resigned["level"]) == (1, "bob", "basic")

    back = client.delete(f"/v1/games/{game.id}/autopilot", headers=game.auth(1))
    assert back.status_code == 409 and back.get_json()["code"] == "RESIGNED"
    again = resign(client, game, 1)
    assert again.status_code == 409 and again.get_json()["code"] == "RESIGNED"
    move = game.move(1, {"type": "draw", "source": "stock"})
    assert move.status_code == 409 and move.get_json()["code"] == "RESIGNED"

    for _move in range(MAX_MOVES):
        public = game.settled()  # the bot worker plays the resigned seat's turns
        if public["status"] == "finished":
            break
        turn = public["round"]["turn"]
        assert turn != 1, "the resigned seat never waits for its player"
        play_one(game, turn, game.view(turn))
    else:
        raise AssertionError("the game did not finish")
    assert public["players"][1]["resigned"] and public["winners"]
    bot_moves = [e for e in game.events() if e.get("seat") == 1 and e.get("bot")]
    assert bot_moves, "the bot played the resigned seat"
    assert game.view(1)["seat"] == 1, "the resigned player still sees its seat"
    assert ids(list_all(client, status="finished")) == [game.id]
    assert list_all(client, status="playing") == []


def test_resign_is_for_games_in_play(client):
    waiting = create_game(client, [{"name": "a"}], seats=2)
    answer = resign(client, waiting, 0)
    assert answer.status_code == 409 and answer.get_json()["code"] == "GAME_NOT_IN_PROGRESS"
    assert "leave" in answer.get_json()["detail"]
    nobody = client.post(f"/v1/games/{waiting.id}/resign")
    assert nobody.status_code == 401


def test_a_resigned_seat_on_turn_is_played_at_once(client):
    game = create_game(client, [{"name": "a"}, {"name": "b"}])
    turn = game.public()["round"]["turn"]
    view = resign(client, game, turn).get_json()
    assert view["players"][turn]["resigned"]
    # the bot worker plays the resigned seat's turn at once
    until(lambda: game.public()["round"]["turn"] != turn, timeout=30)
