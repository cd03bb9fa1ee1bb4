"""``three-thirteen-admin apps create|list|rotate|revoke|add-key|remove-key|set-jwks|
remove-jwks|limits|matchmaking|webhook``: the apps of ``AUTH_MODE=apps``, managed by the operator
against the service's Redis.

Reads the same environment as the server (``REDIS_URL``, ``REDIS_CLUSTER``,
``REDIS_SENTINELS``...: docs/CONFIGURATION.md).  A secret key is printed once, when
made (``create``, ``rotate``); only its hash is stored.  ``--json`` prints one
JSON object, for scripts.  Exit status: 0 done, 1 refused (no such app...), 2 usage
or configuration error.

    three-thirteen-admin apps create "My game"
    three-thirteen-admin apps list
    three-thirteen-admin apps rotate <app id> --overlap 3600
    three-thirteen-admin apps revoke <app id>
    three-thirteen-admin apps add-key <app id> <kid> --alg EdDSA --public-key key.pem
    three-thirteen-admin apps remove-key <app id> <kid>
    three-thirteen-admin apps set-jwks <app id> https://example.com/.well-known/jwks.json
    three-thirteen-admin apps remove-jwks <app id>
    three-thirteen-admin apps limits <app id> --creates-per-minute 100 --concurrent-games 500
    three-thirteen-admin apps matchmaking <app id> --base 2 --widen-per-second 0.5 --max 20
    three-thirteen-admin apps matchmaking <app id> --bot-fill-seconds 60
    three-thirteen-admin apps webhook <app id> --url https://... [--events ...]
    three-thirteen-admin apps webhook <app id> --remove
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import jwt
import orjson

from service.config import Config
from service.hosting import app_webhooks, apps, jwks, jwt_keys
from service.store import StoreUnavailable, connect
from service.store.app_registry import AppRegistry

DEFAULT_OVERLAP_SECONDS = 86400
CHECK_TIMEOUT_SECONDS = 10
"""How long ``set-jwks`` waits for the JWKS it checks."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="three-thirteen-admin",
        description="Manage the apps of AUTH_MODE=apps (docs/AUTH.md).",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    groups = parser.add_subparsers(dest="group", required=True)
    app_commands = groups.add_parser("apps", help="apps and their secret keys").add_subparsers(
        dest="command", required=True
    )
    create = app_commands.add_parser("create", help="a new app and its secret key (shown once)")
    create.add_argument("name", help="the app's name (1 to 100 characters)")
    app_commands.add_parser("list", help="every app (no keys: they are not stored)")
    rotate = app_commands.add_parser(
        "rotate", help="a new secret key (shown once); the current ones expire after --overlap"
    )
    rotate.add_argument("app_id")
    rotate.add_argument(
        "--overlap",
        type=float,
        default=DEFAULT_OVERLAP_SECONDS,
        help=f"seconds the current keys stay valid (default {DEFAULT_OVERLAP_SECONDS}; 0: none)",
    )
    revoke = app_commands.add_parser(
        "revoke", help="refuse the app's keys, its players' tokens and its games from now on"
    )
    revoke.add_argument("app_id")
    add_key = app_commands.add_parser(
        "add-key", help="register a public key the app signs player JWTs with"
    )
    add_key.add_argument("app_id")
    add_key.add_argument("kid", help="the key's id, as the JWTs' header names it")
    add_key.add_argument("--alg", required=True, choices=jwt_keys.ALGORITHMS)
    add_key.add_argument(
        "--public-key", required=True, type=Path, help="a PEM file of the public key"
    )
    remove_key = app_commands.add_parser("remove-key", help="forget one of the app's JWT keys")
    remove_key.add_argument("app_id")
    remove_key.add_argument("kid")
    _add_limits_parser(app_commands)
    _add_matchmaking_parser(app_commands)
    set_jwks = app_commands.add_parser(
        "set-jwks", help="the URL of the JWKS the app publishes (fetched now, to check it)"
    )
    set_jwks.add_argument("app_id")
    set_jwks.add_argument("url", help="https:// (http:// only to 127.0.0.1 or localhost)")
    remove_jwks = app_commands.add_parser("remove-jwks", help="forget the app's JWKS URL")
    remove_jwks.add_argument("app_id")
    _add_webhook_parser(app_commands)
    return parser


def _limit_value(text: str) -> int | None:
    """A limit's value on the command line: a number (0: no limit) or ``default``."""
    if text == "default":
        return None
    if not text.isdigit():
        raise argparse.ArgumentTypeError("a number (0: no limit) or 'default'")
    return int(text)


