"""What the tests and the benchmarks share, so that neither imports the other.

Throwaway processes on free loopback ports, each stopped by its own PID (never by
name) and never touching a server it did not start: a ``redis-server``
(:mod:`harness.redis_server`), a Redis Cluster of them (:mod:`harness.redis_cluster`)
and gunicorn serving an app (:mod:`harness.gunicorn_server`), with the ports they
take (:mod:`harness.ports`) and the CPU they use (:mod:`harness.proc_stats`).  Also
the checks both run on played games: a game replayed from its public events
(:mod:`harness.replay_check`) and the lay-off search as it was before it was
bounded (:mod:`harness.legacy_layoffs`).

It sits at the repository's root, beside ``service`` and ``tests``: pytest puts the
root on ``sys.path`` as the base directory of the ``tests`` package (``tests/__init__.py``,
the default ``prepend`` import mode), and the scripts in ``bench/`` put it there
themselves.
"""
