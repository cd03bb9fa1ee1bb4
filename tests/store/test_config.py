"""Config parsing, the ENV_VARS table, and the gunicorn settings built from them."""

from __future__ import annotations

import dataclasses
import json
import runpy
from pathlib import Path

import pytest

from service.config import ENV_VARS, Config, env_table_markdown

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
        }
    )
    assert cfg.redis_url == "redis://10.0.0.1:6380/2" and cfg.redis_cluster
    assert cfg.allow_seeded_games and not cfg.rate_limits_enabled
    assert cfg.rate_limit_moves == "10 per second;100/minute"
    assert cfg.cors_origins == ("https://a.example", "https://b.example")
    assert (cfg.log_level, cfg.web_concurrency) == ("DEBUG", 7)
    assert (cfg.port, cfg.host) == (9000, "127.0.0.1")
    assert not cfg.embedded_store


@pytest.mark.parametrize(
    "name, value",
    [
        ("PORT", "http"),
        ("PORT", "70000"),
        ("GAME_TTL_SECONDS", "-1"),
        ("REDIS_CLUSTER", "maybe"),
        ("REDIS_URL", "localhost:6379"),
        ("LOG_LEVEL", "LOUD"),
        ("RATE_LIMIT_CREATE", "30"),
        ("WEB_CONCURRENCY", "0"),
        ("LONG_POLL_MAX_SECONDS", "1e3"),
        ("REDIS_TIMEOUT_SECONDS", "soon"),
        ("REDIS_TIMEOUT_SECONDS", "0"),
        ("REDIS_TIMEOUT_SECONDS", "nan"),
        ("GUNICORN_WORKER_CONNECTIONS", "0"),
        ("BODY_TIMEOUT_SECONDS", "0"),
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
    fmt = str(settings["access_log_format"])
    assert "authorization" not in fmt.lower()


def test_access_log_line_is_json_and_reads_only_its_atoms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = _gunicorn_settings(monkeypatch, REDIS_URL="redis://127.0.0.1:1/0")
    atoms_class = settings["_JsonAtoms"]
    fmt = str(settings["access_log_format"])

    class Unprintable:
        def __str__(self) -> str:
            raise AssertionError("an atom the format does not use was turned into a string")

    atoms = {
        "t": "[29/Nov/2026:10:00:00 +0000]",
        "h": "127.0.0.1",
        "m": "GET",
        "U": '/v1/games/"quoted"\\path\n',
        "q": "",
        "s": 200,
        "b": None,
        "M": 3,
        "a": "agent\twith\ttabs",
        "p": "<1234>",
        "{x-request-id}o": "abc",
        "{wsgi.input}e": Unprintable(),
    }
    line = json.loads(fmt % atoms_class(atoms))  # type: ignore[operator]
    assert line["path"] == '/v1/games/"quoted"\\path\n'
    assert line["user_agent"] == "agent\twith\ttabs"
    assert (line["status"], line["bytes"], line["request_id"]) == ("200", "-", "abc")


def test_access_log_hides_stream_tickets(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _gunicorn_settings(monkeypatch, REDIS_URL="redis://127.0.0.1:1/0")
    atoms = settings["_JsonAtoms"]({"q": "after=3&ticket=SECRETsecret123456&x=1"})  # type: ignore[operator]
    assert atoms["q"] == "after=3&ticket=<redacted>&x=1"
    assert settings["_JsonAtoms"]({"q": "ticket=abc"})["q"] == "ticket=<redacted>"  # type: ignore[operator]
    assert settings["_JsonAtoms"]({"q": "noticket=abc"})["q"] == "noticket=abc"  # type: ignore[operator]
