"""Redis URLs safe to log.

Apart from :mod:`service.store` (which re-exports it) so that the gunicorn
master can log the store's address without importing the store: see
``deploy/gunicorn.conf.py``.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def redact_url(url: str | None) -> str:
    """``url`` safe to log: the password (and any query string) replaced by ``***``.

    >>> redact_url("rediss://alice:s3cret@redis.internal:6380/0?ssl_ca_certs=/ca.pem")
    'rediss://alice:***@redis.internal:6380/0?***'
    >>> redact_url("redis://:s3cret@127.0.0.1:6379/0")
    'redis://:***@127.0.0.1:6379/0'
    >>> redact_url("redis://127.0.0.1:6379/0")
    'redis://127.0.0.1:6379/0'
    >>> redact_url(None)
    '(embedded)'
    """
    if url is None:
        return "(embedded)"
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:***@{host}"
        query = "***" if parts.query else ""
        return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
    except ValueError:
        return "(unparseable URL)"
