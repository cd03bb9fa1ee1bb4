"""The shipped topology, run for real: deploy/nginx.conf in front of two instances and a
Redis that fsyncs every write, played through as a client would, with the failures an
operator meets.

nginx runs the shipped config with only ports and paths changed (harness/nginx_server.py):
it finds the instances by asking DNS for ``api`` at request time, as in compose, where
a stand-in DNS answers with the two instances' addresses (127.0.1.1 and 127.0.1.2, same
port). Each instance is gunicorn with deploy/gunicorn.conf.py, two gevent workers, their
metrics added up (``PROMETHEUS_MULTIPROC_DIR``), ``TRUSTED_PROXY_HOPS=1`` and the rate
limits on, as compose.yaml sets them. Redis runs with ``appendonly yes`` and
``appendfsync always``. Clients reach nginx from loopback addresses of their own
(127.0.0.1, .2, .3), so each is a different client address to nginx.

The scenarios (docs/PRODUCTION.md, "Behind a load balancer", tells what each shows):
a full game; ``kill -9`` of one instance mid-game; a move in flight when its instance
dies; SIGTERM of one instance while streams are open; ``kill -9`` of Redis and a
restart from its AOF; a rate-limit budget per client address, whatever
``X-Forwarded-For`` a client sends; request ids and typed logs end to end; nginx's own
errors as problem+json. A scenario that stops a process leaves it stopped: the next one
starts whatever is down first (:meth:`Topology.ensure_up`).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
from requests.adapters import HTTPAdapter

from harness.gunicorn_server import GunicornServer
from harness.live_game import LiveGame, choose
from harness.nginx_server import INSTALL_HINT, NginxServer, nginx_binary
from harness.ports import free_port_on
from harness.redis_server import RedisServer, redis_server_binary
from harness.replay_check import verify_game
from service.bots.api_client import Client
from service.bots.feed import EventFeed

pytestmark = [
    pytest.mark.skipif(nginx_binary() is None, reason=INSTALL_HINT),
    pytest.mark.skipif(redis_server_binary() is None, reason="redis-server not installed"),
]

API_HOSTS = ["127.0.1.1", "127.0.1.2"]
CREATE_LIMIT = 20
PROBLEM_JSON = "application/problem+json"
SEED = "topology"
HELD = 3.0
"""A move not answered within this long is held by the frozen instance (the other one
answers in milliseconds)."""


class SourceAddress(HTTPAdapter):
    """Connections from one local address: a client of its own, to nginx."""

    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def client_at(address: str) -> requests.Session:
    session = requests.Session()
    session.mount("http://", SourceAddress(address))
    return session


class Topology:
    """Redis (AOF, fsync always), two instances on one port, nginx in front."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.redis = RedisServer(extra_args=("--appendonly", "yes", "--appendfsync", "always"))
        self.port = free_port_on(API_HOSTS)
        self.instances: list[GunicornServer] = []
        self.redis_seen: list[int | None] = []
        """The Redis process each instance has known since it started."""
        self.nginx: NginxServer | None = None

    def _env(self, number: int) -> dict[str, str]:
        return {
            "REDIS_URL": self.redis.url,
            "WEB_CONCURRENCY": "2",
            "TRUSTED_PROXY_HOPS": "1",
            "PROMETHEUS_MULTIPROC_DIR": str(self.run_dir / f"metrics-{number}"),
            "RATE_LIMITS": "true",
            "RATE_LIMIT_CREATE": f"{CREATE_LIMIT}/minute",
        }

    def start(self) -> Topology:
        self.redis.start()
        for number, host in enumerate(API_HOSTS):
            server = GunicornServer(
                self._env(number),
                host=host,
                port=self.port,
                log_dir=self.run_dir,
                name=f"api{number}",
            )
            self.instances.append(server.start())
            self.redis_seen.append(self.redis.pid)
        self.nginx = NginxServer(API_HOSTS, self.port).start()
        return self

    @property
    def url(self) -> str:
        assert self.nginx is not None
        return self.nginx.url

    def ensure_up(self) -> None:
        """Start again whatever an earlier scenario stopped, and the instances that
        lived through a Redis crash: their rate limits are counted in each worker's
        memory for a while after (service/api/limits.py), not in the shared budget the
        next scenario expects."""
        self.redis.start()  # at once if it runs
        for number, server in enumerate(self.instances):
            if not server.running() or self.redis_seen[number] != self.redis.pid:
                server.stop()
                server.start()
                self.redis_seen[number] = self.redis.pid
            server.wait_ready()

    def access_entries(self, number: int) -> list[dict[str, Any]]:
        """Instance ``number``'s access log so far (every run of it)."""
        return [json.loads(line) for line in self.instances[number].stdout().splitlines()]

    def cleanup(self) -> None:
        if self.nginx is not None:
            self.nginx.cleanup()
        for server in self.instances:
            server.cleanup()
        self.redis.cleanup()


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    built = Topology(tmp_path_factory.mktemp("topology"))
    try:
        yield built.start()
    finally:
        built.cleanup()


