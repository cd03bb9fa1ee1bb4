"""Seat squatting and lobby flooding (issue 39): a stranger who takes a seat of a
listed table and never plays cannot stall it; one client address cannot take
every open seat of the lobby nor list more than a few games; and the lobby puts
the tables whose players are there ahead of those nobody follows."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from harness.redis_cluster import start_cluster
from service.store.keys import STATE, key
from tests.api.conftest import Game, make_app
from tests.lobby.conftest import ids, list_all

SQUATTER = "203.0.113.66"
STALL_BOUND_SECONDS = 120.0
"""Generous: the game below takes a few seconds, two of them the squatter's timers."""


def at(address: str) -> dict[str, Any]:
    """Test-client arguments of a request from ``address``."""
    return {"environ_base": {"REMOTE_ADDR": address}}


def post(client: FlaskClient, path: str, address: str, **body: Any) -> Any:
    return client.post(path, json=body, **at(address))


def create_listed(client: FlaskClient, address: str, seats: int = 4, **body: Any) -> Game:
    answer = post(client, "/v1/games", address, players=[{"name": "host"}], seats=seats,
                  listed=True, **body)  # fmt: skip
    assert answer.status_code == 201, answer.get_json()
    return Game(client, answer.get_json()["id"], {0: answer.get_json()["players"][0]["token"]})


def seated(game: Game, answer: Any) -> int:
    assert answer.status_code == 201, answer.get_json()
    body = answer.get_json()
    game.tokens[body["seat"]] = body["token"]
    return int(body["seat"])


# -- a squatter cannot stall a table ------------------------------------------------


def _sit_down(client: FlaskClient, how: str) -> tuple[Game, int]:
    """Two players and a squatter at a 3-seat table strangers share: the game,
    and the squatter's seat."""
    table = {"seats": 3, "options": {"max_turns_per_round": 6}}
    if how == "listed":
        game = create_listed(client, "198.51.100.1", **table)
        seated(game, post(client, f"/v1/games/{game.id}/players", "198.51.100.2", name="bob"))
        found = client.get("/v1/games", **at(SQUATTER)).get_json()["games"]
        assert [entry["id"] for entry in found] == [game.id]
        answer = post(client, f"/v1/games/{game.id}/players", SQUATTER, name="squatter")
        return game, seated(game, answer)
    first = post(client, "/v1/lobby/quick-join", "198.51.100.1", name="ann", **table)
    game = Game(client, first.get_json()["id"])
    seated(game, first)
    seated(game, post(client, "/v1/lobby/quick-join", "198.51.100.2", name="bob", **table))
    answer = post(client, "/v1/lobby/quick-join", SQUATTER, name="squatter", **table)
    assert answer.get_json()["id"] == game.id
    return game, seated(game, answer)


def _play(game: Game, seat: int, view: dict[str, Any]) -> None:
    """``seat`` plays greedily from ``view``; a move the timer overtook is refused
    (the turn was played for it), which is no failure here."""
    moves = view["legal_moves"]
    if not moves:
        return
    go_out = [m for m in moves if m["type"] == "go_out"]
    discards = {m["card"]: m for m in moves if m["type"] == "discard"}
    deadwood = [c for c in view["arrangement"]["deadwood"] if c in discards]
    move = go_out[0] if go_out else discards[deadwood[-1]] if deadwood else moves[0]
    answer = game.move(seat, move, **{"If-Match": f'"{view["version"]}"'})
    assert answer.status_code in (200, 409, 412), answer.get_json()


