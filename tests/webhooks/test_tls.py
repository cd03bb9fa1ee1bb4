"""An https delivery connects to the address checked, with the URL's host in SNI and
the certificate checked against it: a loopback TLS server (a self-signed certificate,
which no delivery may trust) sees the name, and the attempt fails verification."""

from __future__ import annotations

import datetime
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from service.webhooks.sender import Sender


def self_signed(directory: Path, name: str) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder(subject, subject, key.public_key(), x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[int, list[str | None]]]:
    """A TLS server on 127.0.0.1 recording the SNI of each handshake."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*self_signed(tmp_path, "hooks.example.com"))
    names: list[str | None] = []
    context.sni_callback = lambda _sock, name, _ctx: names.append(name)  # type: ignore[assignment,misc]
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            try:
                with context.wrap_socket(conn, server_side=True):
                    pass
            except (ssl.SSLError, OSError):
                pass  # the client refuses our certificate

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1], names
    stop.set()
    thread.join(2)
    listener.close()


def test_https_sends_the_name_and_checks_the_certificate(
    tls_server: tuple[int, list[str | None]], only_loopback_connections: list[str]
):
    port, names = tls_server
    sender = Sender(
        timeout=2,
        allow_http=False,
        allow_loopback=True,
        resolver=lambda host, _port: ["127.0.0.1"] if host == "hooks.example.com" else [],
    )
    outcome = sender.post(f"https://hooks.example.com:{port}/t13", b"{}", {})
    assert not outcome.delivered and outcome.status is None
    assert outcome.error is not None and "CERTIFICATE_VERIFY_FAILED" in outcome.error
    assert names == ["hooks.example.com"]
    assert only_loopback_connections == ["127.0.0.1"]
