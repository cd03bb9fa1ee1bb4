"""Config parsing, the ENV_VARS table, and the gunicorn settings built from them."""

from __future__ import annotations

import dataclasses
import json
import re
import runpy
from pathlib import Path

import pytest

from service.config import Config
from service.env_vars import ENV_VARS, env_table_markdown
from service.logs import access_line, timestamp

GUNICORN_CONF = Path(__file__).resolve().parents[2] / "deploy" / "gunicorn.conf.py"


def test_defaults() -> None:
    cfg = Config.from_env({})
    assert cfg.redis_url is None and cfg.embedded_store
    assert not cfg.redis_cluster and not cfg.allow_seeded_games
    assert (cfg.game_ttl_seconds, cfg.idempotency_ttl_seconds) == (7 * 86400, 86400)
    assert (cfg.long_poll_max_seconds, cfg.max_body_bytes, cfg.log_level) == (30, 65536, "INFO")
    assert cfg.rate_limits_enabled
    assert (cfg.rate_limit_create, cfg.rate_limit_join, cfg.rate_limit_moves) == (
        "30/minute",
        "60/minute",
        "600/minute",
    )
    assert cfg.cors_origins == ()
    assert (cfg.host, cfg.port, cfg.gunicorn_worker_connections, cfg.gunicorn_timeout) == (
        "127.0.0.1",
        8000,
        5000,
        60,
    )
    assert cfg.body_timeout_seconds == 10
    assert (cfg.stream_ticket_seconds, cfg.sse_heartbeat_seconds) == (120, 15)
    assert 1 <= cfg.web_concurrency <= 4


def test_values_are_parsed() -> None:
    cfg = Config.from_env(
        {
            "REDIS_URL": "redis://10.0.0.1:6380/2",
            "REDIS_CLUSTER": "yes",
            "ALLOW_SEEDED_GAMES": "1",
            "RATE_LIMITS": "off",
            "RATE_LIMIT_MOVES": "10 per second;100/minute",
            "CORS_ORIGINS": "https://a.example, https://b.example,",
            "LOG_LEVEL": "debug",
            "WEB_CONCURRENCY": "7",
            "PORT": " 9000 ",
            "HOST": "",  # blank means default
            "SOLVER": "Python",
        }
    )
    assert cfg.redis_url == "redis://10.0.0.1:6380/2" and cfg.redis_cluster
    assert cfg.allow_seeded_games and not cfg.rate_limits_enabled
    assert cfg.rate_limit_moves == "10 per second;100/minute"
    assert cfg.cors_origins == ("https://a.example", "https://b.example")
    assert (cfg.log_level, cfg.web_concurrency) == ("DEBUG", 7)
    assert (cfg.port, cfg.host) == (9000, "127.0.0.1")
    assert not cfg.embedded_store
    assert cfg.solver == "PYTHON"


@pytest.mark.parametrize(
    "name, value",
    [
        ("PORT", "http"),
        ("PORT", "70000"),
        ("GAME_TTL_SECONDS", "-1"),
        ("REDIS_CLUSTER", "maybe"),
        ("REDIS_URL", "localhost:6379"),
        ("LOG_LEVEL", "LOUD"),
        ("SOLVER", "rust"),
        ("RATE_LIMIT_CREATE", "30"),
        ("WEB_CONCURRENCY", "0"),
        ("LONG_POLL_MAX_SECONDS", "1e3"),
        ("REDIS_TIMEOUT_SECONDS", "soon"),
        ("REDIS_TIMEOUT_SECONDS", "0"),
        ("REDIS_TIMEOUT_SECONDS", "nan"),
        ("GUNICORN_WORKER_CONNECTIONS", "0"),
        ("BODY_TIMEOUT_SECONDS", "0"),
        ("STREAM_TICKET_SECONDS", "29"),  # under two heartbeats (15 s): an open stream's
        # ticket would lapse before the stream renews it
    ],
)
def test_bad_values_name_the_variable(name: str, value: str) -> None:
    with pytest.raises(ValueError, match=f"^{name}: "):
        Config.from_env({name: value})


