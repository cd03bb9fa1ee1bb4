"""Player names, on both paths (defect 7): names that disguise themselves (controls,
format characters, odd spaces, lone surrogates) are refused; names are stored in NFC,
and other scripts stay welcome."""

from __future__ import annotations

import unicodedata

import pytest

from tests.api.conftest import create_game
from tests.hardening.conftest import snapshot
from tests.hardening.strict import PROBLEM, problem

BAD_NAMES = [
    "a\u0085b",  # NEL, a C1 control
    "a\u009bb",  # CSI, a C1 control
    "a\u2028b",  # line separator (Zl)
    "a\u2029b",  # paragraph separator (Zp)
    "\ufeffann",  # BOM (Cf)
    "bob\u202egnp.exe",  # right-to-left override (Cf)
    "a\u2066b\u2069",  # bidi isolates (Cf)
    "a\u200bb",  # zero-width space (Cf)
    "a\u00adb",  # soft hyphen (Cf)
    "a\ue000b",  # private use (Co)
    "a\U000f0000b",  # supplementary private use (Co)
    "a\u0378b",  # unassigned (Cn)
    " ann",
    "ann ",
    "ann\n",
    "\u3000ann",  # ideographic space, leading
    "ann\u00a0",  # no-break space, trailing
    "\t",
]


@pytest.mark.parametrize("name", BAD_NAMES, ids=[ascii(n) for n in BAD_NAMES])
def test_names_that_disguise_themselves_are_422(lane_client, redis_client, name):
    response = lane_client.post("/v1/games", json={"players": [{"name": name}, {"name": "b"}]})
    problem(response, 422, "VALIDATION_ERROR")
    assert not list(redis_client.scan_iter(match="t13:*"))
    game = create_game(lane_client, [{"name": "a"}], seats=2, seed="names")
    before = snapshot(redis_client, game.id)
    problem(lane_client.post(f"/v1/games/{game.id}/players", json={"name": name}), 422)
    assert snapshot(redis_client, game.id) == before


def test_a_lone_surrogate_in_a_name_is_4xx(lane_client, redis_client):
    response = lane_client.post(
        "/v1/games",
        data=b'{"players": [{"name": "a\\ud800"}, {"name": "b"}]}',
        headers={"Content-Type": "application/json"},
    )
    assert 400 <= response.status_code < 500 and response.mimetype == PROBLEM
    assert not list(redis_client.scan_iter(match="t13:*"))


def test_names_are_stored_nfc_and_other_scripts_stay_welcome(lane_client):
    decomposed = "Zoe\u0308 Ma\u0301rquez"
    game = create_game(
        lane_client, [{"name": decomposed}, {"name": "李小龍"}, {"name": "Ωmega 7"}], seed="nfc"
    )
    names = [p["name"] for p in game.public()["players"]]
    assert names == [unicodedata.normalize("NFC", decomposed), "李小龍", "Ωmega 7"]
    assert names[0] == "Zoë Márquez"


def test_a_name_of_40_characters_after_nfc_is_accepted(lane_client):
    name = "e\u0301" * 40  # 80 code points, 40 once composed
    game = create_game(lane_client, [{"name": name}, {"name": "b"}], seed="nfc40")
    assert game.public()["players"][0]["name"] == "\u00e9" * 40
