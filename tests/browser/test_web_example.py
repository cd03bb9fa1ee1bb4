"""examples/web/ in a real browser, from another origin: what a web integrator gets.

The page is served from one origin (a static server), the API from another
(gunicorn with ``deploy/gunicorn.conf.py`` and ``CORS_ORIGINS`` set to the page's
origin, on a throwaway redis-server), and Debian's Chromium, headless, plays
through the page as a user would: buttons clicked, the page's own fetch and
EventSource doing the requests.  What is checked comes from both ends: the page's
``window.record`` (the events its stream delivered, its requests sent again, its
304s, its tickets) and the server (the game's events, the access log's
preflights), and the browser's console must hold no CORS refusal.

- the lobby paged by its ``Link`` header; a listed game joined, its seat renamed
  (``PATCH``) and left (``DELETE``); a fetch carrying ``Last-Event-ID``;
- a whole game against a bot: the view with ``If-None-Match`` (304), a stale
  ``If-Match`` (412, nothing changed), a move sent again after 503 +
  ``Retry-After`` with its ``Idempotency-Key`` while Redis stalls, the ticketed
  ``EventSource`` resumed by the browser itself after the instance restarts (the
  events made while it was down delivered, nothing missed or repeated), and one
  preflight for all the game's moves (``Access-Control-Max-Age``);
- a rollback of the store (Redis started again from an older snapshot): the
  page's stream told with a reset, the events after the shared point forgotten,
  the view read again, the game played on with nothing missed or repeated.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from harness.gunicorn_server import GunicornServer
from harness.redis_server import INSTALL_HINT as REDIS_HINT
from harness.redis_server import RedisServer, redis_server_binary
from harness.static_server import StaticServer

WEB = Path(__file__).resolve().parents[2] / "examples" / "web"
CORS_WORDS = ("CORS", "Access-Control", "cross-origin")


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    if redis_server_binary() is None:
        pytest.skip(REDIS_HINT)
    with RedisServer() as server:
        yield server


@pytest.fixture(scope="module")
def site() -> Iterator[StaticServer]:
    with StaticServer(WEB) as server:
        yield server


@pytest.fixture(scope="module")
def api(
    browser: webdriver.Chrome, redis_server: RedisServer, site: StaticServer
) -> Iterator[GunicornServer]:
    """The API on its own origin, allowing the page's."""
    server = GunicornServer({"REDIS_URL": redis_server.url, "CORS_ORIGINS": site.url}, name="api")
    with server:
        yield server


class Page:
    """The example page in the browser, and what its console said."""

    def __init__(self, driver: webdriver.Chrome, site: StaticServer, api: GunicornServer) -> None:
        self.driver = driver
        self.console: list[dict[str, Any]] = []
        self.read_console()  # whatever an earlier page left
        self.console.clear()
        driver.get(f"{site.url}/index.html?api={api.url}")

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def record(self) -> dict[str, Any]:
        return dict(self.js("return window.record"))

    def click(self, element_id: str) -> None:
        self.driver.find_element(By.ID, element_id).click()

    def type(self, element_id: str, text: str) -> None:
        field = self.driver.find_element(By.ID, element_id)
        field.clear()
        field.send_keys(text)

    def until(self, condition: str, what: str, timeout: float = 60) -> Any:
        """Wait (polling) until the JavaScript expression ``condition`` is truthy."""
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.2).until(
                lambda driver: driver.execute_script(f"return ({condition})")
            )
        except TimeoutException:
            pytest.fail(
                f"{what}: not within {timeout} s\n{self.describe()}\n"
                f"console: {self.read_console()[-10:]}"
            )

    def describe(self) -> str:
        """What the page holds, in short: its game, what it waits for, what went wrong."""
        state = self.js(
            "return typeof game === 'object' && game ? {busy: game.busy, again: game.again,"
            " over: game.over, lastSeq: game.lastSeq, etag: game.etag, seat: game.seat,"
            " autoplay: document.getElementById('autoplay').checked,"
            " status: game.view?.status, round: game.view?.round, legal: game.view?.legal_moves,"
            " source: game.source?.readyState} : null"
        )
        record = self.record()
        brief = {
            "game": state,
            "inflight": record["inflight"],
            "errors": record["errors"][-5:],
            "retries": record["retries"][-5:],
            "resets": record["resets"],
            "moves": record["moves"][-3:],
            "events": record["events"][-3:],
            "counts": {k: record[k] for k in ("sources", "reconnects", "conflicts", "notModified")},
        }
        return json.dumps(brief)[:6000]

    def read_console(self) -> list[dict[str, Any]]:
        self.console += self.driver.get_log("browser")  # type: ignore[no-untyped-call]
        return self.console

    def cors_failures(self) -> list[str]:
        return [
            entry["message"]
            for entry in self.read_console()
            if any(word in entry["message"] for word in CORS_WORDS)
        ]


