# Three Thirteen game host. `make run` and `make test` are all a newcomer needs.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: install lock image-test run test lint format typecheck sdk bench bench-ab bench-bots bench-bots-expert bench-bots-ab bench-bot-memory bench-commit bench-wait bench-http bench-realtime bench-replay bench-report bench-webhooks openapi docs soak clean bench-botplay bench-archive bench-leaderboard

# The development set is requirements/dev.txt (the lock, hashes checked), then the
# project itself with --no-deps: every dependency comes from the lock.
$(STAMP): pyproject.toml setup.py service/engine/solver/_native.c requirements/dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --require-hashes -r requirements/dev.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

# pip-compile keeps the pins it finds and resolves only what changed (new or
# narrowed ranges); LOCK_ARGS=--upgrade re-resolves everything to the newest allowed.
LOCK_ARGS ?=
PIP_COMPILE = $(VENV)/bin/pip-compile -q --generate-hashes --allow-unsafe --strip-extras \
	--no-emit-find-links --no-emit-index-url $(LOCK_ARGS)
lock: install ## requirements/runtime.txt and requirements/dev.txt from pyproject.toml's ranges
	$(PIP_COMPILE) -o requirements/runtime.txt pyproject.toml
	$(PIP_COMPILE) --extra dev -c requirements/runtime.txt -o requirements/dev.txt pyproject.toml

BASE_IMAGE ?= python:3.11-slim
image-test: install ## build deploy/Dockerfile on $(BASE_IMAGE) and try the image (needs Docker)
	T13_IMAGE_TEST=1 BASE_IMAGE=$(BASE_IMAGE) $(PY) -m pytest -p no:cacheprovider -v -s tests/image

run: install ## serve the API on $(HOST):$(PORT) (embedded Redis unless REDIS_URL is set)
	HOST=$(HOST) PORT=$(PORT) $(VENV)/bin/gunicorn -c deploy/gunicorn.conf.py service.wsgi:app

test: install ## the whole suite (starts its own throwaway redis-server)
	$(PY) -m pytest

lint: install ## ruff (lint + format check), mypy --strict on service/ and tools/, the layering contracts (import-linter) (CI runs it)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

docs: install ## regenerate the tables of docs/CONFIGURATION.md and docs/ERRORS.md from the code
	$(PY) -m tools.docs_tables

bench: install ## hand solver speed on a corpus of >= 10,000 hands, with the C and the Python alone in turn
	$(PY) bench/solver_bench.py

openapi: install ## regenerate openapi/openapi.json from the app
	$(PY) -m tools.openapi

sdk: install ## the Python and TypeScript clients, generated from openapi/openapi.json, into build/sdk/ (needs npm)
	$(PY) sdk/build.py

bench-bots: install ## bot decision times and strength tables, expert included (about 80 minutes on 2 idle CPUs)
	$(PY) bench/bots_bench.py --strength

BOTS_EXPERT ?= --games 100 --games-4p 160 --jobs 2
bench-bots-expert: install ## only the expert's tables (2 players against basic and strong, 4 players) and its decision times: make bench-bots-expert BOTS_EXPERT="--games 100 --games-4p 160"
	$(PY) bench/bots_bench.py --only-expert $(BOTS_EXPERT)

bench-http: install ## HTTP throughput, with its ratio to a plain Flask ceiling; player credentials beside seat tokens (7 to 10 min)
	@command -v wrk >/dev/null || apt-get install -y wrk >/dev/null 2>&1 || \
		echo "wrk not found (apt-get install -y wrk): using the Python load generator"
	$(PY) bench/http_bench.py
	$(PY) bench/player_credentials.py

BOTS_AB ?= --a SOLVER=c --b SOLVER=python
bench-bots-ab: install ## bot games of two variants differing by environment, in turn: make bench-bots-ab BOTS_AB="--a X=1 --b X=0" (about 3 min)
	$(PY) bench/bots_side_by_side.py $(BOTS_AB)

BOT_MEMORY ?=
bench-bot-memory: install ## one process playing bot games (2-8 seats, every level) for 10 min: RSS every 30 s, the memos' bytes, the slope; BOT_MEMORY="--minutes 60" for the hour
	$(PY) bench/bot_memory.py $(BOT_MEMORY)

AB ?= --a FAST_LANE=true --b FAST_LANE=false
bench-ab: install ## two instances differing by environment, loaded in turn: make bench-ab AB="--a X=1 --b X=0"
	@command -v wrk >/dev/null || apt-get install -y wrk >/dev/null 2>&1 || \
		echo "wrk not found (apt-get install -y wrk): using the Python load generator"
	$(PY) bench/side_by_side.py $(AB)

bench-commit: install ## the commit script in Redis with and without the epoch of event tags (INFO; about 20 s)
	$(PY) bench/commit_script.py

bench-wait: install ## a commit's round trip with and without REDIS_WAIT_REPLICAS=1 (one replica; about 10 s)
	$(PY) bench/confirmed_writes.py

RT ?=
bench-realtime: install ## N = 100, 1,000, 10,000 waiting clients (long polls + SSE) while 200 moves/s are played; RT="--waiters 20000" for more (15 to 20 min)
	$(PY) bench/realtime.py $(RT)

BOTPLAY ?=
bench-botplay: install ## bots in their worker: a human's move to the bots' replies (p50/p99) and turn timers' lateness (about 2 minutes); BOTPLAY="--baseline ../main"
	$(PY) bench/botplay.py $(BOTPLAY)

HOOKS ?=
bench-webhooks: install ## webhook delivery latency (commit to receipt) and one worker's throughput (about 1 minute); HOOKS="--rate 100"
	$(PY) bench/webhooks.py $(HOOKS)

bench-replay: install ## a finished replay answered saved and built, side by side (about 1 minute)
	$(PY) bench/replay_cache.py

bench-report: install ## chart + markdown table of the last bench-http run (bench/results/)
	$(PY) bench/report.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .import_linter_cache

soak: install ## bounded soak: 2 instances x concurrent clients, then replay every game (5 min)
	$(PY) bench/soak.py --duration 300

bench-archive: install ## bytes of a finished game's archive next to its live keys', 2 and 8 players (about 1 min)
	$(PY) bench/archive_size.py

LEADERBOARD ?=
bench-leaderboard: install ## leaderboard reads (a page, around-me) p50/p99 with 1,000,000 rated players, hosting and HTTP, and the bytes per player (about 3 min); LEADERBOARD="--players 100000"
	$(PY) bench/leaderboard.py $(LEADERBOARD)
