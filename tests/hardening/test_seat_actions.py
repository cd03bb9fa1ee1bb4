"""A seat's own actions cannot flood its game: an autopilot call that changes
nothing appends nothing (and wakes no follower), and autopilot, resign and
stream tickets are rate limited per token."""

from __future__ import annotations

from tests.api.conftest import Game, create_game, make_app

PLAYERS = [{"name": "a"}, {"name": "b"}]


def _limited(response) -> None:
    assert response.status_code == 429, response.get_data()[:200]
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["code"] == "RATE_LIMITED"
    assert 1 <= int(response.headers["Retry-After"]) <= 60


def _log(game: Game) -> list[dict]:
    return game.events(after=0)


def _waiting_seat(game: Game) -> int:
    """A seat whose turn it is not (its bot, once on, has nothing to play)."""
    return 1 - game.public()["round"]["turn"]


def test_autopilot_that_changes_nothing_appends_nothing(client):
    game = create_game(client, PLAYERS, seed="quiet-autopilot")
    seat = _waiting_seat(game)
    url = f"/v1/games/{game.id}/autopilot"

    first = client.post(url, json={"level": "basic"}, headers=game.auth(seat))
    assert first.status_code == 200, first.get_json()
    on = _log(game)
    assert on[-1]["type"] == "autopilot_on"
    for _ in range(5):  # on already, at that level
        again = client.post(url, json={"level": "basic"}, headers=game.auth(seat))
        assert again.status_code == 200
        assert again.get_json() == first.get_json()
        assert again.headers["ETag"] == first.headers["ETag"]
    assert _log(game) == on

    other = client.post(url, json={"level": "strong"}, headers=game.auth(seat))
    assert other.status_code == 200  # another level is a change
    last = _log(game)[-1]
    assert (last["type"], last["level"]) == ("autopilot_on", "strong")

    off = client.delete(url, headers=game.auth(seat))
    assert off.status_code == 200
    after_off = _log(game)
    assert after_off[-1]["type"] == "autopilot_off"
    for _ in range(5):  # off already
        again = client.delete(url, headers=game.auth(seat))
        assert again.status_code == 200
        assert again.get_json() == off.get_json()
        assert again.get_json()["version"] == off.get_json()["version"]
    assert _log(game) == after_off
    # the other seat never had a bot: taking it back changes nothing either
    version = game.public()["version"]
    assert client.delete(url, headers=game.auth(1 - seat)).get_json()["version"] == version
    assert game.public()["version"] == version


def test_autopilot_and_resign_are_limited_per_token(redis_client, redis_url):
    client = make_app(
        redis_url, RATE_LIMITS="true", RATE_LIMIT_SEAT_CHANGES="3/minute"
    ).test_client()
    game = create_game(client, PLAYERS, seed="limited-autopilot")
    seat = _waiting_seat(game)
    url = f"/v1/games/{game.id}/autopilot"
    assert client.post(url, json={"level": "basic"}, headers=game.auth(seat)).status_code == 200
    assert client.post(url, json={"level": "basic"}, headers=game.auth(seat)).status_code == 200
    assert client.delete(url, headers=game.auth(seat)).status_code == 200
    version = game.public()["version"]
    _limited(client.post(url, json={"level": "random"}, headers=game.auth(seat)))
    _limited(client.post(f"/v1/games/{game.id}/resign", headers=game.auth(seat)))
    assert game.public()["version"] == version
    # the other seat's token has its own budget, from the same address
    other = client.post(f"/v1/games/{game.id}/resign", headers=game.auth(1 - seat))
    assert other.status_code == 200, other.get_json()


def test_stream_tickets_are_limited_per_token(redis_client, redis_url):
    client = make_app(
        redis_url, RATE_LIMITS="true", RATE_LIMIT_STREAM_TICKETS="2/minute"
    ).test_client()
    game = create_game(client, PLAYERS, seed="limited-tickets")
    url = f"/v1/games/{game.id}/stream-tickets"
    tickets = [client.post(url, headers=game.auth(0)) for _ in range(2)]
    assert [t.status_code for t in tickets] == [201, 201]
    _limited(client.post(url, headers=game.auth(0)))
    assert client.post(url, headers=game.auth(1)).status_code == 201
    # a ticket taken opens the seat's stream as often as asked: one is enough
    ticket = tickets[0].get_json()["ticket"]
    for _ in range(3):
        page = client.get(f"/v1/games/{game.id}/events?ticket={ticket}")
        assert page.status_code == 200