def test_redis_timeout_takes_fractions_of_a_second() -> None:
    assert Config.from_env({}).redis_timeout_seconds == 2.0
    assert Config.from_env({"REDIS_TIMEOUT_SECONDS": "0.5"}).redis_timeout_seconds == 0.5


def test_cluster_needs_a_url() -> None:
    with pytest.raises(ValueError, match="^REDIS_CLUSTER: "):
        Config.from_env({"REDIS_CLUSTER": "true"})


def test_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Config.from_env({}).port = 1  # type: ignore[misc]


def test_env_table_covers_every_setting() -> None:
    names = [var.name for var in ENV_VARS]
    assert len(names) == len(set(names))
    fields = {field.name for field in dataclasses.fields(Config)}
    renamed = {"rate_limits_enabled": "RATE_LIMITS"}
    assert {renamed.get(field, field.upper()) for field in fields} == set(names)
    table = env_table_markdown()
    assert all(f"`{name}`" in table for name in names)


def _gunicorn_settings(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict[str, object]:
    for var in ENV_VARS:
        monkeypatch.delenv(var.name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(GUNICORN_CONF))


def test_gunicorn_conf_uses_one_worker_without_redis(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _gunicorn_settings(monkeypatch, WEB_CONCURRENCY="3", PORT="8123")
    assert settings["workers"] == 1
    assert settings["max_requests"] == 0  # recycling the worker would lose the games
    assert settings["bind"] == "127.0.0.1:8123"
    assert settings["worker_class"] == "service.serving.Worker"


def test_gunicorn_conf_with_redis(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _gunicorn_settings(
        monkeypatch,
        REDIS_URL="redis://127.0.0.1:1/0",
        WEB_CONCURRENCY="3",
        GUNICORN_WORKER_CONNECTIONS="400",
        GUNICORN_TIMEOUT="90",
        HOST="0.0.0.0",
    )
    assert (settings["workers"], settings["worker_connections"], settings["timeout"]) == (
        3,
        400,
        90,
    )
    # the app is imported by each worker, after gevent has patched the standard library;
    # workers are not recycled (that would end their event streams)
    assert settings["preload_app"] is False and settings["max_requests"] == 0
    assert settings["bind"] == "0.0.0.0:8000"
    assert settings["graceful_timeout"] > 30
    assert settings["logger_class"].__name__ == "JsonAccessLogger"  # type: ignore[attr-defined]


def test_access_log_line_is_typed_json_without_secrets() -> None:
    environ = {
        "REMOTE_ADDR": "203.0.113.9",
        "REQUEST_METHOD": "GET",
        "PATH_INFO": '/v1/games/"quoted"\\path\n',
        "QUERY_STRING": "after=3&ticket=SECRETsecret123456&x=1",
        "HTTP_USER_AGENT": "agent\twith\ttabs",
        "HTTP_AUTHORIZATION": "Bearer SECRETtoken",
    }
    headers = [("Content-Type", "application/json"), ("x-request-id", "abc")]
    text = access_line(environ, 200, None, headers, 1.2345, 1_800_000_000)
    assert "SECRET" not in text
    line = json.loads(text)
    assert line["path"] == '/v1/games/"quoted"\\path\n'
    assert line["user_agent"] == "agent\twith\ttabs"
    assert line["query"] == "after=3&ticket=<redacted>&x=1"
    assert (line["status"], line["bytes"], line["duration_ms"]) == (200, 0, 1234)
    assert (line["remote"], line["request_id"]) == ("203.0.113.9", "abc")
    assert line["time"] == timestamp(1_800_000_000)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", line["time"])
    assert isinstance(line["pid"], int)
    for query, logged in [
        ("ticket=abc", "ticket=<redacted>"),
        ("noticket=abc", "noticket=abc"),
        ("%74icket=abc&after=1", "%74icket=<redacted>&after=1"),  # the app reads it as ticket
        ("ticket=a&T%49CKET=b&t%69cket=c", "ticket=<redacted>&T%49CKET=b&t%69cket=<redacted>"),
    ]:
        environ["QUERY_STRING"] = query
        assert json.loads(access_line(environ, 200, 5, [], 0, 0))["query"] == logged


def test_gunicorn_master_keeps_the_metrics_directory_of_this_run_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    metrics_dir = tmp_path / "metrics"
    settings = _gunicorn_settings(
        monkeypatch, REDIS_URL="redis://127.0.0.1:1/0", PROMETHEUS_MULTIPROC_DIR=str(metrics_dir)
    )
    settings["_empty_metrics_dir"](metrics_dir)  # type: ignore[operator]
    assert metrics_dir.is_dir()
    names = ["counter_41.db", "histogram_41.db", "gauge_livesum_41.db", "gauge_livesum_42.db"]
    for name in names:
        (metrics_dir / name).write_bytes(b"x")

    class Worker:
        pid = 41

    settings["child_exit"](None, Worker())  # type: ignore[operator]
    # the dead worker's counts stay in the sums; it is no longer a live follower
    assert sorted(p.name for p in metrics_dir.iterdir()) == [
        "counter_41.db",
        "gauge_livesum_42.db",
        "histogram_41.db",
    ]
    settings["_empty_metrics_dir"](metrics_dir)  # type: ignore[operator]  # a new run
    assert list(metrics_dir.iterdir()) == []


def test_sentinel_and_durability_settings_are_parsed() -> None:
    cfg = Config.from_env(
        {
            "REDIS_URL": "rediss://user:pw@ignored:6380/2",
            "REDIS_SENTINELS": "10.0.0.5:26379, sentinel-b:26380",
            "REDIS_SENTINEL_MASTER": "games",
            "REDIS_WAIT_REPLICAS": "2",
            "REDIS_WAIT_AOF": "yes",
            "REDIS_WAIT_TIMEOUT_MS": "250",
        }
    )
    assert cfg.redis_sentinels == (("10.0.0.5", 26379), ("sentinel-b", 26380))
    assert cfg.redis_sentinel_master == "games"
    assert (cfg.redis_wait_replicas, cfg.redis_wait_aof, cfg.redis_wait_timeout_ms) == (
        2,
        True,
        250,
    )
    assert cfg.durable_writes
    assert not Config.from_env({"REDIS_URL": "redis://r:6379/0"}).durable_writes


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"REDIS_SENTINELS": "a:1", "REDIS_SENTINEL_MASTER": "m"}, "set REDIS_URL too"),
        (
            {"REDIS_URL": "unix:///tmp/r.sock", "REDIS_SENTINELS": "a:1"},
            "set REDIS_URL too",
        ),
        ({"REDIS_URL": "redis://r:1/0", "REDIS_SENTINELS": "a:1"}, "REDIS_SENTINEL_MASTER"),
        ({"REDIS_URL": "redis://r:1/0", "REDIS_SENTINEL_MASTER": "m"}, "REDIS_SENTINELS as"),
        ({"REDIS_URL": "redis://r:1/0", "REDIS_SENTINELS": "a"}, "host:port"),
        ({"REDIS_URL": "redis://r:1/0", "REDIS_SENTINELS": "a:0"}, "host:port"),
        (
            {
                "REDIS_URL": "redis://r:1/0",
                "REDIS_CLUSTER": "true",
                "REDIS_SENTINELS": "a:1",
                "REDIS_SENTINEL_MASTER": "m",
            },
            "not with REDIS_CLUSTER",
        ),
        ({"REDIS_WAIT_REPLICAS": "1"}, "need a Redis"),
        ({"REDIS_WAIT_AOF": "true"}, "need a Redis"),
        ({"REDIS_URL": "redis://r:1/0", "REDIS_WAIT_REPLICAS": "-1"}, "REDIS_WAIT_REPLICAS"),
        (
            {
                "REDIS_URL": "redis://r:1/0",
                "REDIS_WAIT_REPLICAS": "1",
                "REDIS_WAIT_TIMEOUT_MS": "0",
            },
            "REDIS_WAIT_TIMEOUT_MS",
        ),
        (
            {
                "REDIS_URL": "redis://r:1/0",
                "REDIS_WAIT_REPLICAS": "1",
                "REDIS_WAIT_TIMEOUT_MS": "1500",  # the budget is 2 s
            },
            "at most half of REDIS_TIMEOUT_SECONDS",
        ),
    ],
)
def test_bad_sentinel_and_durability_settings_are_refused(
    env: dict[str, str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Config.from_env(env)
