"""deploy/gunicorn.conf.py, loaded as gunicorn's master loads it: the default port, and
nothing that gevent must patch first imported in the master."""

from __future__ import annotations

import json
import sys

from tests.deploy.files import GUNICORN_CONF, PORT, run_command


def test_gunicorn_config_defaults_to_port_8000() -> None:
    assert GUNICORN_CONF.exists(), "deploy/gunicorn.conf.py (copied by the Dockerfile)"
    probe = (
        "import json, os, runpy, sys\n"
        "for k in ('HOST', 'PORT'): os.environ.pop(k, None)\n"
        "ns = runpy.run_path(sys.argv[1])\n"
        "b = ns.get('bind')\n"
        "print(json.dumps([b] if isinstance(b, str) else b))\n"
    )
    result = run_command([sys.executable, "-c", probe, str(GUNICORN_CONF)])
    assert result.returncode == 0, result.stderr
    bind = json.loads(result.stdout.strip().splitlines()[-1])
    # No bind at all means gunicorn's own default, 127.0.0.1:8000.
    assert bind is None or any(str(b).endswith(f":{PORT}") for b in bind), bind


def test_gunicorn_master_imports_neither_the_app_nor_the_store() -> None:
    """The master reads the config and the worker class; gevent patches the standard
    library in each worker, so what makes locks or sockets must be imported there."""
    probe = (
        "import json, runpy, sys\n"
        "from gunicorn.util import load_class\n"
        "ns = runpy.run_path(sys.argv[1])\n"
        "load_class(ns['worker_class'])\n"
        "late = ('flask', 'redis', 'fakeredis', 'prometheus_client', 'service.store',\n"
        "        'service.app', 'service.api')\n"
        "print(json.dumps([name for name in late if name in sys.modules]))\n"
    )
    result = run_command([sys.executable, "-c", probe, str(GUNICORN_CONF)])
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
    assert "MonkeyPatchWarning" not in result.stderr
