"""Stream tickets, the credential of a browser's EventSource: it re-opens its
seat's stream (the browser's own reconnect, same URL) after an instance restart,
with nothing missed or repeated; an open stream keeps it valid; it is refused
once its seat changed hands, once expired, and in another game; it is never
logged."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from http.client import HTTPConnection
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from flask.testing import FlaskClient

from harness.gunicorn_server import GunicornServer
from harness.live_game import LiveGame
from tests.api.conftest import create_game
from tests.realtime.followers import SSE, Follower, last_seq

HEARTBEAT = 0.3
TICKET_SECONDS = 2


RESTART_TICKET_SECONDS = 30
"""A ticket's life where an instance restarts: longer than the restart takes on a loaded
machine (an open stream renews it at half its life: the other half is the margin)."""


def instance(
    gunicorn: Callable[[Mapping[str, str]], GunicornServer],
    redis_url: str,
    ticket_seconds: int = TICKET_SECONDS,
) -> Any:
    return gunicorn(
        {
            "REDIS_URL": redis_url,
            "WEB_CONCURRENCY": "1",
            "SSE_HEARTBEAT_SECONDS": str(HEARTBEAT),
            "STREAM_TICKET_SECONDS": str(ticket_seconds),
        }
    )


def take_ticket(game: LiveGame, seat: int) -> str:
    answer = requests.post(game.url("/stream-tickets"), headers=game.auth(seat), timeout=10)
    assert answer.status_code == 201, answer.text
    return answer.json()["ticket"]  # type: ignore[no-any-return]


def open_with(url: str, ticket: str, headers: Mapping[str, str] = SSE) -> requests.Response:
    """Open a stream with ``ticket`` and close it at once (its problem read, if refused)."""
    params = {"ticket": ticket}
    response = requests.get(url, headers=headers, params=params, stream=True, timeout=10)
    if response.status_code != 200:
        response.content  # noqa: B018 -- read the problem before closing
    response.close()
    return response


def raw_get(base: str, target: str) -> int:
    """The status of ``GET target``, the target sent exactly as given."""
    where = urlsplit(base)
    connection = HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=10)
    try:
        connection.request("GET", target)
        return connection.getresponse().status
    finally:
        connection.close()


def refusal(response: requests.Response) -> tuple[Any, ...]:
    assert response.status_code == 401, response.status_code
    assert response.headers["Content-Type"] == "application/problem+json"
    return _problem(response.json())


def test_a_reconnect_with_the_same_ticket_after_a_restart_resumes_where_it_stopped(
    gunicorn: Callable[[Mapping[str, str]], GunicornServer],
    redis_url: str,
    follow: Callable[..., Follower],
):
    """What EventSource does after an instance stops: the same URL again, ticket
    included, with Last-Event-ID. The ticket lets it in; the events seat 1 may
    see arrive exactly once across the restart, its private ones included."""
    restarted, other = (instance(gunicorn, redis_url, RESTART_TICKET_SECONDS) for _ in "ab")
    game = LiveGame.create(other.url, seed="ticket-restart")
    ticket = take_ticket(game, 1)
    url = game.url("/events").replace(other.url, restarted.url)
    before = follow(url, SSE, {"ticket": ticket})
    for _move in range(4):
        assert game.step()
    before.wait_for(last_seq(game))

    restarted.terminate()
    assert before.ended.wait(5), "the stream did not end on SIGTERM"
    assert restarted.wait(timeout=15) == 0
    for _move in range(4):  # while the instance is down
        assert game.step()
    restarted.start()  # same host and port: the URL EventSource holds
    last_id = [f.id for f in before.frames if f.kind == "event"][-1]
    after = follow(url, {**SSE, "Last-Event-ID": last_id}, {"ticket": ticket})
    assert after.response.status_code == 200
    for _move in range(4):
        assert game.step()
    mine = game.events(1)
    after.wait_for(mine[-1]["seq"])
    assert before.events() + after.events() == mine
    assert any(e.get("private") and e.get("seat") == 1 for e in after.events())
    logs = restarted.stdout() + restarted.stderr() + other.stdout() + other.stderr()
    assert ticket not in logs and "ticket=<redacted>" in restarted.stdout()


def test_an_open_stream_keeps_its_ticket_valid(
    gunicorn: Callable[[Mapping[str, str]], GunicornServer],
    redis_url: str,
    follow: Callable[..., Follower],
):
    """A stream open for longer than the ticket's life: the reconnect once it ends
    is still let in (the stream renewed the ticket); unused, the ticket expires."""
    server = instance(gunicorn, redis_url)
    game = LiveGame.create(server.url)
    ticket, unused = take_ticket(game, 0), take_ticket(game, 0)
    taken_at = time.monotonic()
    stream = follow(game.url("/events"), SSE, {"ticket": ticket})
    stream.wait_for(1)
    deadline = 3 * TICKET_SECONDS
    stream.ended.wait(deadline)  # open all along (a heartbeat each 0.3 s)
    assert not stream.ended.is_set()
    stream.close()
    assert time.monotonic() - taken_at > 2 * TICKET_SECONDS
    assert open_with(game.url("/events"), ticket).status_code == 200
    assert refusal(open_with(game.url("/events"), unused))


def test_a_ticket_opens_only_its_own_game_and_every_refusal_looks_the_same(
    gunicorn: Callable[[Mapping[str, str]], GunicornServer], redis_url: str
):
    server = instance(gunicorn, redis_url)
    game, other = LiveGame.create(server.url), LiveGame.create(server.url)
    ticket = take_ticket(game, 0)
    for _again in range(3):  # not spent by a use
        assert open_with(game.url("/events"), ticket).status_code == 200
    answers = {
        refusal(open_with(other.url("/events"), ticket)),
        refusal(open_with(game.url("/events"), "A" * 32)),
    }
    assert len(answers) == 1, answers  # the same answer whatever went wrong
    # sent as is (requests would decode %74): the app reads the name as ticket
    assert raw_get(server.url, f"/v1/games/{game.id}/events?after=0&%74icket={ticket}") == 200
    no_token = requests.post(game.url("/stream-tickets"), timeout=10)
    other_seat = requests.post(game.url("/stream-tickets"), headers=other.auth(0), timeout=10)
    assert no_token.status_code == other_seat.status_code == 401
    assert ticket not in server.stdout() + server.stderr()
    assert "ticket=<redacted>" in server.stdout() and "%74icket=<redacted>" in server.stdout()


def _ticket_of(client: FlaskClient, game_id: str, token: str) -> str:
    answer = client.post(
        f"/v1/games/{game_id}/stream-tickets", headers={"Authorization": f"Bearer {token}"}
    )
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()["ticket"]  # type: ignore[no-any-return]


def _events_with(client: FlaskClient, game_id: str, ticket: str, media: Any = None) -> Any:
    query = {"ticket": ticket}
    return client.get(f"/v1/games/{game_id}/events", query_string=query, headers=media or {})


def _problem(body: dict[str, Any]) -> tuple[Any, ...]:
    return body["code"], body["title"], body["detail"], body["status"]


@pytest.mark.parametrize("media", [{}, SSE])
def test_a_ticket_is_refused_once_its_seat_changed_hands(client: FlaskClient, media: Any):
    """Issue 39 item 1, the ticket variant: a ticket taken before its holder left,
    used after another player took the seat and the game started, would carry the
    newcomer's hand. Refused: the seat is no longer held by the token that took
    the ticket, and so after the old holder comes back to another seat."""
    game = create_game(client, [{"name": "ann"}], seats=3)
    joined = client.post(f"/v1/games/{game.id}/players", json={"name": "bob", "seat": 1})
    bob = joined.get_json()["token"]
    ticket, later = _ticket_of(client, game.id, bob), _ticket_of(client, game.id, bob)
    working = _events_with(client, game.id, _ticket_of(client, game.id, bob), media)
    assert working.status_code == 200
    working.close()
    unknown = _events_with(client, game.id, "B" * 32, media).get_json()

    left = client.delete(f"/v1/games/{game.id}/seat", headers={"Authorization": f"Bearer {bob}"})
    assert left.status_code == 200, left.get_json()
    gone = _events_with(client, game.id, ticket, media)
    assert gone.status_code == 401
    assert _problem(gone.get_json()) == _problem(unknown)
    assert gone.headers["WWW-Authenticate"] == 'Bearer realm="games"'

    for name, seat in (("cat", 1), ("bob", 2)):  # the seat taken by another; bob back elsewhere
        answer = client.post(f"/v1/games/{game.id}/players", json={"name": name, "seat": seat})
        assert answer.status_code == 201, answer.get_json()
    assert game.public()["status"] == "playing"
    taken = _events_with(client, game.id, later, media)
    assert taken.status_code == 401
    assert _problem(taken.get_json()) == _problem(unknown)
    assert b"dealt" not in taken.data


def test_a_ticket_lasts_as_long_as_its_token_holds_the_seat(client: FlaskClient):
    """Resigning keeps the seat's token (it still reads its own view and events),
    and so the ticket; the ticket sees what the token sees."""
    game = create_game(client, [{"name": "ann"}, {"name": "bob"}])
    ticket = _ticket_of(client, game.id, game.tokens[1])
    resigned = client.post(f"/v1/games/{game.id}/resign", headers=game.auth(1))
    assert resigned.status_code == 200, resigned.get_json()
    game.settled()  # the bot worker played the resigned seat's turn, if it was on turn
    page = _events_with(client, game.id, ticket)
    assert page.status_code == 200
    assert page.get_json()["events"] == game.events(1)
