"""game_views.move_texts: the one-pass texts a move saves and answers are exactly
the public view (completed with the results stored apart), the seat's view and
every seat's saved part of it, at every stage of a game; and a record saved apart
from its results loads back."""

from __future__ import annotations

import orjson
import pytest

from service.engine import solver as solver_module
from service.engine.codec import ids_of_chars
from service.engine.errors import StateFormatError
from service.engine.moves import Draw, Source
from service.engine.rounds import Phase
from service.hosting import game_views
from service.hosting.document import DOC_FORMAT, seat_part_for, with_results, with_seat_part
from service.hosting.game_views import move_texts, seat_parts_json
from service.hosting.record import GameRecord
from service.hosting.seating import create_record
from service.hosting.timers import automatic_finish


def assert_texts_match(record: GameRecord, version: int) -> None:
    for seat in range(len(record.seats)):
        public, text, parts = move_texts(record, version, seat)
        assert parts == seat_parts_json(record, version)
        token_hash = record.seats[seat].token_hash
        saved = with_results(public, record.results_json())  # as a read completes it
        if token_hash is not None:
            part = seat_part_for(parts, version, token_hash)
            assert part is not None and text.endswith(b"," + part[1:])
            # what GET /view answers from the saved texts is the seat's view
            assert with_seat_part(saved, part) == text
        assert "results" not in orjson.loads(public)
        assert with_results(public, record.results_json()) == orjson.dumps(
            game_views.view(record, version)
        )
        assert text == orjson.dumps(game_views.view(record, version, seat))
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


def test_the_document_loads_the_same_record_and_is_compact() -> None:
    record, _tokens, _events = create_record(
        [{"name": "a"}, {"name": "b"}, {"name": "c"}], None, "party", {}, "formats", True
    )
    assert record.state is not None
    while len(record.state.results) < 2:
        play_turn(record)
    record.to_bytes()  # arranges every human hand, as a save does
    results = record.results_json()
    doc = record.to_bytes()
    assert orjson.loads(doc)["f"] == DOC_FORMAT == 3
    loaded = GameRecord.loaded(doc, results)
    assert loaded == record
    assert loaded.arrangements == record.arrangements
    assert orjson.loads(loaded.to_bytes())["f"] == 3


def test_a_document_of_another_format_is_refused() -> None:
    """One format is read: a document of any other is a clear error, not a guess."""
    record, _tokens, _events = create_record(
        [{"name": "a"}, {"name": "b"}], None, "classic", {}, None, False
    )
    for other in (1, 2, 4, None):
        doc = orjson.loads(record.to_bytes())
        doc["f"] = other
        with pytest.raises(StateFormatError, match=f"unknown game document format {other}"):
            GameRecord.loaded(orjson.dumps(doc), record.results_json())


def test_a_document_without_its_results_is_refused() -> None:
    record, _tokens, _events = create_record(
        [{"name": "a"}, {"name": "b"}], None, "classic", {}, None, False
    )
    with pytest.raises(StateFormatError):
        GameRecord.from_bytes(record.to_bytes())


def solves() -> int:
    """How many times a hand was arranged so far (every call, memoized or not, goes
    through the solver's memo, which counts them)."""
    return solver_module.arrangements_asked()


def test_stored_arrangements_are_the_solved_ones_and_spare_the_solve() -> None:
    """Every seat's arrangement is saved with the document on a write (the mover's
    as its answer built it, the others' as known or solved then); a view of the
    same hand after loading it uses it (no solve) and gives what a solve gives;
    only arrangements of the hands as they are now are saved."""
    record, _tokens, _events = create_record(
        [{"name": "a"}, {"name": "b"}, {"name": "c"}], None, "classic", {}, "arr", True
    )

    spared = 0
    version = 1
    while record.state is not None and record.state.round is not None and version < 400:
        seat = play_turn(record)
        version += 1
        move_texts(record, version, seat)  # what a move answers: the mover's view
        doc, results = record.to_bytes(), record.results_json()
        rows = orjson.loads(doc)["arr"]
        if record.state.round is None:
            assert rows == []
            break
        for s, index, ids, _arrangement in rows:
            assert index == record.state.round.index
            assert list(ids_of_chars(ids)) == sorted(c.id for c in record.state.round.hands[s])
        saved = {row[0] for row in rows}
        assert saved == {0, 1, 2}  # every seat's hand, the movers' and the others
        fresh = GameRecord.from_bytes(doc, results)
        fresh.arrangements.clear()
        expected = {s: orjson.dumps(game_views.view(fresh, version, s)) for s in range(3)}
        loaded = GameRecord.loaded(doc, results)
        for s in range(3):
            before = solves()
            assert orjson.dumps(game_views.view(loaded, version, s)) == expected[s]
            if s in saved:
                assert solves() == before, "a stored arrangement was solved again"
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
