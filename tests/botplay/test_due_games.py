"""The due games in Redis (:mod:`service.store.due_games`): every write keeps its
game's entry in step with the turn deadline, a claim is a lease, a claim that wrote
nothing is given back, and an entry whose game is gone is dropped."""

from __future__ import annotations

import time
from collections.abc import Callable

import redis
from flask import Flask

from service.botplay.worker import BotWorker
from service.store.due_games import DueGames
from service.store.keys import DUE, outbox_key, slot_of
from tests.api.conftest import create_game, make_app, until


def test_each_write_keeps_the_due_time_in_step_with_the_deadline(
    app: Flask, redis_client: redis.Redis
) -> None:
    client = app.test_client()
    game = create_game(client, [{"name": "a"}, {"name": "b"}], turn_timeout_seconds=60)
    due = outbox_key(slot_of(game.id), DUE)
    deadline = game.public()["timer"]["deadline"]
    assert redis_client.zscore(due, game.id) == -(-deadline * 1000 // 1)  # rounded up
    untimed = create_game(client, [{"name": "a"}, {"name": "b"}])
    assert redis_client.zscore(outbox_key(slot_of(untimed.id), DUE), untimed.id) is None


def test_a_claim_is_a_lease_and_one_that_wrote_nothing_is_given_back(
    app: Flask, redis_client: redis.Redis
) -> None:
    store = app.extensions["t13"].store
    dues = DueGames(store.client)
    game = create_game(app.test_client(), [{"name": "a"}, {"name": "b"}], turn_timeout_seconds=60)
    slot = slot_of(game.id)
    now = int(time.time() * 1000)
    assert dues.claim(slot, now, 5000, 10)[0] == []  # not due yet
    deadline = redis_client.zscore(outbox_key(slot, DUE), game.id)
    assert deadline is not None
    later = now + 61_000  # as if the timer ran out: claimed until then + 5 s
    games, next_ms = dues.claim(slot, later, 5000, 10)
    assert games == [(game.id, int(deadline))] and next_ms == later + 5000
    assert dues.claim(slot, later + 1000, 5000, 10)[0] == []  # held by the claim
    # its lease ended: due when the lease did
    assert dues.claim(slot, later + 5000, 5000, 10)[0] == [(game.id, later + 5000)]
    restored = dues.release(game.id, later + 10_000, now)  # nothing written: back to 't'
    assert restored == redis_client.zscore(outbox_key(slot, DUE), game.id)
    assert restored is not None and restored > now


def test_a_due_entry_whose_game_is_gone_is_dropped(
    redis_client: redis.Redis, redis_url: str, bots_for: Callable[..., BotWorker]
) -> None:
    app = make_app(redis_url)
    due = outbox_key(slot_of("gone-game"), DUE)
    redis_client.zadd(due, {"gone-game": int(time.time() * 1000) - 1000})
    worker = bots_for(app, sweeps=True)
    until(lambda: redis_client.zscore(due, "gone-game") is None)
    assert worker.worked >= 1
