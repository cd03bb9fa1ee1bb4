"""The ceiling of this stack: a plain Flask app that answers a small JSON object.

Served by gunicorn with exactly the settings of the service
(``deploy/gunicorn.conf.py``, same workers, same access log), and
loaded by the same load generator, it is the most requests per second that
Flask + gunicorn can answer on this machine.  ``bench/http_bench.py``
reports every service scenario as a ratio to it.

    gunicorn -c deploy/gunicorn.conf.py bench.flask_ceiling:app
"""

from __future__ import annotations

from flask import Flask, jsonify

app = Flask(__name__)


@app.get("/")
def index():  # type: ignore[no-untyped-def]
    return jsonify({"ok": True, "service": "ceiling", "version": 1})


@app.get("/healthz")
def healthz():  # type: ignore[no-untyped-def]
    return jsonify({"status": "ok"})
