"""Seats before the start: join a chosen seat, rename, leave (the seat reopens, the
last human out cancels the game), and races of joins and leaves."""

from __future__ import annotations

import threading
from collections import Counter
from functools import partial

from tests.api.conftest import Game, create_game, make_app
from tests.lobby.conftest import ids, join, list_all, listed_game, quick_join


def leave(client, game: Game, token: str):
    return client.delete(f"/v1/games/{game.id}/seat", headers={"Authorization": f"Bearer {token}"})


def retried(send):
    """``send()`` again while it is answered 409 ``CONFLICT`` (the game changed too
    fast for the service's own retries: docs/ERRORS.md says to retry), as a client
    does; the first other answer."""
    for _try in range(50):
        answer = send()
        if answer.status_code != 409 or answer.get_json()["code"] != "CONFLICT":
            return answer
    raise AssertionError("still CONFLICT after 50 tries")


def test_join_a_chosen_seat(client):
    game = listed_game(client, seats=4)
    answer = join(client, game, "c", seat=2)
    assert answer.status_code == 201 and answer.get_json()["seat"] == 2
    assert join(client, game, "b").get_json()["seat"] == 1, "without a seat: the lowest open"
    taken = join(client, game, "x", seat=2)
    assert taken.status_code == 409 and taken.get_json()["code"] == "SEAT_TAKEN"
    assert join(client, game, "x", seat=0).get_json()["code"] == "SEAT_TAKEN"
    beyond = join(client, game, "x", seat=5)
    assert beyond.status_code == 422 and beyond.get_json()["code"] == "NO_SUCH_SEAT"
    assert join(client, game, "x", seat=-1).get_json()["code"] == "VALIDATION_ERROR"
    assert join(client, game, "x", seat="3").get_json()["code"] == "VALIDATION_ERROR"
    assert game.public()["open_seats"] == [3]


def test_rename_before_the_start_only(client):
    game = create_game(client, [{"name": "ann"}], seats=2)
    headers = game.auth(0)
    answer = client.patch(f"/v1/games/{game.id}/seat", json={"name": "Anna"}, headers=headers)
    assert answer.status_code == 200
    assert answer.get_json() == {
        "id": game.id, "seat": 0, "name": "Anna", "version": 2, "status": "waiting"
    }  # fmt: skip
    assert game.public()["players"][0]["name"] == "Anna"
    [renamed] = [e for e in game.events() if e["type"] == "player_renamed"]
    assert renamed == {"seq": renamed["seq"], "id": renamed["id"], "type": "player_renamed",
                       "seat": 0, "name": "Anna", "previous": "ann"}  # fmt: skip
    bad = client.patch(f"/v1/games/{game.id}/seat", json={"name": "<b>"}, headers=headers)
    assert bad.status_code == 422
    nobody = client.patch(f"/v1/games/{game.id}/seat", json={"name": "x"})
    assert nobody.status_code == 401
    join(client, game, "bob")
    late = client.patch(f"/v1/games/{game.id}/seat", json={"name": "Annie"}, headers=headers)
    assert late.status_code == 409 and late.get_json()["code"] == "GAME_STARTED"


def test_leaving_reopens_the_seat_and_voids_the_token(client):
    game = listed_game(client, seats=3, humans=2)
    answer = leave(client, game, game.tokens[1])
    assert answer.status_code == 200
    assert answer.get_json() == {
        "id": game.id, "seat": 1, "name": None, "version": 2, "status": "waiting"
    }  # fmt: skip
    public = game.public()
    assert public["open_seats"] == [1, 2] and public["players"][1]["name"] is None
    [left] = [e for e in game.events() if e["type"] == "player_left"]
    assert (left["seat"], left["name"]) == (1, "h1")
    again = leave(client, game, game.tokens[1])
    assert again.status_code == 401, "the token left with its player"
    assert list_all(client)[0]["seats"]["open"] == [1, 2]
    assert quick_join(client, "q", seats=3)["seat"] == 1, "quick-join offers the reopened seat"


def test_the_last_human_leaving_cancels_the_game(client):
    game = create_game(
        client, [{"name": "h0"}, {"name": "cpu", "bot": "basic"}], seats=4, listed=True
    )
    bob = join(client, game, "bob").get_json()
    assert leave(client, game, game.tokens[0]).get_json()["status"] == "waiting"
    last = client.delete(
        f"/v1/games/{game.id}/seat", headers={"Authorization": f"Bearer {bob['token']}"}
    )
    assert last.get_json()["status"] == "cancelled", "a bot left alone does not keep it"
    public = game.public()
    assert public["status"] == "cancelled" and public["open_seats"] == []
    types = [e["type"] for e in game.events()]
    assert types[-3:] == ["player_left", "player_left", "game_cancelled"]
    assert game.events()[-1]["reason"] == "last_player_left"


