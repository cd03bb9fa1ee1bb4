"""The lobby's caps per address (:mod:`service.hosting.lobby_caps`) where a client's
requests come from more than one address, where a quick-join lists a game, and
what a refusal says."""

from __future__ import annotations

from tests.api.conftest import Game
from tests.lobby.conftest import list_all
from tests.lobby.test_squatting import at, capped_apps, create_listed, post, seated

A, B, C = "198.51.100.10", "198.51.100.11", "198.51.100.12"


def test_a_seat_left_from_another_address_counts_no_more(redis_client, redis_url):
    """A player takes four seats from one address and leaves them from another (a
    phone that switched networks); others take those seats: the first address,
    holding no seat, may take one again."""
    (client,) = capped_apps(redis_url)
    games = [create_listed(client, f"203.0.113.{i}") for i in range(5)]
    for game in games[:4]:
        assert seated(game, post(client, f"/v1/games/{game.id}/players", A, name="a")) == 1
    for game in games[:4]:
        left = client.delete(f"/v1/games/{game.id}/seat", headers=game.auth(1), **at(B))
        assert left.status_code == 200, left.get_json()
    for game in games[:4]:
        taken = post(client, f"/v1/games/{game.id}/players", C, name="c")
        assert taken.status_code == 201 and taken.get_json()["seat"] == 1
    again = post(client, f"/v1/games/{games[4].id}/players", A, name="a")
    assert again.status_code == 201, again.get_json()


def test_a_seat_still_held_counts_whoever_sits_beside_it(redis_client, redis_url):
    """The other side: seats their player still holds keep counting, also after
    others joined and left the same games."""
    (client,) = capped_apps(redis_url)
    games = [create_listed(client, f"203.0.113.{i}") for i in range(5)]
    for game in games[:4]:
        assert seated(game, post(client, f"/v1/games/{game.id}/players", A, name="a")) == 1
        other = seated(game, post(client, f"/v1/games/{game.id}/players", C, name="c"))
        gone = client.delete(f"/v1/games/{game.id}/seat", headers=game.auth(other), **at(C))
        assert gone.status_code == 200
    refused = post(client, f"/v1/games/{games[4].id}/players", A, name="a")
    assert refused.status_code == 429 and "holds 4 seats" in refused.get_json()["detail"]


def test_a_quick_join_that_lists_a_game_counts_against_the_listed_cap(redis_client, redis_url):
    """Two listed games of its own: a quick-join that would open a new table is
    429 and lists nothing, one that finds a seat in a game others listed is
    seated; and a quick-join's new table is one of its two."""
    (client,) = capped_apps(redis_url)
    for _ in range(2):
        create_listed(client, A)
    refused = post(client, "/v1/lobby/quick-join", A, name="a", seats=5)
    assert refused.status_code == 429, refused.get_json()
    assert refused.get_json()["code"] == "RATE_LIMITED"
    assert "2 listed games" in refused.get_json()["detail"]
    assert refused.headers["Retry-After"]
    assert len(list_all(client)) == 2, "the refused quick-join listed no game"

    opened = post(client, "/v1/lobby/quick-join", B, name="b", seats=5)
    assert opened.status_code == 201 and opened.get_json()["created"]
    joined = post(client, "/v1/lobby/quick-join", A, name="a", seats=5)
    assert joined.status_code == 201, joined.get_json()
    assert joined.get_json()["id"] == opened.get_json()["id"]
    assert not joined.get_json()["created"]

    first = post(client, "/v1/lobby/quick-join", C, name="c", seats=6)
    assert first.status_code == 201 and first.get_json()["created"]
    listing = post(client, "/v1/games", C, players=[{"name": "c"}], seats=2, listed=True)
    assert listing.status_code == 201
    third = post(client, "/v1/games", C, players=[{"name": "c"}], seats=2, listed=True)
    assert third.status_code == 429, "the quick-join's new table is one of the address's two"
    made = Game(
        client, first.get_json()["id"], {first.get_json()["seat"]: first.get_json()["token"]}
    )
    gone = client.delete(f"/v1/games/{made.id}/seat", headers=made.auth(0), **at(C))
    assert gone.status_code == 200 and gone.get_json()["status"] == "cancelled"
    again = post(client, "/v1/games", C, players=[{"name": "c"}], seats=2, listed=True)
    assert again.status_code == 201, again.get_json()


def test_a_create_asking_for_more_seats_than_the_cap_says_so(redis_client, redis_url):
    (client,) = capped_apps(redis_url)
    players = [{"name": f"p{i}"} for i in range(6)]
    answer = post(client, "/v1/games", A, players=players, seats=8, listed=True)
    assert answer.status_code == 429
    detail = answer.get_json()["detail"]
    assert "asks for 6 seats" in detail and "(4)" in detail, detail
    assert "holds 0" not in detail