def access_log(api: GunicornServer) -> list[dict[str, Any]]:
    return [json.loads(line) for line in api.stdout().splitlines() if line.startswith("{")]


def server_events(api: GunicornServer, game_id: str, token: str | None = None) -> list[Any]:
    """Every event of the game that ``token``'s seat (or anyone, without one) sees,
    read from the instance ``api``."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    events: list[Any] = []
    after = 0
    while True:
        answer = requests.get(
            f"{api.url}/v1/games/{game_id}/events",
            params={"after": after, "wait": 0},
            headers=headers,
            timeout=30,
        )
        answer.raise_for_status()
        page = answer.json()
        if not page["events"]:
            return events
        events += page["events"]
        after = page["last_seq"]


def test_lobby_paged_by_link_and_a_listed_seat_joined_renamed_and_left(
    browser: webdriver.Chrome, api: GunicornServer, site: StaticServer
) -> None:
    for number in range(7):
        body: dict[str, Any] = {"players": [{"name": f"host {number}"}], "seats": 3, "listed": True}
        requests.post(f"{api.url}/v1/games", json=body, timeout=30).raise_for_status()
    listing = requests.get(f"{api.url}/v1/games?limit=100", timeout=30).json()["games"]
    newest_first = [game["id"] for game in listing]
    assert len(newest_first) == 7

    page = Page(browser, site, api)
    page.type("lobby-size", "3")
    page.click("lobby-list")
    page.until("window.record.lobbyPages.length === 1", "the lobby's first page")
    while browser.find_element(By.ID, "lobby-next").is_enabled():
        read = len(page.record()["lobbyPages"])
        page.click("lobby-next")
        page.until(f"window.record.lobbyPages.length === {read + 1}", "the lobby's next page")
    pages = page.record()["lobbyPages"]
    assert [len(ids) for ids in pages] == [3, 3, 1], pages
    assert [game_id for ids in pages for game_id in ids] == newest_first

    target = newest_first[0]  # on the first page
    page.click("lobby-list")
    page.until("window.record.lobbyPages.length === 4", "the lobby's first page again")
    browser.find_element(By.CSS_SELECTOR, f"button[data-join='{target}']").click()
    page.until("window.record.seat.length === 1", "a seat joined")
    page.type("rename-name", "Renamed")
    page.click("rename")
    page.until("window.record.seat.length === 2", "the seat renamed (PATCH)")
    page.click("leave")
    page.until("window.record.seat.length === 3", "the seat left (DELETE)")

    record = page.record()
    assert record["errors"] == []
    assert [step["action"] for step in record["seat"]] == ["joined", "renamed", "left"]
    seat = record["seat"][0]["seat"]
    assert seat == 1
    seen = [
        {key: event[key] for key in ("type", "seat", "name", "previous") if key in event}
        for event in server_events(api, target)
        if event["type"] in ("player_joined", "player_renamed", "player_left")
        and event["seat"] == seat
    ]
    assert seen == [
        {"type": "player_joined", "seat": seat, "name": "You"},
        {"type": "player_renamed", "seat": seat, "name": "Renamed", "previous": "You"},
        {"type": "player_left", "seat": seat, "name": "Renamed"},
    ]
    view = requests.get(f"{api.url}/v1/games/{target}", timeout=30).json()
    assert view["status"] == "waiting" and view["players"][seat]["name"] is None
    # Last-Event-ID from fetch, as a fetch-based SSE client resumes (EventSource's
    # own reconnect got through even when the preflight did not allow it).
    status = browser.execute_async_script(
        """const [url, done] = arguments;
        fetch(url, {headers: {"Last-Event-ID": "1"}})
          .then((answer) => done(answer.status), (error) => done(String(error)));""",
        f"{api.url}/v1/games/{target}/events?wait=0",
    )
    assert status == 200
    assert page.cors_failures() == []
    preflights = [e for e in access_log(api) if e["method"] == "OPTIONS"]
    assert preflights and all(e["status"] in (200, 204) for e in preflights), preflights


@pytest.mark.timeout(900)
def test_a_whole_game_against_a_bot_across_an_instance_restart(
    browser: webdriver.Chrome, api: GunicornServer, site: StaticServer, redis_server: RedisServer
) -> None:
    started = time.monotonic()
    page = Page(browser, site, api)
    page.click("new-game")
    idle_on_my_turn = "typeof game === 'object' && game?.view && !game.busy && myTurn(game.view)"
    page.until(idle_on_my_turn, "the game created, its view read, our turn")
    game_id, token = page.js("return [game.id, game.token]")

    # The seat view with If-None-Match: nothing changed, so 304.
    before = page.record()["notModified"]
    page.click("refresh")
    page.until(f"window.record.notModified > {before} && !game.busy", "a 304 to If-None-Match")

    # A move clicked on a view the game has moved past (as after another tab's move):
    # 412, nothing changes, and the page reads the view again.
    seq_before = server_events(api, game_id, token)[-1]["seq"]
    page.js('game.etag = `"${game.view.version - 1}"`')
    browser.find_element(By.CSS_SELECTOR, "#moves button").click()
    page.until(
        'window.record.conflicts === 1 && (game.etag ?? "").startsWith(`"${game.view.version}.`)',
        "a stale If-Match answered 412 and the view read again",
    )
    assert page.record()["moves"][-1]["status"] == 412
    assert server_events(api, game_id, token)[-1]["seq"] == seq_before

    # A move clicked while Redis stalls: answered 503 with Retry-After, sent again
    # with the same Idempotency-Key until it holds, made once.
    moves_before = len(page.record()["moves"])
    assert redis_server.pid is not None
    os.kill(redis_server.pid, signal.SIGSTOP)  # its sockets accept, nothing answers
    try:
        browser.find_element(By.CSS_SELECTOR, "#moves button").click()
        page.until(
            "window.record.retries.some((r) => r.status === 503 && r.path.endsWith('/moves'))",
            "a move answered 503 and sent again",
        )
    finally:
        os.kill(redis_server.pid, signal.SIGCONT)
    page.until(f"window.record.moves.length === {moves_before + 1}", "the stalled move made")
    stalled = page.record()["moves"][-1]
    assert stalled["status"] == 200, stalled
    page.until(idle_on_my_turn, "our turn again")

    # A few rounds' moves, then stop on our turn with every event seen.
    page.click("autoplay")
    page.until("window.record.moves.length >= 30", "30 moves played", timeout=180)
    page.click("autoplay")
    page.until(idle_on_my_turn, "autoplay stopped on our turn")
    last_seq = server_events(api, game_id, token)[-1]["seq"]
    page.until(f"game.lastSeq === {last_seq}", "the stream caught up")

    # The page's instance stops: the stream ends.  While it is down the game goes on
    # through another instance on the same Redis (this seat's turn, as from another
    # device, and the bot's reply).  Then it starts again, and the browser reconnects
    # by itself (same ticket, Last-Event-ID) and gets exactly what it missed.
    record = page.record()
    api.stop()
    page.until(f"window.record.reconnects > {record['reconnects']}", "the stream's end seen")
    with GunicornServer({"REDIS_URL": redis_server.url}, name="other") as other:
        auth = {"Authorization": f"Bearer {token}"}

        def on_our_turn() -> dict[str, Any]:
            """The seat's view once it is the seat's turn: the bot worker beside
            `other` plays the bot's in its own time."""
            ends = time.monotonic() + 60
            while True:
                view: dict[str, Any] = requests.get(
                    f"{other.url}/v1/games/{game_id}/view", headers=auth, timeout=30
                ).json()
                if view["legal_moves"]:
                    return view
                assert time.monotonic() < ends, f"our turn did not come: {view['round']}"
                time.sleep(0.05)

        for _ in range(2):  # draw and discard, or discard and (after the bot's turn) draw
            seat_view = on_our_turn()
            requests.post(
                f"{other.url}/v1/games/{game_id}/moves",
                json=seat_view["legal_moves"][0],
                headers={**auth, "If-Match": f'"{seat_view["version"]}"'},
                timeout=30,
            ).raise_for_status()
        on_our_turn()  # the bot's reply, if it owed one, is in: nothing more happens
        missed = server_events(other, game_id, token)[-1]["seq"]
    assert missed > last_seq
    api.start()
    page.until(f"game.lastSeq === {missed}", "the events missed while down, after reconnecting")
    # A player who thinks for longer than Chromium keeps a preflight answer without
    # Access-Control-Max-Age (5 s): with it, the next move needs no new preflight.
    page.until(
        "Date.now() - window.record.moves[window.record.moves.length - 1].at > 6000",
        "a pause of 6 s since the last move",
    )
    page.click("autoplay")
    page.until(
        f"window.record.moves.length >= {len(record['moves']) + 4} && game.lastSeq > {last_seq}",
        "moves and events after the restart",
        timeout=120,
    )

    page.until("window.record.finished !== null", "the game played to its end", timeout=600)
    record = page.record()
    assert record["errors"] == []
    assert record["sources"] == 1, "the browser's own reconnect must have resumed the stream"
    assert record["reconnects"] >= 1

    # Nothing missed or repeated: the page saw exactly what the server holds for its seat.
    seen = record["events"]
    seqs = [event["seq"] for event in seen]
    assert seqs == sorted(set(seqs))
    assert seen == server_events(api, game_id, token)
    view = requests.get(f"{api.url}/v1/games/{game_id}", timeout=30).json()
    assert view["status"] == "finished"
    assert record["finished"]["winners"] == view["winners"]

    # Every move was made once, conditional (If-Match) and with its own key.
    moves = record["moves"]
    assert [move["status"] for move in moves if move["status"] != 200] == [412], moves
    assert len({move["key"] for move in moves}) == len(moves)
    retried = {retry["key"] for retry in record["retries"] if retry["path"].endswith("/moves")}
    assert stalled["key"] in retried and retried <= {move["key"] for move in moves}

    # No CORS refusal; moves preflighted once, not once each (Access-Control-Max-Age).
    assert page.cors_failures() == []
    log = [e for e in access_log(api) if e["path"] == f"/v1/games/{game_id}/moves"]
    preflights = sum(e["method"] == "OPTIONS" for e in log)
    posts = sum(e["method"] == "POST" for e in log)
    print(
        f"\nbrowser game: {len(moves)} moves, {posts} POSTs, {preflights} OPTIONS on /moves, "
        f"{record['notModified']} views 304, {len(seen)} events, {record['reconnects']} "
        f"reconnects, stalled move replayed: {stalled['replayed']}, "
        f"{time.monotonic() - started:.1f} s"
    )
    assert posts >= len(moves)
    assert preflights == 1, f"{preflights} preflights for {posts} moves"
    views = [e for e in access_log(api) if e["path"] == f"/v1/games/{game_id}/view"]
    assert sum(e["method"] == "OPTIONS" for e in views) == 1, "views with If-None-Match"