def test_cancelled_games_leave_the_lobby_and_refuse_joins(client):
    game = listed_game(client, seats=2)
    assert ids(list_all(client)) == [game.id]
    answer = leave(client, game, game.tokens[0])
    assert answer.get_json()["status"] == "cancelled"
    assert game.public()["status"] == "cancelled"
    assert game.events()[-1]["type"] == "game_cancelled"
    refused = join(client, game, "late")
    assert refused.status_code == 409 and refused.get_json()["code"] == "GAME_CANCELLED"
    assert list_all(client) == []
    fresh = quick_join(client, "q")
    assert fresh["id"] != game.id and fresh["created"], "quick-join never offers it"


def test_leaving_after_the_start_is_refused(client):
    game = create_game(client, [{"name": "a"}, {"name": "b"}])
    answer = leave(client, game, game.tokens[0])
    assert answer.status_code == 409 and answer.get_json()["code"] == "GAME_STARTED"
    assert "resign" in answer.get_json()["detail"]


def test_many_clients_racing_for_one_chosen_seat_get_it_once(redis_client, redis_url):
    apps = [make_app(redis_url), make_app(redis_url)]
    game = listed_game(apps[0].test_client(), seats=3)
    barrier = threading.Barrier(16)
    answers: list[int] = []

    def racer(i: int) -> None:
        client = apps[i % 2].test_client()
        barrier.wait()
        answers.append(join(client, game, f"r{i}", seat=2).status_code)

    threads = [threading.Thread(target=racer, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert Counter(answers) == {201: 1, 409: 15}


def test_join_and_leave_races_never_seat_two_players_in_one_seat(redis_client, redis_url):
    """12 clients on two instances join a listed 3-seat game (by id, or by quick-join)
    and leave it again, 6 times each (retrying a 409 CONFLICT, as a client does), while
    its creator stays: replayed from its events, no seat is ever taken twice, every
    answer matches an event, and once all have left the game waits with its creator
    alone, offered again."""
    apps = [make_app(redis_url), make_app(redis_url)]
    game = listed_game(apps[0].test_client(), seats=3)
    joined: list[tuple[int, str]] = []
    left: list[int] = []
    refused: Counter[str] = Counter()
    barrier = threading.Barrier(12)

    def churn(i: int) -> None:
        client = apps[i % 2].test_client()
        barrier.wait()
        for _round in range(6):
            if i % 3 == 0:
                answer = retried(
                    lambda: client.post("/v1/lobby/quick-join", json={"name": f"p{i}", "seats": 3})
                )
                body = answer.get_json()
                if answer.status_code == 201 and body["id"] != game.id:
                    continue  # seated elsewhere (this game was full): not part of this race
            else:
                answer = retried(partial(join, client, game, f"p{i}"))
                body = answer.get_json()
            if answer.status_code != 201:
                refused[body["code"]] += 1
                continue
            joined.append((body["seat"], body["token"]))
            gone = retried(partial(leave, client, game, body["token"]))
            if gone.status_code == 200:
                left.append(body["seat"])
            else:  # the game started with this player seated: leaving is refused
                refused[gone.get_json()["code"]] += 1

    threads = [threading.Thread(target=churn, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    events = apps[0].test_client().get(f"/v1/games/{game.id}/events").get_json()["events"]
    occupied: dict[int, str] = {}
    for event in events:
        if event["type"] == "player_joined":
            assert event["seat"] not in occupied, f"seat {event['seat']} taken twice"
            occupied[event["seat"]] = event["name"]
        elif event["type"] == "player_left":
            assert occupied.pop(event["seat"]) == event["name"]
    assert sum(e["type"] == "player_joined" for e in events) == 1 + len(joined)
    assert sum(e["type"] == "player_left" for e in events) == len(left)
    assert set(refused) <= {"GAME_FULL", "GAME_STARTED"}, refused
    public = apps[0].test_client().get(f"/v1/games/{game.id}").get_json()
    if public["status"] == "waiting":
        assert occupied == {0: "h0"} and public["open_seats"] == [1, 2]
        assert quick_join(apps[1].test_client(), "last", seats=3)["id"] == game.id
    else:  # the race filled it at some point: it started with three seated
        assert len(occupied) == 3 and public["status"] == "playing"
