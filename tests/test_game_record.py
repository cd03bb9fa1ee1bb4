"""GameRecord.view_json: the one-pass texts a move saves and answers are exactly
the public view and the seat's view, at every stage of a game."""

from __future__ import annotations

import orjson

from service.engine.moves import Draw, Source
from service.engine.state import Phase
from service.fairplay import automatic_finish
from service.games import GameRecord, create_record


def assert_texts_match(record: GameRecord, version: int) -> None:
    for seat in range(len(record.seats)):
        public, text = record.view_json(version, seat)
        assert public == orjson.dumps(record.view(version))
        assert text == orjson.dumps(record.view(version, seat))
        view = orjson.loads(text)
        private = ("seat", "hand", "legal_moves", "arrangement")
        assert {k: v for k, v in view.items() if k not in private} == orjson.loads(public)
        assert view["seat"] == seat


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
        seat = record.state.round.turn
        if record.state.round.phase is Phase.DRAW:
            record.play(seat, Draw(Source.STOCK))
        else:
            record.play(seat, automatic_finish(record.state, seat))
        version += 1
    assert record.status == "finished"
    assert_texts_match(record, version)
