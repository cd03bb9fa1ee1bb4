"""Property-based fuzzing of everything a client sends: every endpoint, on both paths
(the fast lane and Flask, ``FAST_LANE=false``), with arbitrary values of every header
the service reads and arbitrary JSON in every body field, down to nested values
inside a move's melds.

For every request: never a 5xx; every 4xx is problem+json (its ``status`` the
answer's, its ``code`` a documented one); after a refused request nothing in Redis
changed (no game's state hash or event stream, no key added or removed); a body
over ``MAX_BODY_BYTES`` is never accepted, however it is sent.  Four runs: body
fields fuzzed, every header fuzzed, the conditional headers fuzzed on requests
that pass every other check, and everything at once.

Requests are built as WSGI environs (werkzeug's ``EnvironBuilder``) and sent through
the whole WSGI stack, middleware included; ``Content-Length`` and
``Transfer-Encoding`` are then set as drawn, as a server would pass them on
(``wsgi.input_terminated`` for a chunked body, as gunicorn sets it).
``FUZZ_EXAMPLES`` sets the number of requests per test (default 250, derandomized: the same
requests every run).
"""

from __future__ import annotations

import os
from typing import Any

import hypothesis.strategies as st
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from werkzeug.test import EnvironBuilder, run_wsgi_app

from service.api.problems import CODES
from tests.api.conftest import create_game, make_app
from tests.hardening.conftest import snapshot

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "250"))
MAX_BODY = 4096  # small, so that bodies over it are cheap to draw
ORIGIN = "https://table.example"
PROBLEM = "application/problem+json"

# what a header value can be on the wire (latin-1, no CR/LF/NUL), as WSGI passes it on
WIRE = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f")
    | st.sampled_from("\t\x01\x1b"),
    max_size=60,
)
JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
CONTAINERS = st.lists(JSON, max_size=3) | st.dictionaries(st.text(max_size=6), JSON, max_size=3)
CARD_CODES = ["AS", "2C", "7H", "10D", "JK", "KS", "QH", "th", "9c", "tS", "ZZ", "1S", " AH"]


