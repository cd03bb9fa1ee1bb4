"""Player JWTs signed by the app (EdDSA, ES256, RS256) against the keys registered
for it: accepted as the player's credential, and each way of getting one wrong
refused with a stable code, changing nothing."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from service.admin.cli import main
from service.hosting import apps, jwt_keys
from tests.apps.conftest import bearer, two_player_game

PRIVATE = {
    "EdDSA": ed25519.Ed25519PrivateKey.generate(),
    "ES256": ec.generate_private_key(ec.SECP256R1()),
    "RS256": rsa.generate_private_key(public_exponent=65537, key_size=2048),
}


def pem(alg: str) -> str:
    public = PRIVATE[alg].public_key()
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


@pytest.fixture
def app(store, new_app):
    made = new_app("cards")
    for alg in PRIVATE:
        key = jwt_keys.check_key(f"k-{alg}", alg, pem(alg))
        apps.set_jwt_key(store.apps, made.id, key.kid, key.to_dict())
    return made


def signed(app_id: str, alg: str = "EdDSA", kid: str | None = None, **claims: Any) -> str:
    now = int(time.time())
    body = {"sub": "u2", "aud": f"t13:{app_id}", "iat": now, "exp": now + 600, **claims}
    body = {k: v for k, v in body.items() if v is not None}
    return jwt.encode(body, PRIVATE[alg], algorithm=alg, headers={"kid": kid or f"k-{alg}"})


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(header: dict[str, Any], claims: dict[str, Any], key: bytes = b"") -> str:
    head = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
    if header["alg"] == "none":
        return head + "."
    return head + "." + b64(hmac.new(key, head.encode(), hashlib.sha256).digest())


@pytest.mark.parametrize("alg", sorted(PRIVATE))
def test_a_jwt_the_app_signs_acts_for_the_players_seats(apps_client, app, alg):
    game_id = two_player_game(apps_client, app)["id"]
    token = signed(app.id, alg, name="bob")
    view = apps_client.get(f"/v1/games/{game_id}/view", headers=bearer(token))
    assert view.status_code == 200, view.get_json()
    assert view.get_json()["seat"] == 1
    mine = apps_client.get("/v1/me/games", headers=bearer(token)).get_json()["games"]
    assert [(g["id"], g["seat"]) for g in mine] == [(game_id, 1)]


def refused(apps_client, app, token: str, code: str = "INVALID_CREDENTIAL") -> None:
    game_id = two_player_game(apps_client, app)["id"]
    before = apps_client.get(f"/v1/games/{game_id}", headers=app.auth).get_json()["version"]
    for method, path, body in (
        ("GET", f"/v1/games/{game_id}/view", None),
        ("POST", f"/v1/games/{game_id}/moves", {"type": "draw", "source": "stock"}),
        ("GET", "/v1/me/games", None),
    ):
        answer = apps_client.open(path, method=method, json=body, headers=bearer(token))
        assert answer.status_code == 401, answer.get_json()
        assert answer.get_json()["code"] == code
        assert token not in answer.get_data(as_text=True)
    after = apps_client.get(f"/v1/games/{game_id}", headers=app.auth).get_json()["version"]
    assert after == before


def test_alg_none_is_refused(apps_client, app):
    now = int(time.time())
    claims = {"sub": "u2", "aud": f"t13:{app.id}", "iat": now, "exp": now + 600}
    refused(apps_client, app, unsigned({"alg": "none", "typ": "JWT", "kid": "k-EdDSA"}, claims))


def test_an_hmac_made_with_the_public_key_is_refused(apps_client, app):
    now = int(time.time())
    claims = {"sub": "u2", "aud": f"t13:{app.id}", "iat": now, "exp": now + 600}
    header = {"alg": "HS256", "typ": "JWT", "kid": "k-RS256"}
    refused(apps_client, app, unsigned(header, claims, pem("RS256").encode()))


def test_a_wrong_aud_is_refused(apps_client, app, new_app):
    other = new_app("other")
    refused(apps_client, app, signed(app.id, aud=f"t13:{other.id}"))
    refused(apps_client, app, signed(app.id, aud="someone-else"))


def test_an_unknown_kid_is_refused(apps_client, app):
    refused(apps_client, app, signed(app.id, kid="k-nope"))
    refused(apps_client, app, signed(app.id, "ES256", kid="k-EdDSA"))  # another key's kid


def test_a_future_iat_is_refused(apps_client, app):
    now = int(time.time())
    refused(apps_client, app, signed(app.id, iat=now + 3600, exp=now + 4000))


def test_an_expired_exp_is_refused(apps_client, app):
    now = int(time.time())
    refused(apps_client, app, signed(app.id, iat=now - 900, exp=now - 300), "CREDENTIAL_EXPIRED")


def test_a_signature_of_another_key_and_missing_claims_are_refused(apps_client, app):
    stranger = ed25519.Ed25519PrivateKey.generate()
    now = int(time.time())
    body = {"sub": "u2", "aud": f"t13:{app.id}", "iat": now, "exp": now + 600}
    refused(
        apps_client, app, jwt.encode(body, stranger, algorithm="EdDSA", headers={"kid": "k-EdDSA"})
    )
    refused(apps_client, app, signed(app.id, exp=None))
    refused(apps_client, app, signed(app.id, sub=None))
    refused(apps_client, app, signed(app.id, exp=now + 2 * 86400))  # lives too long


def test_a_revoked_or_barred_player_is_refused(apps_client, app):
    game_id = two_player_game(apps_client, app)["id"]
    path = f"/v1/games/{game_id}/view"
    early = signed(app.id)
    assert apps_client.get(path, headers=bearer(early)).status_code == 200
    apps_client.delete("/v1/players/u2/tokens", headers=app.auth)
    assert apps_client.get(path, headers=bearer(early)).get_json()["code"] == "INVALID_CREDENTIAL"
    later = signed(app.id, iat=int(time.time()) + 2)  # issued after the revocation
    assert apps_client.get(path, headers=bearer(later)).status_code == 200
    apps_client.put("/v1/players/u2/bar", headers=app.auth)
    assert apps_client.get(path, headers=bearer(later)).status_code == 401


def test_the_command_registers_and_removes_keys(
    redis_client, redis_url, store, new_app, monkeypatch, capsys, tmp_path
):
    monkeypatch.setenv("REDIS_URL", redis_url)
    made = new_app("cards")
    key_file = tmp_path / "key.pem"
    key_file.write_text(pem("ES256"))
    args = ["apps", "add-key", made.id, "main", "--public-key", str(key_file)]
    assert main([*args, "--alg", "EdDSA"]) == 1  # a P-256 key does not sign EdDSA
    assert "does not sign EdDSA" in capsys.readouterr().err
    assert main([*args, "--alg", "ES256"]) == 0
    assert apps.load(store.apps, made.id).jwt_keys[0]["alg"] == "ES256"
    assert main(["apps", "remove-key", made.id, "main"]) == 0
    assert apps.load(store.apps, made.id).jwt_keys == []
    assert main(["apps", "remove-key", made.id, "main"]) == 1