@pytest.mark.parametrize("how", ["listed", "quick-join"])
def test_a_squatter_who_never_plays_cannot_stall_the_table(redis_client, redis_url, how, bots_for):
    """The squatter takes the last seat and never makes another request: the bot
    worker plays its turns when its timer runs out, hands its seat to the autopilot
    after two missed turns, and the game finishes."""
    app = make_app(redis_url, LOBBY_TURN_SECONDS="1", LOBBY_AUTOPILOT_AFTER="2")
    bots_for(app)
    client = app.test_client()
    game, squat = _sit_down(client, how)
    public = game.public()
    assert public["status"] == "playing"
    assert public["timer"]["turn_timeout_seconds"] == 1, "a listed table has a turn timer"
    assert public["timer"]["autopilot_after_missed_turns"] == 2
    players = [seat for seat in game.tokens if seat != squat]
    until = time.monotonic() + STALL_BOUND_SECONDS
    while public["status"] != "finished":
        assert time.monotonic() < until, f"stalled: {public['round']}"
        turn = public["round"]["turn"]
        if turn in players:
            _play(game, turn, game.view(turn))
        else:
            time.sleep(0.05)  # the squatter's turn: the others only poll
        public = game.public()  # the bot worker plays the overdue turn
    events = game.events()
    handed = [e for e in events if e["type"] == "autopilot_on" and e["seat"] == squat]
    assert [e["reason"] for e in handed] == ["missed_turns"]
    before = [e for e in events if e["seq"] < handed[0]["seq"] and e.get("seat") == squat]
    turns = [e for e in before if e["type"] in ("discarded", "went_out")]  # a turn's end
    assert len(turns) == 2 and all(e.get("automatic") for e in turns), before
    after = [e for e in events if e["seq"] > handed[0]["seq"] and e.get("seat") == squat]
    assert any(e["type"] == "discarded" and e.get("bot") for e in after)
    assert game.public()["players"][squat]["autopilot"]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"turn_timeout_seconds": 3600}, "turn_timeout_seconds"),
        ({"autopilot_after_missed_turns": 5}, "autopilot_after_missed_turns"),
    ],
)
def test_a_listed_table_keeps_its_timer_within_bounds(client, body, field):
    """A listed table may ask for a shorter or longer timer, not for none, nor for
    one that lets a squatter hold it for hours; an unlisted game is as before."""
    assert (
        create_listed(client, "198.51.100.1", turn_timeout_seconds=None).public()["timer"][
            "turn_timeout_seconds"
        ]
        == 60
    ), "null is the lobby's default, not no timer"
    assert (
        create_listed(client, "198.51.100.1", turn_timeout_seconds=300).public()["timer"][
            "turn_timeout_seconds"
        ]
        == 300
    )
    for path, extra in (("/v1/games", {"players": [{"name": "a"}], "listed": True}),
                        ("/v1/lobby/quick-join", {"name": "a"})):  # fmt: skip
        answer = post(client, path, "198.51.100.1", **extra, **body)
        assert answer.status_code == 422, answer.get_json()
        assert answer.get_json()["code"] == "INVALID_OPTION"
        assert field in answer.get_json()["errors"]
    private = post(client, "/v1/games", "198.51.100.1", players=[{"name": "a"}], seats=2, **body)
    assert private.status_code == 201
    timer = Game(client, private.get_json()["id"]).public()["timer"]
    unlisted = client.post("/v1/games", json={"players": [{"name": "a"}], "seats": 2})
    assert Game(client, unlisted.get_json()["id"]).public()["timer"]["turn_timeout_seconds"] is None
    assert timer["turn_timeout_seconds"] == body.get("turn_timeout_seconds")


# -- one address cannot take every seat, nor list every game ------------------------


def capped_apps(redis_url: str | None, count: int = 1, **env: str) -> list[FlaskClient]:
    """Clients of ``count`` app instances on one store (None: the embedded one),
    the lobby's limits on (4 seats, 2 listed games per address: the defaults),
    the rate limits off (the lobby's limits do not depend on them)."""
    settings = {"LOBBY_SEATS_PER_ADDRESS": "4", "LOBBY_LISTED_PER_ADDRESS": "2", **env}
    return [make_app(redis_url, **settings).test_client() for _ in range(count)]


@pytest.fixture(params=["redis", "cluster", "embedded"])
def backend(request: pytest.FixtureRequest) -> Iterator[tuple[str | None, dict[str, str]]]:
    """The store the apps share (its URL and settings): the test Redis, a 3-node
    Redis Cluster, or the embedded store (no URL)."""
    if request.param == "redis":
        request.getfixturevalue("redis_client")  # emptied first
        yield request.getfixturevalue("redis_url"), {}
    elif request.param == "cluster":
        with start_cluster(3) as nodes:
            yield nodes[0].url, {"REDIS_CLUSTER": "true"}
    else:
        yield None, {}