def _weighted(*strategies: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """One of ``strategies``, each as likely (list one twice to double its weight)."""
    return st.integers(0, len(strategies) - 1).flatmap(lambda i: strategies[i])


def _field(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A body field: a valid value half the time, else any JSON scalar or container."""
    return _weighted(valid, valid, JSON_SCALARS, CONTAINERS)


def _body(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """A JSON body with any of ``fields`` (fuzzed by :func:`_field`) and maybe an
    unknown one; or, now and then, any JSON value at all."""
    some = st.fixed_dictionaries(
        {}, optional={name: _field(valid) for name, valid in {**fields, "extra": JSON}.items()}
    )
    return _weighted(some, some, some, JSON)


def _card(hand: list[str]) -> st.SearchStrategy[Any]:
    return _field(st.sampled_from(hand + CARD_CODES) | st.text(max_size=4))


def _cards(hand: list[str], size: int) -> st.SearchStrategy[Any]:
    return st.lists(_card(hand), max_size=size)


NAMES = st.sampled_from(["ann", "bob", "x" * 40, "a\u202eb", "e\u0301", " z"]) | st.text(
    max_size=42
)
INTEGERS = st.integers(-3, 100_000) | st.sampled_from([2.5, 2.0, "2", True])
PLAYER = _body({"name": NAMES, "bot": st.sampled_from(["basic", "random", None, "god"])})
OPTIONS = st.dictionaries(
    st.sampled_from(["aces", "all_wild_melds", "max_turns_per_round", "x"]), JSON, max_size=3
)


def fuzzed_bodies(hand: list[str]) -> dict[str, st.SearchStrategy[Any]]:
    """Bodies with every field of each endpoint fuzzed (nested ones too)."""
    return {
        "moves": _weighted(
            plausible_bodies(hand)["moves"],
            _body(
                {
                    "type": st.sampled_from(["draw", "discard", "go_out"]),
                    "source": st.sampled_from(["stock", "discard"]),
                    "card": _card(hand),
                    "discard": _card(hand),
                    "melds": st.lists(_field(_cards(hand, 4)), max_size=3),
                }
            ),
            _body(
                {
                    "type": st.just("go_out"),
                    "discard": _card(hand),
                    "melds": st.lists(_field(_cards(hand, 4)), max_size=3),
                }
            ),
        ),
        "create": _body(
            {
                "players": st.lists(PLAYER, max_size=4),
                "seats": INTEGERS,
                "ruleset": st.sampled_from(["classic", "nope"]),
                "options": OPTIONS,
                "seed": st.text(max_size=10),
                "turn_timeout_seconds": INTEGERS,
                "autopilot_after_missed_turns": INTEGERS,
            }
        ),
        "join": _body({"name": NAMES}),
        "evaluate": _body(
            {
                "cards": _cards(hand, 8),
                "wild_rank": st.sampled_from(["7", "t", "10", "7\n", "Z"]),
                "round": INTEGERS,
                "options": OPTIONS,
                "ruleset": st.sampled_from(["classic", "nope"]),
                "table": st.lists(_field(_cards(hand, 4)), max_size=2),
            }
        ),
    }


def plausible_bodies(hand: list[str]) -> dict[str, st.SearchStrategy[Any]]:
    """Bodies a client would send, so that fuzzed headers meet every check."""
    return {
        "moves": st.sampled_from(
            [{"type": "draw", "source": "stock"}, {"type": "draw", "source": "discard"}]
            + [{"type": "discard", "card": c} for c in hand]
            + [{"type": "go_out", "discard": hand[0]}]
        ),
        "create": st.just({"players": [{"name": "a"}, {"name": "b"}]}),
        "join": st.just({"name": "c"}),
        "evaluate": st.just({"cards": hand, "wild_rank": "7"}),
    }


def _tags(version: int) -> st.SearchStrategy[str]:
    tag = st.sampled_from(
        [f'"{version}"', f'W/"{version}"', '"1"', '""', "*", '"２"', "W/", '"', ","]
    )
    return tag | st.lists(tag, min_size=1, max_size=3).map(", ".join) | WIRE


NUMBERS = st.sampled_from(["0", "1", "0.5", "30", "31", "-1", "１", "1_0", "nan", "1e1"]) | WIRE


class Fuzzer:
    """The apps (one per path), the games they play on, and what Redis held last."""

    def __init__(self, redis_client: Any, redis_url: str) -> None:
        settings_env = {
            "MAX_BODY_BYTES": str(MAX_BODY),
            "LONG_POLL_MAX_SECONDS": "0",  # a valid wait is read, then not waited
            "CORS_ORIGINS": ORIGIN,
            "RATE_LIMITS": "true",  # the limiter reads Authorization and the client too
            "RATE_LIMIT_CREATE": "100000/minute",
            "RATE_LIMIT_JOIN": "100000/minute",
            "RATE_LIMIT_MOVES": "100000/minute",
        }
        self.apps = {
            lane: make_app(redis_url, FAST_LANE=lane, **settings_env) for lane in ("true", "false")
        }
        client = self.apps["true"].test_client()
        self.playing = create_game(client, [{"name": "a"}, {"name": "b"}], seed="fuzz")
        self.waiting = create_game(client, [{"name": "a"}], seats=3, seed="fuzz-open")
        self.turn = self.playing.public()["round"]["turn"]
        self.hand = self.playing.view(self.turn)["hand"]
        self.redis = redis_client
        self.requests = 0
        self.statuses: dict[int, int] = {}
        self.before = self.state()

    def state(self) -> Any:
        keys = sorted(self.redis.scan_iter(match="t13:*"))
        return keys, [snapshot(self.redis, g.id) for g in (self.playing, self.waiting)]

    def tokens(self) -> list[str]:
        return [*self.playing.tokens.values(), *self.waiting.tokens.values()]


def _request(
    fuzzer: Fuzzer, data: st.DataObject, bodies: dict[str, Any], fuzzed_headers: str
) -> tuple[str, str, dict[str, Any], bytes]:
    """(method, path, headers to send, body) drawn for one endpoint, with bodies
    from ``bodies``; headers as a client sends them, or fuzzed: ``"all"`` of them
    (each one sometimes), or ``"conditional"``: If-Match and If-None-Match always."""
    fuzz_headers = fuzzed_headers == "all"
    game = data.draw(
        st.sampled_from([fuzzer.playing.id] * 4 + [fuzzer.waiting.id, "nope", "x" * 64]),
        label="game",
    )
    endpoint = data.draw(
        st.sampled_from(
            [
                "create",
                "join",
                "public",
                "view",
                "moves",
                "moves",
                "moves",
                "events",
                "evaluate",
                "rulesets",
            ]
        ),
        label="endpoint",
    )
    method, path, body_strategy = {
        "create": ("POST", "/v1/games", bodies["create"]),
        "join": ("POST", f"/v1/games/{game}/players", bodies["join"]),
        "public": ("GET", f"/v1/games/{game}", None),
        "view": ("GET", f"/v1/games/{game}/view", None),
        "moves": ("POST", f"/v1/games/{game}/moves", bodies["moves"]),
        "events": ("GET", f"/v1/games/{game}/events", None),
        "evaluate": ("POST", "/v1/hands/evaluate", bodies["evaluate"]),
        "rulesets": ("GET", "/v1/rulesets", None),
    }[endpoint]
    body = b""
    if body_strategy is not None:
        kinds = ["json", "json", "json", "bytes", "padded"] if fuzz_headers else ["json"]
        kind = data.draw(st.sampled_from(kinds), label="body")
        if kind == "bytes":
            body = data.draw(st.binary(max_size=80))
        else:
            body = orjson.dumps(data.draw(body_strategy, label="json"))
            if kind == "padded":
                body += b" " * data.draw(
                    st.sampled_from([9, MAX_BODY - 40, MAX_BODY + 1, 2 * MAX_BODY])
                )
    elif fuzz_headers and data.draw(st.booleans(), label="a GET with a body"):
        body = data.draw(st.binary(max_size=20))
    if endpoint == "events":
        query = data.draw(
            st.dictionaries(st.sampled_from(["after", "wait", "x"]), NUMBERS, max_size=2)
        )
        path += "?" + "&".join(f"{k}={v}" for k, v in query.items())
    version = data.draw(st.integers(1, 4), label="version in tags")
    tokens = fuzzer.tokens()
    # each header: mostly what a well-behaved client sends (so that requests reach
    # past the first check), else anything
    sane: dict[str, str | None] = {
        "Authorization": f"Bearer {fuzzer.playing.tokens[fuzzer.turn]}",
        "Content-Type": "application/json" if body else None,
        "If-Match": f'"{version}"',  # the version the client saw, maybe stale by now
    }
    fuzzed = {
        "Authorization": st.sampled_from(
            [f"Bearer {t}" for t in tokens] + [f"bearer  {tokens[0]} "]
        )
        | st.builds(lambda scheme, rest: scheme + rest, st.sampled_from(["Bearer ", ""]), WIRE),
        "If-Match": _tags(version),
        "If-None-Match": _tags(version),
        "Idempotency-Key": WIRE | st.text("k", min_size=250, max_size=260),
        "Content-Type": st.sampled_from(
            [
                "application/json",
                "application/json; charset=utf-8",
                "text/plain",
                "application/x-www-form-urlencoded",
                "application/merge-patch+json",
                "multipart/form-data; boundary=b",
                "application/json; charset=latin-1",
            ]
        )
        | WIRE,  # fmt: skip
        "Content-Length": st.sampled_from(
            [str(len(body)), "0", "-1", "²", "１", " 5", "99999999999999999999"]
        )
        | st.integers(0, 10 * MAX_BODY).map(str)
        | WIRE,
        "Transfer-Encoding": st.sampled_from(["chunked", "gzip, chunked"]) | WIRE,
        "X-Request-ID": WIRE | st.text("r", min_size=120, max_size=140),
        "Origin": st.sampled_from([ORIGIN, "null", "https://evil.example"]) | WIRE,
        "Accept": st.sampled_from(["application/json", "*/*", "text/html", "application/xml;q=0"])
        | WIRE,
    }
    headers: dict[str, str | None] = {}
    for name, strategy in fuzzed.items():
        hows = ["sane"]
        if fuzz_headers:
            hows = ["sane", "sane", "absent", "fuzzed"]
        elif fuzzed_headers == "conditional" and name in ("If-Match", "If-None-Match"):
            hows = ["fuzzed"]
        how = data.draw(st.sampled_from(hows), label=name)
        if how == "fuzzed":
            headers[name] = data.draw(strategy, label=name)
        else:
            headers[name] = sane.get(name) if how == "sane" else None
    return method, path, {k: v for k, v in headers.items() if v is not None}, body


def _send(app: Any, method: str, path: str, headers: dict[str, str], body: bytes) -> Any:
    special = {k: headers.pop(k, None) for k in ("Content-Type", "Content-Length")}
    chunked = headers.get("Transfer-Encoding")
    environ = EnvironBuilder(
        path=path.split("?")[0],
        query_string=path.partition("?")[2],
        method=method,
        headers=headers,
        data=body,
    ).get_environ()
    for key, value in (
        ("CONTENT_TYPE", special["Content-Type"]),
        ("CONTENT_LENGTH", special["Content-Length"]),
    ):
        environ.pop(key, None)
        if value is not None:
            environ[key] = value
    if chunked is not None:
        environ["wsgi.input_terminated"] = True
    elif "CONTENT_LENGTH" not in environ and body:
        environ["CONTENT_LENGTH"] = str(len(body))  # no length and not chunked: a client's own
    app_iter, status, response_headers = run_wsgi_app(app, environ, buffered=True)
    return int(status.split(" ", 1)[0]), response_headers, b"".join(app_iter)


MODES = {
    # every field of every body fuzzed, sent as a client would
    "bodies": (fuzzed_bodies, "none", {200, 412, 422}),
    # every header fuzzed, on bodies a client would send
    "headers": (plausible_bodies, "all", {200, 400, 401, 413, 415}),
    # the conditional headers, which only count on requests that pass every other check
    "conditional": (plausible_bodies, "conditional", {200, 412}),
    # everything at once
    "both": (fuzzed_bodies, "all", {200, 401, 415, 422}),
}


@pytest.mark.parametrize("mode", list(MODES))
def test_fuzzed_requests_never_5xx_and_refused_ones_change_nothing(redis_client, redis_url, mode):
    fuzzer = Fuzzer(redis_client, redis_url)
    make_bodies, fuzzed_headers, reached = MODES[mode]
    bodies = make_bodies(fuzzer.hand)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data())
    def one_request(data: st.DataObject) -> None:
        lane = data.draw(st.sampled_from(["true", "false"]), label="fast lane")
        method, path, headers, body = _request(fuzzer, data, bodies, fuzzed_headers)
        status, response_headers, content = _send(
            fuzzer.apps[lane], method, path, dict(headers), body
        )
        fuzzer.requests += 1
        fuzzer.statuses[status] = fuzzer.statuses.get(status, 0) + 1
        assert status < 500, (status, content[:300])
        if len(body) > MAX_BODY:  # however it was sent (with a length, chunked...)
            assert status >= 400, (status, method, path, headers)
        if status >= 400:
            assert response_headers.get("Content-Type") == PROBLEM, response_headers
            problem = orjson.loads(content)
            assert problem["status"] == status and problem["code"] in CODES, problem
            assert problem["title"] and isinstance(problem["detail"], str), problem
            assert fuzzer.state() == fuzzer.before, (method, path, headers, body[:200], problem)
        elif method == "POST":
            fuzzer.before = fuzzer.state()  # a change was made: it is the new baseline
        if status == 304:
            assert content == b""

    one_request()
    print(f"\nfuzz: {fuzzer.requests} requests, statuses {sorted(fuzzer.statuses.items())}")
    # the fuzzing reached past the parsers: refusals of many kinds, and some successes
    assert fuzzer.requests >= EXAMPLES
    assert reached <= set(fuzzer.statuses) and len(fuzzer.statuses) >= 5, fuzzer.statuses
