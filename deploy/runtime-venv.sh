#!/bin/sh
# The runtime set, installed as the image installs it (deploy/Dockerfile) and as
# tests/deploy/test_runtime_set.py installs it to serve a game from:
#
#   deploy/runtime-venv.sh deps VENV        a venv with the locked runtime set only
#                                           (requirements/runtime.txt, hashes checked)
#   deploy/runtime-venv.sh project VENV     the project's wheel built from the current
#                                           directory, checked to hold the compiled
#                                           extension, installed --no-deps; then pip
#                                           and setuptools leave the venv
#
# PYTHON is the interpreter the venv is made from (default python3).
set -eu
step=$1
venv=$2
case "$step" in
deps)
    "${PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --require-hashes -r requirements/runtime.txt
    ;;
project)
    wheels=$(mktemp -d)
    "$venv/bin/python" -m pip wheel -q --no-deps --wheel-dir "$wheels" .
    "$venv/bin/python" deploy/check_wheel.py "$wheels"/three_thirteen-*.whl
    "$venv/bin/python" -m pip install -q --no-deps "$wheels"/three_thirteen-*.whl
    rm -rf "$wheels"
    "$venv/bin/python" -m pip uninstall -q -y pip setuptools
    ;;
*)
    echo "usage: $0 deps|project VENV" >&2
    exit 2
    ;;
esac