def test_one_address_cannot_take_every_open_seat(backend):
    """12 waiting 4-seat games (36 open seats); one address lists the lobby and
    tries every seat, through two instances: it gets 4, then 429 with nothing
    changed; a seat it leaves, or whose game is gone, it may take again."""
    url, env = backend
    first, second = capped_apps(url, 2, **env)
    net = secrets.token_hex(2)  # the embedded store outlives the test: addresses of its own
    squatter = f"2001:db8:{net}::66"
    games = [create_listed(first, f"2001:db8:{net}::{i}") for i in range(12)]
    ours = [e for e in list_all(first) if e["id"] in {g.id for g in games}]
    assert sum(len(e["seats"]["open"]) for e in ours) == 36
    taken: list[tuple[Game, int]] = []
    refused = []
    for n, entry in enumerate(ours):
        game = next(g for g in games if g.id == entry["id"])
        for _seat in entry["seats"]["open"]:
            client = (first, second)[n % 2]
            before = game.public()
            answer = post(client, f"/v1/games/{game.id}/players", squatter, name="squat")
            if answer.status_code == 201:
                taken.append((game, seated(game, answer)))
                continue
            refused.append(answer)
            assert game.public() == before, "a refused join changes nothing"
    assert len(taken) == 4 and len(refused) == 32
    problem = refused[0].get_json()
    assert refused[0].status_code == 429 and problem["code"] == "RATE_LIMITED"
    assert refused[0].headers["Retry-After"] and "4 seats" in problem["detail"]
    untouched = [g for g in games if len(g.public()["open_seats"]) == 3]
    other = post(first, f"/v1/games/{untouched[0].id}/players", f"2001:db8:{net}::99", name="x")
    assert other.status_code == 201, "another address is not held back"

    left, seat = next((g, s) for g, s in taken if g.public()["status"] == "waiting")
    assert second.delete(f"/v1/games/{left.id}/seat", headers=left.auth(seat),
                         **at(squatter)).status_code == 200  # fmt: skip
    target = untouched[-1]
    assert post(second, f"/v1/games/{target.id}/players", squatter, name="s").status_code == 201
    assert post(first, f"/v1/games/{target.id}/players", squatter, name="s").status_code == 429

    gone = next(g for g, _s in taken if g.public()["status"] == "playing")
    store = first.application.extensions["t13"].store
    store.client.delete(key(gone.id, STATE))  # as when a game expires
    assert post(first, f"/v1/games/{target.id}/players", squatter, name="s").status_code == 201


def test_quick_join_counts_against_the_same_cap(redis_client, redis_url):
    """Each quick-join lists a new table: the listed games' cap is raised here, so
    that the seats' cap is the one met (``test_lobby_caps.py`` meets the other)."""
    (client,) = capped_apps(redis_url, LOBBY_LISTED_PER_ADDRESS="8")
    answers = [post(client, "/v1/lobby/quick-join", SQUATTER, name="q", seats=n)
               for n in (2, 3, 4, 5, 6)]  # fmt: skip
    assert [a.status_code for a in answers] == [201, 201, 201, 201, 429]
    assert answers[-1].get_json()["code"] == "RATE_LIMITED"
    assert len(list_all(client)) == 4, "the refused quick-join listed no game"
    game = create_listed(client, "198.51.100.1", seats=2)
    refused = post(client, f"/v1/games/{game.id}/players", SQUATTER, name="q")
    assert refused.status_code == 429, "quick-join seats and joined seats are one count"


def test_a_seat_counts_no_more_once_its_game_leaves_the_lobby(redis_client, redis_url):
    (client,) = capped_apps(redis_url, LOBBY_SEATS_PER_ADDRESS="1", LOBBY_WAITING_SECONDS="1")
    waiting = create_listed(client, "198.51.100.1")
    assert post(client, f"/v1/games/{waiting.id}/players", SQUATTER, name="s").status_code == 201
    later = create_listed(client, "198.51.100.2")
    assert post(client, f"/v1/games/{later.id}/players", SQUATTER, name="s").status_code == 429
    time.sleep(1.1)  # both leave the lobby; the seat held in the first counts no more
    assert post(client, f"/v1/games/{later.id}/players", SQUATTER, name="s").status_code == 201


def test_one_address_lists_at_most_two_waiting_games(redis_client, redis_url):
    """Two listed games waiting at once per address (its own seats within the seat
    cap): a third is 429; an unlisted game is never refused; a game that fills
    or that its creator leaves makes room."""
    (client,) = capped_apps(redis_url)
    flood = [post(client, "/v1/games", SQUATTER, players=[{"name": "s"}], seats=2, listed=True)
             for _ in range(5)]  # fmt: skip
    assert [a.status_code for a in flood] == [201, 201, 429, 429, 429]
    assert "2 listed games" in flood[2].get_json()["detail"]
    assert len(list_all(client)) == 2
    private = post(client, "/v1/games", SQUATTER, players=[{"name": "s"}], seats=2)
    assert private.status_code == 201

    filled = Game(client, flood[0].get_json()["id"])
    joined = post(client, f"/v1/games/{filled.id}/players", "198.51.100.5", name="x")
    assert joined.status_code == 201
    again = post(client, "/v1/games", SQUATTER, players=[{"name": "s"}], seats=2, listed=True)
    assert again.status_code == 201, again.get_json()
    assert post(client, "/v1/games", SQUATTER, players=[{"name": "s"}], seats=2,
                listed=True).status_code == 429  # fmt: skip
    left = Game(client, again.get_json()["id"], {0: again.get_json()["players"][0]["token"]})
    gone = client.delete(f"/v1/games/{left.id}/seat", headers=left.auth(0), **at(SQUATTER))
    assert gone.status_code == 200 and gone.get_json()["status"] == "cancelled"
    assert post(client, "/v1/games", SQUATTER, players=[{"name": "s"}], seats=2,
                listed=True).status_code == 201  # fmt: skip


