"""The fast lane reads a request for events exactly as Flask does.

``GET /v1/games/{id}/events`` is parsed on two paths: by the Flask view's
decorators (webargs and the events' schemas) and by the fast lane's handler
(``service.api.following.fast``).  Generated requests -- valid and invalid
queries (``after``, ``wait``, ``ticket``, repeated, unknown, malformed, out of
range), ``Accept`` and ``Last-Event-ID`` headers, tokens and tickets -- are sent
to the app with the lane on and with it off, on the same game: the answers must
agree in status, headers and body (for a stream, its first chunk: the events it
starts with), so the same values are read and the same 4xx problems answered.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api.conftest import create_game, make_app

PRINTABLE = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12)

NUMBERS = st.one_of(
    st.integers(0, 12).map(str),
    st.sampled_from(["9007199254740992", "9007199254740993", "0.5", "30", "30.0", "31", "1e3"]),
    st.sampled_from(["-1", "+1", " 1", "1_0", "nan", "inf", "１", "٣", "0x1", "", "1.", ".5"]),
    PRINTABLE,
)

NAMES = st.sampled_from(["after", "wait", "ticket", "Wait", "seat", "after[]", ""])


def answer(app: Flask, path: str, headers: dict[str, str]) -> tuple[Any, ...]:
    """What a client sees of the answer; of a stream, its first chunk."""
    response = app.test_client().get(path, headers=headers)
    try:
        if response.mimetype in ("text/event-stream", "application/x-ndjson"):
            body = next(iter(response.response))
        else:
            body = response.get_data()
    finally:
        response.close()
    kept = sorted((k, v) for k, v in response.headers.items() if k != "X-Request-ID")
    return response.status_code, kept, body


def test_the_fast_lane_parses_events_requests_as_flask_does(redis_client, redis_url):
    # no long poll waits: each request is answered at once, on either path
    apps = {
        lane: make_app(redis_url, FAST_LANE=lane, LONG_POLL_MAX_SECONDS="0")
        for lane in ("true", "false")
    }
    client = apps["false"].test_client()
    game = create_game(client, [{"name": "a"}, {"name": "b"}], seed="parsing")
    ticket = client.post(f"/v1/games/{game.id}/stream-tickets", headers=game.auth(0))
    assert ticket.status_code == 201
    tickets = st.sampled_from([ticket.get_json()["ticket"], "A" * 16, "short", "x" * 129])
    valid = st.fixed_dictionaries(
        {},
        optional={
            "after": st.integers(0, 12).map(str),
            "wait": st.sampled_from(["0", "0.5", "30", "29.9999"]),
            "ticket": tickets,
        },
    ).map(lambda parts: "&".join(f"{name}={value}" for name, value in parts.items()))
    mixed = st.lists(
        st.one_of(
            st.tuples(NAMES, NUMBERS).map(lambda nv: f"{quote(nv[0])}={quote(nv[1])}"),
            tickets.map(lambda t: f"ticket={t}"),
            NAMES,  # a name without a value
        ),
        max_size=4,
    ).map("&".join)
    queries = st.one_of(valid, valid, mixed)
    accepts = st.sampled_from(
        [
            "*/*",
            "application/json",
            "text/event-stream",
            "application/x-ndjson",
            "text/html",
            "text/event-stream, application/json;q=0.5",
            "application/*",
            "application/json;q=0, text/event-stream",
            "",
        ]
    )
    tokens = st.sampled_from(["Bearer " + game.tokens[0], "Bearer " + game.tokens[1], "Bearer no"])
    seen: set[int] = set()

    @settings(
        max_examples=250,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        query=queries,
        accept=st.none() | accepts,
        last_event_id=st.none() | st.integers(0, 12).map(str) | NUMBERS,
        authorization=st.none() | tokens,
    )
    def same_answer(
        query: str, accept: str | None, last_event_id: str | None, authorization: str | None
    ) -> None:
        headers = {
            name: value
            for name, value in (
                ("Accept", accept),
                ("Last-Event-ID", last_event_id),
                ("Authorization", authorization),
            )
            if value is not None
        }
        path = f"/v1/games/{game.id}/events" + (f"?{query}" if query else "")
        fast, flask = (answer(apps[lane], path, headers) for lane in ("true", "false"))
        assert fast == flask, (path, headers)
        seen.add(fast[0])

    same_answer()
    # the generated requests were answered both ways: pages, streams and refusals
    assert {200, 401, 406, 422} <= seen, seen
