"""``three-thirteen-admin``: the operator's command line (apps of ``AUTH_MODE=apps``)."""
