"""An app's JWKS URL (``three-thirteen-admin apps set-jwks``): the service fetches the
app's keys from it (served here from 127.0.0.1), verifies its players' JWTs with
them, refuses an unknown kid or another algorithm than the key's, fetches the set
again for a new kid at most once per JWKS_REFETCH_SECONDS, and keeps the keys it
has when the URL fails."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa
from flask.testing import FlaskClient
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from service.admin.cli import main
from service.hosting import apps, jwks
from tests.api.conftest import make_app
from tests.apps.conftest import AppKey, bearer, two_player_game
from tests.apps.test_player_jwts import PRIVATE, pem, refused, signed, unsigned

TO_JWK = {"EdDSA": OKPAlgorithm, "ES256": ECAlgorithm, "RS256": RSAAlgorithm}


def jwk(alg: str, kid: str, private: Any = None, **extra: Any) -> dict[str, Any]:
    """The public JWK of ``private`` (default: the test key of ``alg``)."""
    public = (private or PRIVATE[alg]).public_key()
    found: dict[str, Any] = TO_JWK[alg].to_jwk(public, as_dict=True)
    return {**found, "kid": kid, "alg": alg, "use": "sig", **extra}


class JwksServer:
    """An HTTP server on 127.0.0.1 serving ``document`` as the JWKS, counting fetches."""

    def __init__(self) -> None:
        self.document: Any = {"keys": [jwk(alg, f"j-{alg}") for alg in PRIVATE]}
        self.fetches = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.fetches += 1
                body = json.dumps(server.document).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_port}/.well-known/jwks.json"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()
        self.stopped = False

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        self.http.shutdown()
        self.http.server_close()
        self.thread.join()


@pytest.fixture
def jwks_server() -> Iterator[JwksServer]:
    server = JwksServer()
    yield server
    server.stop()


@pytest.fixture
def jwks_app(redis_url, store, new_app, jwks_server, monkeypatch, capsys) -> AppKey:
    """An app whose JWKS URL the operator registered with the command."""
    monkeypatch.setenv("REDIS_URL", redis_url)
    made = new_app("cards")
    assert main(["apps", "set-jwks", made.id, jwks_server.url]) == 0
    assert "j-EdDSA (EdDSA), j-ES256 (ES256), j-RS256 (RS256)" in capsys.readouterr().out
    return made


def apps_client(redis_url: str, refetch: int) -> FlaskClient:
    return make_app(redis_url, AUTH_MODE="apps", JWKS_REFETCH_SECONDS=str(refetch)).test_client()


@pytest.mark.parametrize("alg", sorted(PRIVATE))
def test_a_jwt_signed_with_a_key_of_the_apps_jwks_acts_for_the_player(
    redis_url, jwks_app, jwks_server, alg
):
    client = apps_client(redis_url, 30)
    game_id = two_player_game(client, jwks_app)["id"]
    token = signed(jwks_app.id, alg, kid=f"j-{alg}", name="bob")
    view = client.get(f"/v1/games/{game_id}/view", headers=bearer(token))
    assert view.status_code == 200, view.get_json()
    assert view.get_json()["seat"] == 1
    fetched = jwks_server.fetches
    assert client.get(f"/v1/games/{game_id}/view", headers=bearer(token)).status_code == 200
    assert jwks_server.fetches == fetched  # the keys are kept (JWKS_CACHE_SECONDS)


def test_an_unknown_kid_is_refused_and_refetches_at_most_once_per_period(
    redis_url, jwks_app, jwks_server
):
    client = apps_client(redis_url, 3600)
    refused(client, jwks_app, signed(jwks_app.id, kid="j-nope"))
    assert jwks_server.fetches == 1 + 1  # the command's check, then this instance's
    for _ in range(5):
        refused(client, jwks_app, signed(jwks_app.id, kid="j-nope-either"))
    assert jwks_server.fetches == 2  # no fetch per made-up kid
    game_id = two_player_game(client, jwks_app)["id"]
    token = signed(jwks_app.id, kid="j-EdDSA")
    assert client.get(f"/v1/games/{game_id}/view", headers=bearer(token)).status_code == 200


def test_a_key_the_app_publishes_is_taken_for_its_new_kid(redis_url, jwks_app, jwks_server):
    client = apps_client(redis_url, 0)
    game_id = two_player_game(client, jwks_app)["id"]
    path = f"/v1/games/{game_id}/view"
    assert client.get(path, headers=bearer(signed(jwks_app.id, kid="j-EdDSA"))).status_code == 200
    following = ed25519.Ed25519PrivateKey.generate()
    jwks_server.document = {"keys": [jwk("EdDSA", "j-next", following)]}  # rotated
    now = int(time.time())
    claims = {"sub": "u2", "aud": f"t13:{jwks_app.id}", "iat": now, "exp": now + 600}
    token = jwt.encode(claims, following, algorithm="EdDSA", headers={"kid": "j-next"})
    assert client.get(path, headers=bearer(token)).status_code == 200
    refused(client, jwks_app, signed(jwks_app.id, kid="j-EdDSA"))  # gone from the set


def test_another_alg_than_the_keys_is_refused(redis_url, jwks_app):
    client = apps_client(redis_url, 30)
    refused(client, jwks_app, signed(jwks_app.id, "ES256", kid="j-EdDSA"))
    now = int(time.time())
    claims = {"sub": "u2", "aud": f"t13:{jwks_app.id}", "iat": now, "exp": now + 600}
    for alg in ("none", "HS256"):  # an HMAC keyed with the public key, or no signature
        header = {"alg": alg, "typ": "JWT", "kid": "j-RS256"}
        refused(client, jwks_app, unsigned(header, claims, pem("RS256").encode()))


def test_keys_of_a_jwks_are_used_only_with_their_own_algorithm():
    short_rsa = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    document = {
        "keys": [
            jwk("EdDSA", "ok"),
            {**jwk("EdDSA", "says-rs256"), "alg": "RS256"},  # not its key's algorithm
            jwk("ES256", "for-encryption", use="enc"),
            jwk("RS256", "short", short_rsa),
            {"kty": "oct", "kid": "secret", "k": "c2VjcmV0", "alg": "HS256"},
            {"kty": "RSA", "kid": "broken", "n": "AQAB"},
            {**jwk("ES256", "es"), "d": "c2VjcmV0"},  # a private key: not a public one
        ]
    }
    found = jwks.keys_of(document)
    assert {kid: key.alg for kid, key in found.items()} == {"ok": "EdDSA"}
    without_alg = {k: v for k, v in jwk("RS256", "r").items() if k != "alg"}
    assert jwks.keys_of({"keys": [without_alg]})["r"].alg == "RS256"  # from its key type
    with pytest.raises(ValueError):
        jwks.keys_of({"nokeys": []})


def test_keys_fetched_stay_in_use_when_the_url_fails(redis_url, jwks_app, jwks_server):
    client = apps_client(redis_url, 0)
    game_id = two_player_game(client, jwks_app)["id"]
    path = f"/v1/games/{game_id}/view"
    assert (
        client.get(path, headers=bearer(signed(jwks_app.id, "ES256", kid="j-ES256"))).status_code
        == 200
    )
    jwks_server.stop()  # down: a new kid cannot be fetched, the known ones still work
    refused(client, jwks_app, signed(jwks_app.id, kid="j-unknown"))
    assert (
        client.get(path, headers=bearer(signed(jwks_app.id, "ES256", kid="j-ES256"))).status_code
        == 200
    )


def test_an_app_whose_jwks_never_answered_refuses_its_jwts(redis_url, store, new_app):
    made = new_app("cards")
    apps.set_jwks_url(store.apps, made.id, "http://127.0.0.1:9/jwks.json")  # nothing there
    client = make_app(redis_url, AUTH_MODE="apps", JWKS_TIMEOUT_SECONDS="1").test_client()
    refused(client, made, signed(made.id, kid="j-EdDSA"))


def test_the_command_checks_the_url_and_removes_it(
    redis_url, store, new_app, jwks_server, monkeypatch, capsys
):
    monkeypatch.setenv("REDIS_URL", redis_url)
    made = new_app("cards")
    for url in ("http://example.com/jwks.json", "ftp://127.0.0.1/jwks", "jwks.json"):
        assert main(["apps", "set-jwks", made.id, url]) == 1
        assert "https://" in capsys.readouterr().err
    assert main(["apps", "set-jwks", made.id, "http://127.0.0.1:9/jwks.json"]) == 1
    assert "could not fetch" in capsys.readouterr().err
    assert apps.load(store.apps, made.id).jwks_url is None
    assert main(["--json", "apps", "set-jwks", made.id, jwks_server.url]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["kids"] == ["j-ES256", "j-EdDSA", "j-RS256"]
    assert apps.load(store.apps, made.id).summary(time.time())["jwks_url"] == jwks_server.url
    assert main(["apps", "remove-jwks", made.id]) == 0
    assert apps.load(store.apps, made.id).jwks_url is None
    assert main(["apps", "remove-jwks", made.id]) == 1
