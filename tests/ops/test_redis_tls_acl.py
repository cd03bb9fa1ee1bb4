"""Redis over TLS (``rediss://``) and with an ACL user, configured through REDIS_URL only.

A throwaway ``redis-server`` listens with TLS only (``--port 0 --tls-port P``),
with a certificate from a CA made here, and has an ACL user ``alice`` limited
to the service's keys while the default user is off.  The app then plays a few
moves through that URL.  The password must never show up in any log line.
If the server was built without TLS the TLS test is skipped (with the reason);
the ACL test over plain TCP still runs.
"""

from __future__ import annotations

import datetime
import ipaddress
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from redis.backoff import NoBackoff
from redis.retry import Retry

from harness.redis_server import INSTALL_HINT, RedisServer, redis_server_binary
from service import logs
from service.app import create_app
from service.config import Config
from service.store import GameStore, connect, redact_url

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason=INSTALL_HINT)

PASSWORD = "s3cret-Pa55word-xyz"
ACL_ARGS = (
    # the default user is off: only alice, restricted to the service's keys, may connect
    "--user", "default", "off",
    "--user", "alice", "on", f">{PASSWORD}", "~t13:*", "&*", "+@all",
)  # fmt: skip


def _write_certs(directory: Path) -> dict[str, Path]:
    """A CA and a server certificate for 127.0.0.1 signed by it (PEM files)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "t13 test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )  # fmt: skip
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = {
        "ca": directory / "ca.pem",
        "cert": directory / "server.pem",
        "key": directory / "key.pem",
    }
    paths["ca"].write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    paths["cert"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths["key"].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    paths["key"].chmod(0o600)
    return paths


class AclServer(RedisServer):
    """A RedisServer whose only user is ``alice`` (probed with her credentials)."""

    @property
    def url(self) -> str:
        return f"redis://alice:{PASSWORD}@127.0.0.1:{self.port}/0"


class TlsAclServer(AclServer):
    """TLS only (the plain port is off), ACL user ``alice``."""

    def __init__(self) -> None:
        super().__init__()
        self.certs = _write_certs(self.dir)
        self.extra_args = (
            "--port", "0",
            "--tls-port", str(self.port),
            "--tls-cert-file", str(self.certs["cert"]),
            "--tls-key-file", str(self.certs["key"]),
            "--tls-ca-cert-file", str(self.certs["ca"]),
            "--tls-auth-clients", "no",
            *ACL_ARGS,
        )  # fmt: skip

    @property
    def url(self) -> str:
        return (
            f"rediss://alice:{PASSWORD}@127.0.0.1:{self.port}/0"
            f"?ssl_ca_certs={self.certs['ca']}&ssl_cert_reqs=required"
        )


class ListHandler(logging.Handler):
    """Collects every record, formatted as the service formats them (JSON)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logs.JsonFormatter())

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def all_logs() -> Iterator[ListHandler]:
    """Every log line of the service (its logger does not propagate) and of the rest."""
    handler = ListHandler()
    loggers = [logging.getLogger(), logging.getLogger("service")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(level)


@pytest.fixture
def tls_server() -> Iterator[TlsAclServer]:
    server = TlsAclServer()
    try:
        try:
            server.start()
        except RuntimeError as exc:
            if "tls" in str(exc).lower() or "FATAL CONFIG" in str(exc):
                pytest.skip(f"redis-server was built without TLS support: {exc}")
            raise
        yield server
    finally:
        server.cleanup()


@pytest.fixture
def acl_server() -> Iterator[AclServer]:
    server = AclServer(extra_args=ACL_ARGS)
    try:
        yield server.start()
    finally:
        server.cleanup()


def play_a_few_moves(url: str) -> None:
    config = Config.from_env(
        {
            "REDIS_URL": url,
            "ALLOW_SEEDED_GAMES": "true",
            "RATE_LIMITS": "false",
            "LOG_LEVEL": "DEBUG",
        }
    )
    store = GameStore(connect(config), config=config)
    app = create_app(config, store)
    client = app.test_client()
    assert client.get("/readyz").status_code == 200
    created = client.post(
        "/v1/games", json={"players": [{"name": "a"}, {"name": "b"}], "seed": "tls-7"}
    )
    assert created.status_code == 201, created.get_json()
    game_id = created.get_json()["id"]
    tokens = {p["seat"]: p["token"] for p in created.get_json()["players"]}
    for _ in range(6):
        seat = client.get(f"/v1/games/{game_id}").get_json()["round"]["turn"]
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        view = client.get(f"/v1/games/{game_id}/view", headers=auth).get_json()
        moves = view["legal_moves"]
        move = ([m for m in moves if m["type"] == "draw"] or [m for m in moves if "card" in m])[0]
        assert client.post(f"/v1/games/{game_id}/moves", json=move, headers=auth).status_code == 200
    events = client.get(f"/v1/games/{game_id}/events?after=0&wait=1").get_json()
    assert events["last_seq"] >= 6
    store.client.close()


def test_tls_and_acl_user_through_the_url(tls_server: TlsAclServer, all_logs: ListHandler):
    plain = redis.Redis(
        host="127.0.0.1", port=tls_server.port, socket_timeout=2, retry=Retry(NoBackoff(), 0)
    )
    with pytest.raises(redis.ConnectionError):
        plain.ping()  # no plaintext on the TLS port
    plain.close()
    play_a_few_moves(tls_server.url)
    assert_no_password(all_logs)
    assert any("rediss://alice:***@127.0.0.1" in line for line in all_logs.lines)


def test_acl_user_over_plain_tcp(acl_server: AclServer, all_logs: ListHandler):
    anonymous = redis.Redis(
        host="127.0.0.1", port=acl_server.port, socket_timeout=2, retry=Retry(NoBackoff(), 0)
    )
    with pytest.raises(redis.exceptions.AuthenticationError):
        anonymous.ping()  # the default user is off
    anonymous.close()
    play_a_few_moves(acl_server.url)
    assert_no_password(all_logs)


def test_wrong_password_is_unavailable_and_not_logged(acl_server: AclServer, all_logs: ListHandler):
    wrong = acl_server.url.replace(PASSWORD, "not-" + PASSWORD[::-1])
    config = Config.from_env({"REDIS_URL": wrong, "RATE_LIMITS": "false"})
    app = create_app(config, GameStore(connect(config), config=config))
    client = app.test_client()
    assert client.get("/readyz").status_code == 503
    response = client.post("/v1/games", json={"players": [{"name": "a"}, {"name": "b"}]})
    assert response.status_code == 503
    assert PASSWORD[::-1] not in response.get_data(as_text=True)
    assert_no_password(all_logs, PASSWORD[::-1])


def assert_no_password(handler: ListHandler, secret: str = PASSWORD) -> None:
    assert handler.lines, "nothing was logged at all"
    leaked = [line for line in handler.lines if secret in line]
    assert not leaked, leaked


def test_redact_url_hides_password_and_query():
    url = f"rediss://alice:{PASSWORD}@redis:6380/0?ssl_ca_certs=/ca.pem"
    assert PASSWORD not in redact_url(url)
    assert redact_url(url) == "rediss://alice:***@redis:6380/0?***"
    assert redact_url(f"redis://:{PASSWORD}@redis:6379/1") == "redis://:***@redis:6379/1"