@pytest.fixture
def lb(topology: Topology) -> Topology:
    """The topology with every process up."""
    topology.ensure_up()
    return topology


def play_out(game: LiveGame) -> int:
    """Play ``game`` to its end (every answer must be 200); the number of moves made."""
    moves = 0
    while game.step():
        moves += 1
    return moves


def assert_verified(lb: Topology, game: LiveGame) -> None:
    """The game's public events replay to its stored state, and ``three-thirteen-verify``
    accepts its replay, fetched through nginx."""
    client = lb.redis.client()
    try:
        problems, view = verify_game(client, requests.Session(), lb.url, game.id, SEED)
    finally:
        client.close()
    assert problems == [] and view["status"] == "finished", problems
    verify = [sys.executable, "-m", "service.hosting.verify", "--url", lb.url, "--game", game.id]
    result = subprocess.run(verify, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0 and result.stdout.startswith("verified"), result.stdout


def test_a_full_game_through_nginx_is_spread_over_both_instances(lb: Topology) -> None:
    game = LiveGame.create(lb.url, players=2, seed=SEED)
    assert play_out(game) > 100
    assert_verified(lb, game)
    served = [
        sum(1 for e in lb.access_entries(n) if e["path"].startswith(game.url()[len(lb.url) :]))
        for n in range(2)
    ]
    assert min(served) > sum(served) / 4, f"requests per instance: {served}"


def test_kill_9_of_an_instance_mid_game_is_invisible_to_the_client(lb: Topology) -> None:
    game = LiveGame.create(lb.url, players=2, seed=SEED)
    for _ in range(20):
        assert game.step()
    lb.instances[0].signal_all(signal.SIGKILL)
    play_out(game)  # every request answered 200: nginx passed the failed ones on
    assert_verified(lb, game)
    assert lb.nginx is not None
    after = [e for e in lb.nginx.access_entries() if e["path"].startswith(f"/v1/games/{game.id}")]
    assert all(e["status"] == 200 for e in after)
    dead = f"{API_HOSTS[0]}:{lb.port}"
    retried = [e for e in after if e["upstream"].startswith(dead + ", ")]
    assert retried, "no request was tried on the dead instance first (nginx's DNS order)"


def test_a_move_in_flight_when_its_instance_dies_gets_a_problem_and_applies_once_on_retry(
    lb: Topology,
) -> None:
    """The instance is frozen (SIGSTOP) so a move sent to it stays in flight; it is then
    killed: nginx may not replay a POST that reached an instance, and answers 502
    problem+json. The client's retry with the same Idempotency-Key is applied once."""
    game = LiveGame.create(lb.url, players=2, seed=SEED)
    seat = game.public()["round"]["turn"]
    view = requests.get(game.url("/view"), headers=game.auth(seat), timeout=10).json()
    version = view["version"]
    frozen = lb.instances[0]
    frozen.signal_all(signal.SIGSTOP)
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            for _ in range(40):
                move = _no_going_out(view)
                key = uuid.uuid4().hex
                headers = {**game.auth(seat), "Idempotency-Key": key}
                sent = pool.submit(
                    requests.post, game.url("/moves"), json=move, headers=headers, timeout=30
                )
                try:
                    answer = sent.result(timeout=HELD)
                except TimeoutError:
                    break  # held by the frozen instance
                assert answer.status_code == 200, answer.text
                view = answer.json()
                version = view["version"]
                if view["round"]["turn"] != seat:  # the other seat starts its turn: a draw
                    seat = view["round"]["turn"]
                    view = {"legal_moves": [{"type": "draw", "source": "stock"}]}
            else:
                pytest.fail("40 moves in a row went to the instance that answers")
            frozen.signal_all(signal.SIGKILL)
            failed = sent.result(timeout=10)
    finally:
        if frozen.running():
            frozen.signal_all(signal.SIGKILL)
    assert failed.status_code == 502
    assert failed.headers["Content-Type"] == PROBLEM_JSON
    assert failed.headers["Retry-After"] == "1"
    assert failed.headers["X-Request-ID"]
    problem = failed.json()
    assert (problem["code"], problem["status"]) == ("BAD_GATEWAY", 502)
    retried = requests.post(game.url("/moves"), json=move, headers=headers, timeout=10)
    assert retried.status_code == 200, retried.text
    assert retried.json()["version"] == version + 1 == game.public()["version"]
    again = requests.post(game.url("/moves"), json=move, headers=headers, timeout=10)
    assert again.status_code == 200 and again.headers.get("Idempotent-Replayed") == "true"
    assert game.public()["version"] == version + 1  # applied once


def _no_going_out(view: dict[str, Any]) -> dict[str, Any]:
    """A draw or a discard (going out would end the round: the next turn is then unknown)."""
    move = choose(view)
    if move["type"] == "go_out":
        return next(m for m in view["legal_moves"] if m["type"] == "discard")
    return move


def _streams_on(server: GunicornServer) -> int:
    """Open SSE streams on an instance (its workers' gauges, added up)."""
    text = requests.get(server.url + "/metrics", timeout=10).text
    found = re.search(r'^t13_event_followers\{kind="sse"\} (\S+)$', text, re.M)
    return int(float(found.group(1))) if found else 0


def _followers_by_instance(lb: Topology) -> list[int]:
    return [_streams_on(server) for server in lb.instances]


def test_sigterm_of_an_instance_with_open_streams_clients_resume_on_the_other(
    lb: Topology,
) -> None:
    game = LiveGame.create(lb.url, players=2, seed=SEED)
    feeds: list[tuple[int, EventFeed]] = []
    try:
        # Streams land where nginx sends them: open until the instance to stop has some.
        while (on_stopped := _followers_by_instance(lb)[0]) < 3:
            assert len(feeds) < 40, f"streams per instance: {_followers_by_instance(lb)}"
            seat = len(feeds) % 2
            client = Client(lb.url, game.id, game.tokens[seat])
            feeds.append((seat, EventFeed(client.open_stream).start()))
            _until(lambda: sum(_followers_by_instance(lb)) == len(feeds))
        for _ in range(6):
            assert game.step()
        stopping = lb.instances[0]
        stopping.terminate()
        for _ in range(30):  # play on while it drains and after it is gone
            assert game.step()
        assert stopping.wait(timeout=30) == 0
        _until(lambda: _streams_on(lb.instances[1]) == len(feeds))  # all on the other one
        for _ in range(6):
            assert game.step()
        received: dict[int, list[dict[str, Any]]] = {n: [] for n in range(len(feeds))}
        for seat in (0, 1):
            expected = game.events(seat)
            for number, (owner, feed) in enumerate(feeds):
                if owner != seat:
                    continue
                deadline = time.monotonic() + 20
                while len(received[number]) < len(expected) and time.monotonic() < deadline:
                    received[number] += feed.take(block=False, linger=0.1)
                assert received[number] == expected, f"stream {number} of seat {seat}"
        notified = [feed for _seat, feed in feeds if feed.stop_notices]
        assert len(notified) == on_stopped, "each stream on the stopped instance was told"
        assert all(feed.resumes and feed.duplicates == 0 for feed in notified)
    finally:
        for _seat, feed in feeds:
            feed.close()


def _until(condition: Callable[[], bool], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not within the time allowed"
        time.sleep(0.05)


class Player:
    """Plays a game through nginx on a thread as a careful client does: every move with
    an Idempotency-Key, retried with it on 502/503/504 after ``Retry-After``."""

    def __init__(self, lb: Topology, game: LiveGame) -> None:
        self.lb = lb
        self.game = game
        self.session = requests.Session()
        self.acknowledged: list[tuple[int, dict[str, Any], int]] = []
        self.unavailable: list[dict[str, Any]] = []
        self.failure: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _call(self, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
        deadline = time.monotonic() + 60
        while True:
            answer = self.session.request(method, url, timeout=30, **kwargs)
            if answer.status_code not in (502, 503, 504):
                assert answer.status_code == 200, answer.text
                return dict(answer.json())
            assert answer.headers["Content-Type"] == PROBLEM_JSON, answer.text
            self.unavailable.append(answer.json())
            assert time.monotonic() < deadline, "the service did not come back"
            time.sleep(float(answer.headers.get("Retry-After", "1")) / 5)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                public = self._call("GET", self.game.url())
                if public["status"] != "playing":
                    return
                seat = public["round"]["turn"]
                view = self._call("GET", self.game.url("/view"), headers=self.game.auth(seat))
                move = choose(view)
                headers = {**self.game.auth(seat), "Idempotency-Key": uuid.uuid4().hex}
                answer = self._call("POST", self.game.url("/moves"), json=move, headers=headers)
                self.acknowledged.append((seat, move, answer["version"]))
        except BaseException as exc:
            self.failure = exc

    def start(self) -> Player:
        self._thread.start()
        return self

    def wait_for(self, moves: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while len(self.acknowledged) < moves:
            assert self.failure is None, self.failure
            assert time.monotonic() < deadline, f"{len(self.acknowledged)} moves of {moves}"
            time.sleep(0.01)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        if self.failure is not None:
            raise self.failure


def _moves_in_events(events: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    kinds = {"drew": ("draw", "source"), "discarded": ("discard", "card")}
    kinds["went_out"] = ("go_out", "discard")
    return [
        (e["seat"], kinds[e["type"]][0], e[kinds[e["type"]][1]])
        for e in events
        if e["type"] in kinds and not e.get("private")
    ]


def _move_tuple(seat: int, move: dict[str, Any]) -> tuple[int, str, str]:
    field = {"draw": "source", "discard": "card", "go_out": "discard"}[move["type"]]
    return seat, move["type"], move[field]


def test_redis_killed_and_restarted_from_its_aof_loses_no_acknowledged_move(
    lb: Topology,
) -> None:
    game = LiveGame.create(lb.url, players=2, seed=SEED)
    start_version = game.public()["version"]
    player = Player(lb, game).start()
    try:
        player.wait_for(40)
        lb.redis.kill()  # SIGKILL while moves are being made
        time.sleep(1.0)
        lb.redis.start()  # the same port and directory: the AOF is read back
        player.wait_for(len(player.acknowledged) + 40)
    finally:
        player.stop()
    assert player.unavailable, "no request met the dead Redis"
    assert {p["code"] for p in player.unavailable} <= {"STORE_UNAVAILABLE", "BAD_GATEWAY"}
    versions = [version for _seat, _move, version in player.acknowledged]
    # every acknowledged move is one version, in order: none lost, none applied twice
    assert versions == list(range(start_version + 1, start_version + 1 + len(versions)))
    assert game.public()["version"] == versions[-1]
    moves = [_move_tuple(seat, move) for seat, move, _version in player.acknowledged]
    assert _moves_in_events(game.events()) == moves
    play_out(game)
    assert_verified(lb, game)


def test_each_client_address_has_its_own_create_budget_whatever_it_forwards(
    lb: Topology,
) -> None:
    body = {"players": [{"name": "a"}, {"name": "b"}]}
    second = client_at("127.0.0.2")
    for _ in range(CREATE_LIMIT):
        created = second.post(lb.url + "/v1/games", json=body, timeout=10)
        assert created.status_code == 201, created.text
    refused = second.post(lb.url + "/v1/games", json=body, timeout=10)
    assert refused.status_code == 429 and refused.json()["code"] == "RATE_LIMITED"
    assert refused.headers["Content-Type"] == PROBLEM_JSON and int(refused.headers["Retry-After"])
    # A made-up X-Forwarded-For is kept by nginx, but the API takes the address nginx adds.
    for forged in ("198.51.100.7", "127.0.0.3", "127.0.0.3, 127.0.0.4"):
        spoofed = second.post(
            lb.url + "/v1/games", json=body, headers={"X-Forwarded-For": forged}, timeout=10
        )
        assert spoofed.status_code == 429, forged
    # Other addresses have their own budgets.
    for address in ("127.0.0.3", "127.0.0.1"):
        created = client_at(address).post(lb.url + "/v1/games", json=body, timeout=10)
        assert created.status_code == 201, (address, created.text)
    # Both logs name the client, not the proxy (each logs a request once it is answered).
    assert lb.nginx is not None
    nginx = lb.nginx

    def remotes() -> tuple[set[str], set[str]]:
        by_nginx = {e["remote"] for e in nginx.access_entries() if e["path"] == "/v1/games"}
        by_app = {
            e["remote"] for n in range(2) for e in lb.access_entries(n) if e["path"] == "/v1/games"
        }
        return by_nginx, by_app

    clients = {"127.0.0.1", "127.0.0.2", "127.0.0.3"}
    _until(lambda: all(logged >= clients for logged in remotes()))
    by_nginx, by_app = remotes()
    assert by_nginx == by_app == clients  # no forged address, nor nginx's


def test_request_ids_and_typed_logs_end_to_end(lb: Topology) -> None:
    assert lb.nginx is not None
    sent = {
        "given": requests.get(lb.url + "/healthz", headers={"X-Request-ID": "lb-req-1"}, timeout=5),
        "none": requests.get(lb.url + "/healthz", timeout=5),
        "unusable": requests.get(lb.url + "/healthz", headers={"X-Request-ID": "a b"}, timeout=5),
    }
    ids = {name: answer.headers["X-Request-ID"] for name, answer in sent.items()}
    assert ids["given"] == "lb-req-1"
    assert re.fullmatch(r"[0-9a-f]{32}", ids["none"]) and re.fullmatch(
        r"[0-9a-f]{32}", ids["unusable"]
    )
    deadline = time.monotonic() + 5
    while True:
        by_nginx = {e["request_id"]: e for e in lb.nginx.access_entries()}
        by_app = {e["request_id"]: e for n in range(2) for e in lb.access_entries(n)}
        if set(ids.values()) <= by_nginx.keys() & by_app.keys():
            break
        assert time.monotonic() < deadline, "a request id is missing from a log"
        time.sleep(0.05)
    time_format = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d")
    for rid in ids.values():
        for entry in (by_nginx[rid], by_app[rid]):
            assert (entry["path"], entry["status"]) == ("/healthz", 200)
            assert all(type(entry[k]) is int for k in ("status", "bytes", "duration_ms"))
            assert time_format.fullmatch(entry["time"])
        assert by_app[rid]["remote"] == by_nginx[rid]["remote"] == "127.0.0.1"


def test_metrics_are_not_served_through_nginx_but_by_each_instance(lb: Topology) -> None:
    public = requests.get(lb.url + "/metrics", timeout=5)
    assert public.status_code == 404 and public.headers["Content-Type"] == PROBLEM_JSON
    assert public.json()["code"] == "NOT_FOUND" and public.headers["X-Request-ID"]
    for path in ("//metrics", "/%6Detrics", "/metrics?x=1", "/./metrics"):
        assert requests.get(lb.url + path, timeout=5).status_code == 404, path
    for server in lb.instances:
        direct = requests.get(server.url + "/metrics", timeout=5)
        assert direct.status_code == 200 and "t13_http_requests_total" in direct.text


def test_nginx_answers_502_as_a_problem_when_no_instance_answers() -> None:
    """Nothing listens at the addresses nginx finds for ``api``."""
    with NginxServer(["127.0.1.8", "127.0.1.9"], free_port_on(["127.0.1.8"])) as proxy:
        answer = requests.post(
            proxy.url + "/v1/games", json={}, headers={"X-Request-ID": "lb-502"}, timeout=10
        )
        assert answer.status_code == 502
        assert answer.headers["Content-Type"] == PROBLEM_JSON
        assert answer.headers["Retry-After"] == "1"
        assert answer.headers["X-Request-ID"] == "lb-502"
        assert answer.json() == {
            "type": "https://three-thirteen.dev/problems/bad-gateway",
            "title": "No instance answered",
            "status": 502,
            "detail": "no instance of the service answered; retry (a create, join or move "
            "with the same Idempotency-Key is applied once)",
            "code": "BAD_GATEWAY",
        }
        _until(lambda: "lb-502" in proxy.access_log())  # logged once the answer is sent
        (entry,) = [e for e in proxy.access_entries() if e["request_id"] == "lb-502"]
        assert entry["status"] == 502 and entry["upstream"].count(",") == 1  # both tried
