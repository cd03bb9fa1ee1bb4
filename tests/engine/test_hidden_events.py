"""Public events never name a card that is hidden: any card still secret (in a
hand, not shown by the move, or in the stock) appears only in events private to
its holder.  Checked on every event type and every reason text the engine
writes, in seeded games across the options, with invalid go-out claims that list
their melds (whose refusal once quoted the claimed cards to everyone)."""

from __future__ import annotations

import random
import re
from typing import Any

import orjson
import pytest

from service.engine import (
    Discard,
    Draw,
    Event,
    Game,
    GoOut,
    Move,
    Options,
    Source,
    State,
    legal_moves,
)
from tests.engine.saved import copy_of

CARD = re.compile(r"\b(?:10|[2-9AJQK])[CDHS]\b")

GAMES: list[tuple[int, dict[str, Any]]] = [
    (2, {"false_go_out_penalty": 20, "max_turns_per_round": 30}),
    (3, {"false_go_out_penalty": 20, "lay_off": True, "max_turns_per_round": 30}),
    (2, {"false_go_out_penalty": 20, "jokers_per_deck": 2, "all_wild_melds": True}),
    (4, {"lay_off": True, "aces": "high_or_low", "max_turns_per_round": 24}),
    (2, {"max_wilds_per_meld": 1, "extra_rounds": 2, "max_turns_per_round": 20}),
]


def mentioned(event: Event) -> set[str]:
    """Every card code written anywhere in an event: its fields and its texts."""
    return set(CARD.findall(orjson.dumps(event.to_dict()).decode()))


def secret_cards(before: State, shown: set[str]) -> set[str]:
    """Codes that no public record shows: held or in the stock, not on the discard
    pile, not taken from it into a hand this round."""
    rnd = before.round
    assert rnd is not None
    held = {c.code for hand in rnd.hands for c in hand} | {c.code for c in rnd.stock}
    return held - {c.code for c in rnd.discard} - shown


def check(events: list[Event], before: State, shown: set[str], revealed: set[str]):
    """No public event up to the round's scoring (which reveals every hand) names a
    secret card, except those the move itself lays face up (``revealed``)."""
    secret = secret_cards(before, shown) - revealed
    for event in events:
        if event.type in ("round_scored", "round_ended"):
            return
        if event.is_public:
            leaked = mentioned(event) & secret
            assert not leaked, f"public {event.type} names hidden {sorted(leaked)}: {event.data}"


def wrong_claim(hand: list[Any], rng: random.Random) -> GoOut:
    """A claim to go out listing melds of the hand's own cards, most likely invalid."""
    cards = list(hand)
    rng.shuffle(cards)
    discard, rest = cards[0], cards[1:]
    melds = tuple(tuple(rest[i : i + 3]) for i in range(0, len(rest) - len(rest) % 3, 3))
    if len(rest) % 3:
        melds = (*melds[:-1], melds[-1] + tuple(rest[len(rest) - len(rest) % 3 :]))
    return GoOut(discard, melds)


def choose(state: State, seat: int, rng: random.Random) -> Move:
    legal = legal_moves(state, seat)
    outs = [m for m in legal if isinstance(m, GoOut)]
    if outs and rng.random() < 0.7:
        return rng.choice(outs)
    return rng.choice(legal)


@pytest.mark.parametrize(("players", "opts"), GAMES)
def test_public_events_name_no_hidden_card(players: int, opts: dict[str, Any]) -> None:
    rng = random.Random(f"{players}{sorted(opts.items())}")
    state, _events = State.start(
        Game(players, Options.from_dict(opts)), f"{rng.getrandbits(256):064x}"
    )
    shown: set[str] = set()
    claims = 0
    while state.round is not None:
        rnd, seat = state.round, state.round.turn
        before = copy_of(state)
        if rnd.phase.value == "discard" and len(rnd.hands[seat]) >= 4:
            trial = copy_of(before)
            try:
                events = trial.apply(seat, wrong_claim(rnd.hands[seat], rng))
            except Exception:  # refused outright (no penalty option), or a valid claim's error
                events = []
            if any(e.type == "go_out_refused" for e in events):
                claims += 1
                check(events, before, shown, revealed=set())
        move = choose(state, seat, rng)
        revealed: set[str] = set()
        final_turn = rnd.went_out is not None  # the hand is laid down (lay_off) and scored
        if isinstance(move, Discard) and not final_turn:
            revealed = {move.card.code}
        elif isinstance(move, GoOut | Discard):
            revealed = {c.code for c in rnd.hands[seat]}
        elif isinstance(move, Draw) and move.source is Source.DISCARD:
            shown.add(rnd.discard[-1].code)
        index = rnd.index
        events = state.apply(seat, move)
        check(events, before, shown, revealed)
        if state.round is None or state.round.index != index:
            shown = set()
    assert state.winners
    if opts.get("false_go_out_penalty"):
        assert claims > 0, "no refused claim was checked"
