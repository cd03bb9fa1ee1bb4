"""A rematch's seats are reserved for the finished game's players: a seat its
player gives up (leaving before the start) is reserved for that player again,
never opened to whoever reads the rematch's id from the finished game."""

from __future__ import annotations

from tests.api.conftest import create_game
from tests.api.test_fairplay import play_out


def test_a_rematch_seat_given_up_stays_reserved_for_its_player(client):
    game = create_game(client, [{"name": "ann"}, {"name": "bob"}, {"name": "cy"}])
    for seat in range(3):
        on = client.post(
            f"/v1/games/{game.id}/autopilot", json={"level": "basic"}, headers=game.auth(seat)
        )
        assert on.status_code == 200
    play_out(game)
    claimed = client.post(f"/v1/games/{game.id}/rematch", headers=game.auth(1))
    assert claimed.status_code == 201, claimed.get_json()
    rematch, token = claimed.get_json()["id"], claimed.get_json()["token"]
    assert game.public()["rematch"]["game"] == rematch  # anyone can read it

    left = client.delete(f"/v1/games/{rematch}/seat", headers={"Authorization": f"Bearer {token}"})
    assert left.status_code == 200, left.get_json()
    view = client.get(f"/v1/games/{rematch}").get_json()
    assert view["status"] == "waiting"
    assert view["open_seats"] == []
    assert [p["name"] for p in view["players"]] == ["ann", "bob", "cy"]

    # a stranger who read the id finds no seat: neither seat 1 nor any other
    taken = client.post(f"/v1/games/{rematch}/players", json={"name": "eve", "seat": 1})
    assert (taken.status_code, taken.get_json()["code"]) == (409, "SEAT_TAKEN")
    full = client.post(f"/v1/games/{rematch}/players", json={"name": "eve"})
    assert (full.status_code, full.get_json()["code"]) == (409, "GAME_FULL")
    # nor does a stranger's token of another game, nor the void rematch token
    other = create_game(client, [{"name": "eve"}], seats=2)
    refused = client.post(f"/v1/games/{game.id}/rematch", headers=other.auth(0))
    assert refused.status_code == 401
    void = client.get(f"/v1/games/{rematch}/view", headers={"Authorization": f"Bearer {token}"})
    assert void.status_code == 401

    # the seat's own player claims it again (a new token), and the others theirs
    again = client.post(f"/v1/games/{game.id}/rematch", headers=game.auth(1))
    assert again.status_code == 201, again.get_json()
    assert again.get_json()["seat"] == 1 and again.get_json()["token"] != token
    for seat in (0, 2):
        assert (
            client.post(f"/v1/games/{game.id}/rematch", headers=game.auth(seat)).status_code == 201
        )
    started = client.get(f"/v1/games/{rematch}").get_json()
    assert started["status"] == "playing"
    assert [p["name"] for p in started["players"]] == ["ann", "bob", "cy"]


def test_a_rematch_whose_players_all_left_is_not_open_either(client):
    game = create_game(client, [{"name": "ann"}, {"name": "bob"}])
    for seat in range(2):
        client.post(
            f"/v1/games/{game.id}/autopilot", json={"level": "basic"}, headers=game.auth(seat)
        )
    play_out(game)
    claimed = client.post(f"/v1/games/{game.id}/rematch", headers=game.auth(0)).get_json()
    auth = {"Authorization": f"Bearer {claimed['token']}"}
    assert client.delete(f"/v1/games/{claimed['id']}/seat", headers=auth).status_code == 200
    view = client.get(f"/v1/games/{claimed['id']}").get_json()
    assert view["status"] == "waiting" and view["open_seats"] == []
    join = client.post(f"/v1/games/{claimed['id']}/players", json={"name": "eve"})
    assert join.status_code == 409
