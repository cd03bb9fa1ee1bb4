"""GameRecord.view_json: the one-pass texts a move saves and answers are exactly
the public view (completed with the results stored apart) and the seat's view,
at every stage of a game; and a record saved apart from its results loads back."""

from __future__ import annotations

import orjson
import pytest

from service.engine.errors import StateFormatError
from service.engine.moves import Draw, Source
from service.engine.state import Phase
from service.fairplay import automatic_finish
from service.games import GameRecord, create_record, with_results


def assert_texts_match(record: GameRecord, version: int) -> None:
    for seat in range(len(record.seats)):
        public, text = record.view_json(version, seat)
        assert "results" not in orjson.loads(public)
        assert with_results(public, record.results_json()) == orjson.dumps(record.view(version))
        assert text == orjson.dumps(record.view(version, seat))
        saved = with_results(public, record.results_json())  # as a read completes it
        assert record.seat_view_json(saved, seat) == text
        view = orjson.loads(text)
        private = ("seat", "hand", "legal_moves", "arrangement")
        public_view = orjson.loads(with_results(public, record.results_json()))
        assert {k: v for k, v in view.items() if k not in private} == public_view
        assert view["seat"] == seat
    loaded = GameRecord.loaded(record.to_bytes(), record.results_json())
    assert loaded == record
    assert loaded.results_to_save() is None  # unchanged: not written again
    assert GameRecord.from_bytes(record.to_bytes(), record.results_json()).results_to_save()


def play_turn(record: GameRecord) -> int:
    """Play one greedy move of the seat whose turn it is (drawing from the stock,
    then the engine's own finish); that seat."""
    assert record.state is not None and record.state.round is not None
    seat = record.state.round.turn
    if record.state.round.phase is Phase.DRAW:
        record.play(seat, Draw(Source.STOCK))
    else:
        record.play(seat, automatic_finish(record.state, seat))
    return seat


def test_view_json_is_the_public_view_and_the_seat_view_while_waiting() -> None:
    record, _tokens, _events = create_record([{"name": "a"}], 3, "classic", {}, None, False)
    assert record.status == "waiting"
    assert_texts_match(record, 1)


def test_view_json_is_the_public_view_and_the_seat_view_through_a_game() -> None:
    record, _tokens, _events = create_record(
        [{"name": "a"}, {"name": "b"}], None, "classic", {"lay_off": True}, "views", True
    )
    version = 1
    while record.state is not None and record.state.round is not None:
        assert_texts_match(record, version)
        play_turn(record)
        version += 1
    assert record.status == "finished"
    assert_texts_match(record, version)


def test_a_record_saved_by_format_1_loads_and_moves_its_results_out() -> None:
    record, _tokens, _events = create_record(
        [{"name": "a"}, {"name": "b"}], None, "classic", {}, "format-1", True
    )
    assert record.state is not None
    while len(record.state.results) < 2:
        play_turn(record)
    doc = orjson.loads(record.to_bytes())
    doc["f"] = 1
    doc["state"]["results"] = record.results_json().decode()  # where format 1 kept them
    old = GameRecord.loaded(orjson.dumps(doc), None)
    assert old == record
    assert old.results_to_save() == record.results_json()  # saved apart on the next write
    assert "results" not in orjson.loads(old.to_bytes())["state"]


def test_a_document_without_its_results_is_refused() -> None:
    record, _tokens, _events = create_record(
        [{"name": "a"}, {"name": "b"}], None, "classic", {}, None, False
    )
    with pytest.raises(StateFormatError):
        GameRecord.from_bytes(record.to_bytes())


def test_stored_arrangements_are_the_solved_ones_and_spare_the_solve(monkeypatch) -> None:
    """Every seat's arrangement is saved with the document on a write (the mover's
    as its answer built it, the others' as known or solved then); a view of the
    same hand after loading it uses it (no solve) and gives what a solve gives;
    only arrangements of the hands as they are now are saved."""
    import service.engine.view as view_module

    record, _tokens, _events = create_record(
        [{"name": "a"}, {"name": "b"}, {"name": "c"}], None, "classic", {}, "arr", True
    )
    solve = view_module.best_arrangement
    calls: list[int] = []

    def counting(*args, **kwargs):
        calls.append(1)
        return solve(*args, **kwargs)

    spared = 0
    version = 1
    while record.state is not None and record.state.round is not None and version < 400:
        seat = play_turn(record)
        version += 1
        record.view_json(version, seat)  # what a move answers: the mover's view
        doc, results = record.to_bytes(), record.results_json()
        rows = orjson.loads(doc)["arr"]
        if record.state.round is None:
            assert rows == []
            break
        for s, index, ids, _arrangement in rows:
            assert index == record.state.round.index
            assert ids == sorted(c.id for c in record.state.round.hands[s])
        saved = {row[0] for row in rows}
        assert saved == {0, 1, 2}  # every seat's hand, the movers' and the others
        fresh = GameRecord.from_bytes(doc, results)
        fresh.arrangements.clear()
        expected = {s: orjson.dumps(fresh.view(version, s)) for s in range(3)}
        loaded = GameRecord.loaded(doc, results)
        monkeypatch.setattr(view_module, "best_arrangement", counting)
        for s in range(3):
            calls.clear()
            assert orjson.dumps(loaded.view(version, s)) == expected[s]
            if s in saved:
                assert not calls, "a stored arrangement was solved again"
        monkeypatch.setattr(view_module, "best_arrangement", solve)
        spared += len(saved)
    assert spared > 100


def test_bots_hands_are_not_arranged_on_a_write() -> None:
    """Nobody views a bot's hand: the document keeps the human seats' arrangements only."""
    record, _tokens, _events = create_record(
        [{"name": "a"}, {"name": "b", "bot": "basic"}, {"name": "c"}],
        None,
        "classic",
        {},
        "bots",
        True,
    )
    rows = orjson.loads(record.to_bytes())["arr"]
    assert [row[0] for row in rows] == [0, 2]
