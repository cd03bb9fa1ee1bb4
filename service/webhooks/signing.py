"""Signatures in the Standard Webhooks form (https://www.standardwebhooks.com/), as
Svix, OpenAI and others send them: ``webhook-id``, ``webhook-timestamp`` (Unix
seconds) and ``webhook-signature: v1,<base64 HMAC-SHA256>`` over
``"<id>.<timestamp>.<body>"``, keyed with the bytes of the secret after ``whsec_``.
Receivers can check them with any Standard Webhooks library, or in a few lines
(``docs/WEBHOOKS.md``).

>>> secret = "whsec_" + base64.b64encode(b"k" * 32).decode()
>>> signed = headers(secret, "msg_1", b'{"a":1}', 1700000000)
>>> signed["webhook-signature"]
'v1,tDnYFrCIK4MQWDoOot4FXQ7/xKQ3Ta7J5hEfw60KmoA='
"""

from __future__ import annotations

import base64
import hashlib
import hmac

SECRET_PREFIX = "whsec_"


def signature(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """``v1,<base64 HMAC-SHA256>`` of ``"<msg_id>.<timestamp>.<body>"`` under ``secret``."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{msg_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def headers(secret: str, msg_id: str, body: bytes, timestamp: int) -> dict[str, str]:
    """The headers of one attempt of a delivery (its id the same for every attempt, the
    timestamp the attempt's own)."""
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secret, msg_id, timestamp, body),
    }
