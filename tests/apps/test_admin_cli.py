"""``three-thirteen-admin apps ...`` against the test Redis (its ``main``, in process)."""

from __future__ import annotations

import time

import orjson
import pytest

from service.admin.cli import main
from service.hosting import apps


@pytest.fixture
def admin(redis_client, redis_url, monkeypatch, capsys):
    monkeypatch.setenv("REDIS_URL", redis_url)

    def run(*args: str, status: int = 0) -> dict:
        assert main(["--json", *args]) == status
        out = capsys.readouterr().out
        return orjson.loads(out) if out else {}

    return run


def test_create_list_rotate_revoke(admin, store):
    made = admin("apps", "create", "My game")
    key = made["key"]
    assert key.startswith("t13_sk_" + made["id"] + "_") and len(key) >= 7 + 10 + 1 + 43
    record = apps.load(store.apps, made["id"])
    assert key not in record.to_bytes().decode()  # only its hash is stored
    assert record.accepts(key, time.time())
    listed = admin("apps", "list")["apps"]
    assert [(a["id"], a["name"], len(a["keys"])) for a in listed] == [(made["id"], "My game", 1)]
    rotated = admin("apps", "rotate", made["id"], "--overlap", "60")
    record = apps.load(store.apps, made["id"])
    now = time.time()
    assert record.accepts(key, now) and record.accepts(rotated["key"], now)
    assert not record.accepts(key, now + 61)  # the overlap over: the old key expired
    assert record.accepts(rotated["key"], now + 61)
    admin("apps", "revoke", made["id"])
    record = apps.load(store.apps, made["id"])
    assert not record.accepts(rotated["key"], time.time())
    assert admin("apps", "list")["apps"][0]["revoked"] is not None


def test_unknown_apps_and_bad_names_are_refused(redis_client, redis_url, monkeypatch, capsys):
    monkeypatch.setenv("REDIS_URL", redis_url)
    assert main(["apps", "rotate", "nosuchapp0"]) == 1
    assert "no app 'nosuchapp0'" in capsys.readouterr().err
    assert main(["apps", "create", " "]) == 1
    assert "name" in capsys.readouterr().err


def test_without_redis_url_it_says_so(monkeypatch, capsys):
    monkeypatch.delenv("REDIS_URL", raising=False)
    assert main(["apps", "list"]) == 2
    assert "REDIS_URL" in capsys.readouterr().err


def test_limits_set_shown_and_reset(admin, store, capsys):
    made = admin("apps", "create", "My game")
    shown = admin("apps", "limits", made["id"])["limits"]
    assert shown == dict.fromkeys(apps.LIMITS)  # all the server's defaults
    set_to = admin(
        "apps", "limits", made["id"], "--creates-per-minute", "100", "--concurrent-games", "0"
    )["limits"]
    assert (set_to["creates_per_minute"], set_to["concurrent_games"]) == (100, 0)
    assert apps.load(store.apps, made["id"]).limits == {
        "creates_per_minute": 100,
        "concurrent_games": 0,
    }
    assert admin("apps", "list")["apps"][0]["limits"] == set_to
    reset = admin("apps", "limits", made["id"], "--creates-per-minute", "default")["limits"]
    assert reset["creates_per_minute"] is None and reset["concurrent_games"] == 0
    with pytest.raises(SystemExit) as usage:  # argparse: a usage error, exit status 2
        main(["apps", "limits", made["id"], "--moves-per-minute", "-1"])
    assert usage.value.code == 2
    assert "no limit" in capsys.readouterr().err
    assert main(["apps", "limits", "nosuchapp0", "--moves-per-minute", "5"]) == 1
    assert main(["apps", "limits", made["id"]]) == 0
    assert "concurrent_games: no limit" in capsys.readouterr().out
    assert main(["apps", "list"]) == 0
    assert "key(s)  concurrent_games=0" in capsys.readouterr().out  # the limits set


def test_an_apps_webhook_set_listed_without_its_secret_and_removed(
    admin, store, monkeypatch, capsys
):
    made = admin("apps", "create", "My game")
    set_ = admin("apps", "webhook", made["id"], "--url", "https://hooks.example.com/t13")
    secret = set_["webhook"]["secret"]
    assert secret.startswith("whsec_") and set_["webhook"]["turn_only"] == "always"
    assert "turn" in set_["webhook"]["events"] and "game_aborted" in set_["webhook"]["events"]
    listed = admin("apps", "list")["apps"][0]
    assert listed["webhook"]["url"] == "https://hooks.example.com/t13"
    assert secret not in orjson.dumps(listed).decode()
    again = admin(
        "apps",
        "webhook",
        made["id"],
        "--url",
        "https://hooks.example.com/t13",
        "--events",
        "turn",
        "--turn-only-offline",
    )
    assert again["webhook"]["events"] == ["turn"] and again["webhook"]["secret"] != secret
    assert admin("apps", "webhook", made["id"], "--remove") == {"id": made["id"], "webhook": None}
    assert apps.load(store.apps, made["id"]).webhook is None
    assert main(["apps", "webhook", made["id"], "--remove"]) == 1
    assert "no webhook" in capsys.readouterr().err


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/t13",  # not https (WEBHOOK_ALLOW_HTTP off)
        "https://127.0.0.1/t13",  # loopback (WEBHOOK_ALLOW_LOOPBACK off)
        "https://10.1.2.3/t13",
        "https://user:pw@hooks.example.com/",
    ],
)
def test_an_apps_webhook_url_is_refused_as_a_games_is(admin, store, capsys, url):
    made = admin("apps", "create", "My game")
    assert main(["apps", "webhook", made["id"], "--url", url]) == 1
    assert "webhook URL refused" in capsys.readouterr().err
    assert apps.load(store.apps, made["id"]).webhook is None


def test_matchmaking_shows_sets_and_refuses_bad_values(admin, store, capsys):
    made = admin("apps", "create", "Cards")
    shown = admin("apps", "matchmaking", made["id"])["matchmaking"]
    assert shown == dict.fromkeys(apps.MATCHMAKING)
    set_ = admin(
        "apps", "matchmaking", made["id"], "--base", "2", "--widen-per-second", "0.5", "--max", "20"
    )
    assert set_["matchmaking"] == {
        "skill_base": 2.0,
        "skill_widen_per_second": 0.5,
        "skill_max": 20.0,
        "bot_fill_seconds": None,
    }
    assert apps.load(store.apps, made["id"]).matchmaking["skill_max"] == 20.0
    back = admin("apps", "matchmaking", made["id"], "--max", "default")["matchmaking"]
    assert back["skill_max"] is None and back["skill_base"] == 2.0
    for bad in ("-1", "fast", "nan", "1e9"):
        with pytest.raises(SystemExit) as refused:
            main(["apps", "matchmaking", made["id"], "--base", bad])
        assert refused.value.code == 2
        assert "--base" in capsys.readouterr().err
    assert apps.load(store.apps, made["id"]).matchmaking == {
        "skill_base": 2.0,
        "skill_widen_per_second": 0.5,
    }
    admin("apps", "matchmaking", "nosuchapp0", "--base", "1", status=1)
    filled = admin("apps", "matchmaking", made["id"], "--bot-fill-seconds", "60")
    assert filled["matchmaking"]["bot_fill_seconds"] == 60.0