def test_the_limits_are_on_by_default_rate_limits_or_not(redis_client, redis_url):
    """Unset (blank), the limits are the defaults, rate limits on or off; 0 is no limit."""
    defaults = {"LOBBY_SEATS_PER_ADDRESS": "", "LOBBY_LISTED_PER_ADDRESS": ""}
    for env in ({"RATE_LIMITS": "true", **defaults}, defaults, {"LOBBY_LISTED_PER_ADDRESS": "0"}):
        client = make_app(redis_url, **env).test_client()
        address = f"2001:db8::{secrets.token_hex(2)}"
        answers = [post(client, "/v1/games", address, players=[{"name": "s"}], seats=2,
                        listed=True).status_code for _ in range(3)]  # fmt: skip
        assert answers == ([201] * 3 if env.get("LOBBY_LISTED_PER_ADDRESS") else [201, 201, 429])


# -- live tables first ------------------------------------------------------------


@pytest.mark.parametrize("backend", ["redis", "cluster"], indirect=True)
def test_live_tables_come_first_however_many_are_spam(backend):
    """64 addresses each list a game nobody follows; three players list tables
    and follow them (their view, their events): the three are the first page's
    head, and paging on gives every game once."""
    url, env = backend
    (client,) = capped_apps(url, TRUSTED_PROXY_HOPS="1", **env)

    def via(address: str) -> dict[str, Any]:
        return {"headers": {"X-Forwarded-For": address}}

    real = []
    for i in range(3):
        answer = client.post("/v1/games", json={"players": [{"name": f"real{i}"}], "seats": 4,
                             "listed": True}, **via(f"198.51.100.{i}"))  # fmt: skip
        assert answer.status_code == 201
        made = answer.get_json()
        real.append(Game(client, made["id"], {0: made["players"][0]["token"]}))
    for game in real[:2]:
        game.view(0)  # following by polling its view
    follow = client.get(f"/v1/games/{real[2].id}/events?after=0", headers=real[2].auth(0))
    assert follow.status_code == 200  # following by its events
    spam = []
    for i in range(64):
        answer = client.post("/v1/games", json={"players": [{"name": "spam"}], "seats": 4,
                             "listed": True}, **via(f"203.0.113.{i}"))  # fmt: skip
        assert answer.status_code == 201, answer.get_json()
        spam.append(answer.get_json()["id"])
    page = client.get("/v1/games").get_json()
    assert len(page["games"]) == 20 and page["next"]
    assert ids(page["games"][:3]) == [g.id for g in reversed(real)], "live tables, newest first"
    assert set(ids(page["games"][3:])) <= set(spam)
    entries = list_all(client)
    everything = ids(entries)
    assert len(everything) == len(set(everything)) == 67
    # newest first; games made in the same millisecond are ordered by id (a total order)
    made = {entry["id"]: round(entry["created_at"] * 1000) for entry in entries}
    in_creation_order = [made[game] for game in spam]
    assert in_creation_order == sorted(in_creation_order), "creation times as the games were made"
    newest_first = sorted(spam, key=lambda game: (made[game], game), reverse=True)
    assert everything[3:] == newest_first, "then the others, newest first"


def test_quick_join_offers_a_live_table_first(client):
    idle = create_listed(client, "198.51.100.1", seats=2)
    live = create_listed(client, "198.51.100.2", seats=2)
    live.view(0)
    first = post(client, "/v1/lobby/quick-join", "198.51.100.3", name="q1").get_json()
    assert first["id"] == live.id, "the table whose player is there, though newer"
    second = post(client, "/v1/lobby/quick-join", "198.51.100.4", name="q2").get_json()
    assert second["id"] == idle.id, "then the others, oldest first"


def test_an_open_stream_keeps_its_table_live(redis_client, redis_url):
    """A creator who follows its table by an event stream alone keeps it live (the
    stream's heartbeats are signs of life); one who looked once, a while ago, no
    longer does."""
    client = make_app(redis_url, SSE_HEARTBEAT_SECONDS="0.1", LOBBY_LIVE_SECONDS="4").test_client()
    streamed = create_listed(client, "198.51.100.1")
    looked = create_listed(client, "198.51.100.2")  # newer
    looked.view(0)
    response = client.get(
        f"/v1/games/{streamed.id}/events",
        headers={"Accept": "text/event-stream", **streamed.auth(0)},
        buffered=False,
    )
    chunks = iter(response.response)
    until = time.monotonic() + 4.5  # past the window of the look
    while time.monotonic() < until:
        next(chunks)  # a heartbeat every 0.1 s
    listed = ids(client.get("/v1/games").get_json()["games"])
    response.close()
    assert listed == [streamed.id, looked.id]
