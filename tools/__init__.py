"""Developer tools run by make targets (``make docs``, ``make openapi``); not in the wheel."""
