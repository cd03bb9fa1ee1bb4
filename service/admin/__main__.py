"""``python -m service.admin``: the same as ``three-thirteen-admin``."""

from __future__ import annotations

import sys

from service.admin.cli import main

if __name__ == "__main__":
    sys.exit(main())