@pytest.mark.timeout(600)
def test_the_page_recovers_from_a_rollback_of_the_store(
    browser: webdriver.Chrome, api: GunicornServer, site: StaticServer, redis_server: RedisServer
) -> None:
    """Redis comes back with less than it acknowledged (killed, started again from
    an older snapshot): the page's EventSource, reconnecting by itself with the
    id of an event the game no longer has, gets a reset, forgets the events after
    the shared point, reads the view again and plays on; what it keeps is the
    restored history, nothing missed or repeated."""
    page = Page(browser, site, api)
    page.click("new-game")
    idle_on_my_turn = "typeof game === 'object' && game?.view && !game.busy && myTurn(game.view)"
    page.until(idle_on_my_turn, "the game created, its view read, our turn")
    game_id, token = page.js("return [game.id, game.token]")

    def play(moves: int) -> int:
        """Autoplay ``moves`` more moves, stop on our turn with every event seen."""
        done = len(page.record()["moves"])
        page.click("autoplay")
        page.until(f"window.record.moves.length >= {done + moves}", f"{moves} moves played")
        page.click("autoplay")
        page.until(idle_on_my_turn, "autoplay stopped on our turn")
        last: int = server_events(api, game_id, token)[-1]["seq"]
        page.until(f"game.lastSeq === {last}", "the stream caught up")
        return last

    shared = play(4)
    snapshot = redis_server.snapshot()
    lost = play(6)
    assert lost > shared
    redis_server.roll_back(snapshot)
    page.until("window.record.resets.length === 1", "the reset after the rollback")
    record = page.record()
    assert record["resets"][0]["shared_seq"] == shared
    assert [e["seq"] for e in record["events"]] == [
        e["seq"] for e in server_events(api, game_id, token)
    ]
    page.until(idle_on_my_turn, "the view read again, our turn")
    after = play(6)
    for _more in range(10):  # other moves under the lost seqs, and beyond
        if after > lost:
            break
        after = play(6)
    assert after > lost

    record = page.record()
    seqs = [event["seq"] for event in record["events"]]
    assert seqs == sorted(set(seqs))
    assert record["events"] == server_events(api, game_id, token)
    assert len(record["resets"]) == 1
    assert page.cors_failures() == []
