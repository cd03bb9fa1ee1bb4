"""A webhook's URL checked when its game is created
(:func:`service.hosting.game_webhooks.check_url`): every form of a private,
loopback or metadata address refused, by its host alone (no name is resolved here:
a name is checked at each delivery, tests/webhooks/test_guard.py)."""

from __future__ import annotations

import pytest

from service.hosting.game_webhooks import WebhookRefusedError, check_url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://hooks.example.com/", "must be https://"),
        ("ftp://hooks.example.com/", "must be https://"),
        ("https://user:pw@hooks.example.com/", "credentials"),
        ("https://hooks.example.com/#x", "fragment"),
        ("https:///path", "no host"),
        ("https://127.0.0.1/", "loopback"),
        ("https://localhost:8443/", "loopback"),
        ("https://[::1]/", "loopback"),
        ("https://10.0.0.1/", "not a public address"),
        ("https://169.254.169.254/latest/meta-data/", "not a public address"),
        ("https://[::ffff:a00:1]/", "not a public address"),
        ("https://hooks.example.com:99999/", "not a URL"),
        ("https://hooks.exa mple.com/", "spaces or control"),
        ("https://hooks.example.com/\n", "spaces or control"),
        # every form the resolver reads as an address (issue 39)
        ("https://2130706433/", "127.0.0.1 is a loopback address"),
        ("https://0x7f000001/", "127.0.0.1 is a loopback address"),
        ("https://0177.0.0.1/", "127.0.0.1 is a loopback address"),
        ("https://127.1/", "127.0.0.1 is a loopback address"),
        ("https://0x7f.1/", "127.0.0.1 is a loopback address"),
        ("https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/", "127.0.0.1 is a loopback"),
        ("https://localhost./", "127.0.0.1 is a loopback address"),
        ("https://LocalHost/", "127.0.0.1 is a loopback address"),
        ("https://api.localhost./", "127.0.0.1 is a loopback address"),
        ("https://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/", "loopback"),
        ("https://0xa9fea9fe/", "169.254.169.254 is not a public address"),
        ("https://10.1/", "10.0.0.1 is not a public address"),
        ("https://167772161/", "10.0.0.1 is not a public address"),
        ("https://[64:ff9b::a9fe:a9fe]/", "not a public address"),
        ("https://[64:ff9b::7f00:1]/", "not a public address"),
        ("https://[64:ff9b:1::808:808]/", "local-use NAT64 address: refused"),
        ("https://[::ffff:0:808:808]/", "IPv4-translated address: refused"),
        ("https://[::808:808]/", "IPv4-compatible address: refused"),
        ("https://[::7f00:1]/", "IPv4-compatible address: refused"),
        ("https://[2002:a9fe:a9fe::1]/", "not a public address"),
        ("https://metadata/", "not a public name"),
        ("https://metadata.google.internal/", "not a public name"),
        ("https://printer.local./", "not a public name"),
        ("https://a..b/", "not a valid host name"),
    ],
)
def test_urls_refused_at_creation(url: str, reason: str):
    with pytest.raises(WebhookRefusedError, match=reason):
        check_url(url, allow_http=False, allow_loopback=False)


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com./t13",
        "https://93.184.215.14/",
        "https://[64:ff9b::5db8:d70e]/",
        "https://[2606:2800:21f:cb07::1]/",
        "https://b\u00fccher.example/",
    ],
)
def test_public_hosts_are_accepted_at_creation(url: str):
    check_url(url, allow_http=False, allow_loopback=False)
