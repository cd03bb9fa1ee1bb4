"""Where deliveries may go: the address check with a stub resolver (no lookup, no
connection), a name checked again at each delivery, and redirects from a loopback
receiver (the URL check at creation: tests/hosting/test_game_webhooks.py).  No
test here opens a connection to anything but loopback (the conftest's guard fails
any that tries)."""

from __future__ import annotations

import time

import pytest

from harness.webhook_receiver import WebhookReceiver
from service.hosting.game_webhooks import check_url
from service.webhooks.guard import RefusedAddress, checked_address
from service.webhooks.sender import Sender

REFUSED = [
    "10.0.0.1",
    "10.255.1.2",
    "172.16.5.4",
    "192.168.1.1",
    "169.254.169.254",  # the cloud metadata service
    "100.100.100.200",  # Alibaba's metadata service (shared address space)
    "0.0.0.0",
    "224.0.0.1",
    "fd00:ec2::254",  # AWS's metadata service over IPv6
    "fe80::1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::",
    # IPv6 carrying IPv4 (issue 39): NAT64 of a private, metadata or loopback address;
    # the local-use NAT64 prefix, IPv4-translated and IPv4-compatible whatever they
    # carry; 6to4 of a private address
    "64:ff9b::a00:1",
    "64:ff9b::a9fe:a9fe",
    "64:ff9b::7f00:1",
    "64:ff9b:1::808:808",
    "64:ff9b:1:a9fe:a9fe::",
    "::ffff:0:808:808",
    "::ffff:0:a9fe:a9fe",
    "::808:808",
    "::7f00:1",
    "2002:a00:1::1",
]
REFUSAL = "no address a delivery may reach"
LOOPBACK = ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"]


def resolving_to(*addresses: str):  # noqa: ANN201 (a stub resolver)
    asked: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return list(addresses)

    resolve.asked = asked  # type: ignore[attr-defined]
    return resolve


@pytest.mark.parametrize("address", REFUSED)
def test_private_link_local_and_metadata_addresses_are_refused(address: str):
    """Refused, in words that do not say what the name resolved to (no DNS oracle)."""
    with pytest.raises(RefusedAddress, match=REFUSAL) as refused:
        checked_address("hooks.example.com", 443, resolving_to(address), allow_loopback=True)
    assert str(refused.value) == f"hooks.example.com: {REFUSAL}"


@pytest.mark.parametrize("address", LOOPBACK)
def test_loopback_needs_the_setting(address: str):
    with pytest.raises(RefusedAddress) as refused:
        checked_address("hooks.example.com", 443, resolving_to(address), allow_loopback=False)
    assert str(refused.value) == f"hooks.example.com: {REFUSAL}"
    assert checked_address("x", 80, resolving_to(address), allow_loopback=True) == address


def test_every_address_of_a_name_is_checked():
    """A name with a public address and a private one is refused: the check does not
    pick the allowed one out of a rebinding answer."""
    resolve = resolving_to("93.184.215.14", "10.0.0.7")
    with pytest.raises(RefusedAddress) as refused:
        checked_address("hooks.example.com", 443, resolve, allow_loopback=False)
    assert "10.0.0.7" not in str(refused.value) and REFUSAL in str(refused.value)
    assert (
        checked_address(
            "hooks.example.com",
            443,
            resolving_to("93.184.215.14", "2606:2800:21f:cb07::1"),
            allow_loopback=False,
        )
        == "93.184.215.14"
    )
    with pytest.raises(RefusedAddress, match=REFUSAL):
        checked_address("hooks.example.com", 443, resolving_to(), allow_loopback=False)


@pytest.mark.parametrize("address", ["64:ff9b::5db8:d70e", "2002:5db8:d70e::1", "8.8.8.8"])
def test_public_ipv4_through_nat64_or_6to4_is_allowed(address: str):
    """An IPv6-only network with DNS64 reaches an IPv4-only receiver as 64:ff9b::/96."""
    assert checked_address("x.example", 443, resolving_to(address), allow_loopback=False) == (
        address
    )


def test_a_name_is_checked_at_each_delivery_not_only_at_creation(
    only_loopback_connections: list[str],
):
    """A name accepted at creation that resolves to a refused address later (DNS
    rebinding) is refused when the delivery is made: no connection is opened."""
    check_url("https://hooks.example.com/t13", allow_http=False, allow_loopback=False)
    for address in ("127.0.0.1", "10.0.0.1", "169.254.169.254"):
        resolve = resolving_to(address)
        sender = Sender(timeout=1, allow_http=False, allow_loopback=False, resolver=resolve)
        outcome = sender.post("https://hooks.example.com/t13", b"{}", {})
        assert resolve.asked == ["hooks.example.com"]  # type: ignore[attr-defined]
        assert outcome.status is None and not outcome.delivered
        assert outcome.refused and outcome.error == f"refused: hooks.example.com: {REFUSAL}"
    assert only_loopback_connections == []


def test_settings_are_checked_again_at_delivery(only_loopback_connections: list[str]):
    """A game made while http or loopback was allowed is refused once they are not."""
    sender = Sender(timeout=1, allow_http=False, allow_loopback=False)
    outcome = sender.post("http://127.0.0.1:9/", b"{}", {})
    assert outcome.error == "refused: the URL must be https://"
    outcome = Sender(timeout=1, allow_http=True, allow_loopback=False).post(
        "http://127.0.0.1:9/", b"{}", {}
    )
    assert outcome.error == "refused: 127.0.0.1 is a loopback address"
    assert only_loopback_connections == []


@pytest.mark.parametrize(
    "location",
    ["http://10.0.0.1/hooks", "http://169.254.169.254/latest/meta-data/", "/elsewhere"],
)
def test_redirects_are_never_followed(
    receiver: WebhookReceiver, only_loopback_connections: list[str], location: str
):
    """A loopback receiver answering 307 gets the one request: the redirect is a
    failed attempt, to a refused address or not."""
    receiver.redirect = location
    sender = Sender(timeout=2, allow_http=True, allow_loopback=True)
    outcome = sender.post(receiver.url, b'{"a":1}', {"webhook-id": "msg_x"})
    assert outcome.status == 307 and not outcome.delivered
    assert outcome.error == f"redirect to {location!r} not followed"
    assert len(receiver.received) == 1
    assert only_loopback_connections == ["127.0.0.1"]


def test_a_slow_receiver_times_out(receiver: WebhookReceiver):
    receiver.delay = 3
    started = time.monotonic()
    outcome = Sender(timeout=0.5, allow_http=True, allow_loopback=True).post(
        receiver.url, b"{}", {}
    )
    assert time.monotonic() - started < 2
    assert outcome.status is None and outcome.error is not None
    assert "timed out" in outcome.error.lower()
