"""Three Thirteen game host: a headless REST API for the rummy card game.

Packages: :mod:`service.engine` (the rules, no I/O), :mod:`service.hosting`
(the stored game record, seats, timers, bots' turns, replays),
:mod:`service.store` (every Redis call), :mod:`service.api` (HTTP) and
:mod:`service.bots`.  ``docs/ARCHITECTURE.md`` draws the whole.
"""
