"""A client generated from openapi/openapi.json works without hand edits."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from service.openapi import DEFAULT_PATH

GENERATOR = Path(sys.executable).parent / "openapi-python-client"


@pytest.fixture(scope="module")
def client_package(tmp_path_factory):
    if not GENERATOR.exists():
        pytest.skip("openapi-python-client is not installed (it is in the dev extras)")
    out = tmp_path_factory.mktemp("generated")
    result = subprocess.run(
        [str(GENERATOR), "generate", "--path", str(DEFAULT_PATH), "--meta", "none"],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module("three_thirteen_client")
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m.startswith("three_thirteen_client")]:
            del sys.modules[name]
        shutil.rmtree(out, ignore_errors=True)


def test_generated_client_plays_a_turn(client_package, app):
    from three_thirteen_client import AuthenticatedClient, Client
    from three_thirteen_client.api.games import (
        create_game,
        get_game,
        get_player_view,
        make_move,
    )
    from three_thirteen_client.models import (
        CreateGameIn,
        DiscardMove,
        DiscardMoveType,
        DrawMove,
        DrawMoveSource,
        DrawMoveType,
        PlayerIn,
        PlayerView,
        Problem,
    )

    transport = httpx.WSGITransport(app=app)
    base = "http://testserver"
    anonymous = Client(base_url=base, httpx_args={"transport": transport})
    created = create_game.sync(
        client=anonymous, body=CreateGameIn(players=[PlayerIn(name="ann"), PlayerIn(name="bob")])
    )
    assert created.status == "playing" and len(created.players) == 2
    game = get_game.sync(client=anonymous, game_id=created.id)
    turn = game.round_.turn
    seat = AuthenticatedClient(
        base_url=base, token=created.players[turn].token, httpx_args={"transport": transport}
    )
    view = get_player_view.sync(client=seat, game_id=created.id)
    assert isinstance(view, PlayerView) and len(view.hand) == 3
    drew = make_move.sync(
        client=seat,
        game_id=created.id,
        body=DrawMove(type_=DrawMoveType.DRAW, source=DrawMoveSource.STOCK),
    )
    assert isinstance(drew, PlayerView) and len(drew.hand) == 4
    wrong = make_move.sync(
        client=seat,
        game_id=created.id,
        body=DrawMove(type_=DrawMoveType.DRAW, source=DrawMoveSource.STOCK),
    )
    assert isinstance(wrong, Problem) and wrong.code == "WRONG_PHASE"
    card = drew.arrangement.deadwood[-1] if drew.arrangement.deadwood else drew.hand[-1]
    done = make_move.sync(
        client=seat,
        game_id=created.id,
        body=DiscardMove(type_=DiscardMoveType.DISCARD, card=card),
    )
    assert isinstance(done, PlayerView) and len(done.hand) == 3
    assert done.version == drew.version + 1