def _add_limits_parser(app_commands: Any) -> None:
    limits = app_commands.add_parser(
        "limits",
        help="show or set the app's limits (each a number, 0: none, or 'default': the "
        "server's APP_<LIMIT>)",
    )
    limits.add_argument("app_id")
    for name in apps.LIMITS:
        limits.add_argument(
            "--" + name.replace("_", "-"), dest=name, type=_limit_value, default=argparse.SUPPRESS
        )


def _limits(registry: AppRegistry, args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """``apps limits``: set the limits named (none named: show them)."""
    changes = {name: getattr(args, name) for name in apps.LIMITS if hasattr(args, name)}
    app = (
        apps.set_limits(registry, args.app_id, changes)
        if changes
        else apps.load(registry, args.app_id)
    )
    shown = app.summary(time.time())["limits"]
    lines = [
        f"{name}: {'default' if most is None else (most or 'no limit')}"
        for name, most in shown.items()
    ]
    return {"id": app.id, "limits": shown}, [f"app {app.id} limits:", *lines]


MATCHMAKING_OPTIONS = {
    "base": "skill_base",
    "widen_per_second": "skill_widen_per_second",
    "max": "skill_max",
    "bot_fill_seconds": "bot_fill_seconds",
}
"""``apps matchmaking``'s options -> the settings they set (:data:`apps.MATCHMAKING`)."""


def _setting_value(text: str) -> float | None:
    """A matchmaking setting on the command line: a number (0 or more) or ``default``."""
    if text == "default":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a number (0 or more) or 'default'") from None
    if not 0 <= value <= apps.MATCHMAKING_MOST:
        raise argparse.ArgumentTypeError(f"from 0 to {apps.MATCHMAKING_MOST:.0f}")
    return value


def _add_matchmaking_parser(app_commands: Any) -> None:
    matchmaking = app_commands.add_parser(
        "matchmaking",
        help="show or set the skill window of the app's players' quick-joins and when bots "
        "fill their tables (each a number, or 'default': the server's QUICKJOIN_<SETTING>)",
    )
    matchmaking.add_argument("app_id")
    for option, name in MATCHMAKING_OPTIONS.items():
        matchmaking.add_argument(
            "--" + option.replace("_", "-"),
            dest=name,
            type=_setting_value,
            default=argparse.SUPPRESS,
        )


def _matchmaking(
    registry: AppRegistry, args: argparse.Namespace
) -> tuple[dict[str, Any], list[str]]:
    """``apps matchmaking``: set the settings named (none named: show them)."""
    changes = {name: getattr(args, name) for name in apps.MATCHMAKING if hasattr(args, name)}
    app = (
        apps.set_matchmaking(registry, args.app_id, changes)
        if changes
        else apps.load(registry, args.app_id)
    )
    shown = app.summary(time.time())["matchmaking"]
    lines = [f"{name}: {'default' if value is None else value}" for name, value in shown.items()]
    return {"id": app.id, "matchmaking": shown}, [f"app {app.id} matchmaking:", *lines]


def _add_webhook_parser(app_commands: Any) -> None:
    webhook = app_commands.add_parser(
        "webhook",
        help="tell the lifecycle of every game of the app to a URL (a new signing secret, "
        "shown once), or --remove",
    )
    webhook.add_argument("app_id")
    target = webhook.add_mutually_exclusive_group(required=True)
    target.add_argument("--url", help="where deliveries are POSTed (https)")
    target.add_argument("--remove", action="store_true", help="deliver nothing from now on")
    webhook.add_argument(
        "--events",
        nargs="+",
        choices=app_webhooks.EVENT_NAMES,
        default=[],
        metavar="EVENT",
        help="the events to deliver (default: every one): " + ", ".join(app_webhooks.EVENT_NAMES),
    )
    webhook.add_argument(
        "--turn-only-offline",
        action="store_true",
        help="tell a player's turn only when the player has no stream of the game open",
    )


def webhook_command(
    registry: AppRegistry, args: argparse.Namespace
) -> tuple[dict[str, Any], list[str]]:
    """``apps webhook``: set or remove the app's webhook (docs/WEBHOOKS.md)."""
    if args.remove:
        app = app_webhooks.remove_webhook(registry, args.app_id)
        return {"id": app.id, "webhook": None}, [f"app {app.id}: webhook removed"]
    config = Config.from_env()
    app, hook = app_webhooks.set_webhook(
        registry,
        args.app_id,
        args.url,
        args.events,
        args.turn_only_offline,
        allow_http=config.webhook_allow_http,
        allow_loopback=config.webhook_allow_loopback,
    )
    shown = hook.shown()
    return {"id": app.id, "webhook": {**shown, "secret": hook.secret}}, [
        f"app {app.id}: lifecycle of its games delivered to {hook.url}",
        f"events: {', '.join(hook.events)}; turns told: {hook.turn_only}",
        f"signing secret (shown once; keep it on your receiver): {hook.secret}",
    ]


def _when(at: float | None) -> str:
    return "-" if at is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def run(registry: AppRegistry, args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """Carry out ``args`` on ``registry``: ``(JSON answer, lines of text)``."""
    now = time.time()
    if args.command == "create":
        app, key = apps.create_app_record(registry, args.name)
        out = {"id": app.id, "name": app.name, "key": key}
        return out, [
            f"app {app.id} ({app.name}) created",
            f"secret key (shown once; keep it on your backend): {key}",
        ]
    if args.command == "list":
        found = [app.summary(now) for app in apps.list_apps(registry)]
        lines = [
            f"{a['id']}  {a['name']}  created {_when(a['created'])}  "
            + (f"revoked {_when(a['revoked'])}" if a["revoked"] else f"{len(a['keys'])} key(s)")
            + "".join(f"  {name}={most}" for name, most in a["limits"].items() if most is not None)
            for a in found
        ]
        return {"apps": found}, lines or ["no apps"]
    if args.command == "rotate":
        app, key = apps.rotate(registry, args.app_id, args.overlap)
        expiring = [k.expires for k in app.keys[:-1] if k.expires is not None]
        latest = max(expiring, default=None)
        rotated = {"id": app.id, "key": key, "previous_keys_expire": latest}
        until = _when(latest)
        return rotated, [
            f"app {app.id}: new secret key (shown once): {key}",
            f"the previous keys stay valid until {until}",
        ]
    if args.command == "add-key":
        try:
            pem = args.public_key.read_text()
            public = jwt_keys.check_key(args.kid, args.alg, pem)
        except (OSError, jwt_keys.JwtKeyError) as exc:
            raise apps.AppError(str(exc)) from None
        app = apps.set_jwt_key(registry, args.app_id, public.kid, public.to_dict())
        return {"id": app.id, "kid": public.kid, "alg": public.alg}, [
            f"app {app.id}: JWT key {public.kid!r} ({public.alg}) registered"
        ]
    if args.command == "limits":
        return _limits(registry, args)
    if args.command == "matchmaking":
        return _matchmaking(registry, args)
    if args.command == "webhook":
        return webhook_command(registry, args)
    if args.command == "remove-key":
        app = apps.set_jwt_key(registry, args.app_id, args.kid, None)
        return {"id": app.id, "kid": args.kid}, [f"app {app.id}: JWT key {args.kid!r} removed"]
    if args.command == "set-jwks":
        published = _check_jwks(args.url)
        app = apps.set_jwks_url(registry, args.app_id, args.url)
        listed = ", ".join(f"{k.kid} ({k.alg})" for k in published.values()) or "none"
        return {"id": app.id, "jwks_url": args.url, "kids": sorted(published)}, [
            f"app {app.id}: JWKS {args.url} registered; its keys now: {listed}"
        ]
    if args.command == "remove-jwks":
        app = apps.set_jwks_url(registry, args.app_id, None)
        return {"id": app.id, "jwks_url": None}, [f"app {app.id}: JWKS URL removed"]
    app = apps.revoke(registry, args.app_id)
    return {"id": app.id, "revoked": app.revoked}, [f"app {app.id} revoked"]


def _check_jwks(url: str) -> dict[str, jwt_keys.JwtKey]:
    """The keys the JWKS at ``url`` has now (AppError: not a JWKS URL, or not
    fetched); a JWKS with no usable key yet is taken (the app may publish it later)."""
    try:
        return jwks.keys_of(jwks.fetch_json(jwks.check_url(url), CHECK_TIMEOUT_SECONDS))
    except (jwks.JwksUrlError, jwt_keys.JwtKeyError) as exc:
        raise apps.AppError(str(exc)) from None
    except (jwt.PyJWTError, OSError, ValueError) as exc:  # not reached, not JSON
        raise apps.AppError(f"could not fetch {url}: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        config = Config.from_env()
    except ValueError as exc:
        print(f"three-thirteen-admin: {exc}", file=sys.stderr)
        return 2
    if config.embedded_store:
        print(
            "three-thirteen-admin: set REDIS_URL to the service's Redis "
            "(apps need a Redis the server shares)",
            file=sys.stderr,
        )
        return 2
    try:
        client = connect(config)
        try:
            answer, lines = run(AppRegistry(lambda: client), args)
        finally:
            client.close()
    except apps.AppError as exc:
        print(f"three-thirteen-admin: {exc}", file=sys.stderr)
        return 1
    except StoreUnavailable as exc:
        print(f"three-thirteen-admin: Redis unavailable: {exc}", file=sys.stderr)
        return 2
    if args.json:
        sys.stdout.write(orjson.dumps(answer).decode() + "\n")
    else:
        print("\n".join(lines))
    return 0
