"""Plays round 1 of a two-player game with the generated Python client, as an
integrator would: every move taken from the view's legal_moves and posted back
unchanged, the events read through their typed fields, a stale If-Match
answered with a typed 412 problem.  Checked with ``mypy --strict``; run as
``python play.py BASE_URL``."""

from __future__ import annotations

import sys

from three_thirteen_client import AuthenticatedClient, Client
from three_thirteen_client.api.games import (
    create_game,
    get_game,
    get_player_view,
    list_events,
    make_move,
)
from three_thirteen_client.models import (
    CreateGameIn,
    CreateGameOut,
    DealtEvent,
    DiscardMove,
    DrawMove,
    DrawSource,
    DrewEvent,
    EventsOut,
    GameStatus,
    GameView,
    GoOutMove,
    PlayerIn,
    PlayerView,
    Problem,
    ProblemCode,
    RoundEndedEvent,
)
from three_thirteen_client.types import Unset

Move = DrawMove | DiscardMove | GoOutMove


def check(condition: bool, message: str) -> None:
    if not condition:
        raise SystemExit(message)


def choose(view: PlayerView) -> Move:
    """Go out when a legal move does; else draw from the stock; else discard the
    costliest card of the deadwood (the last), else the first legal discard."""
    moves = view.legal_moves
    deadwood = view.arrangement.deadwood if view.arrangement is not None else []
    worst = deadwood[-1] if deadwood else None
    go_out = [m for m in moves if isinstance(m, GoOutMove)]
    draw = [m for m in moves if isinstance(m, DrawMove) and m.source == DrawSource.STOCK]
    discards = [m for m in moves if isinstance(m, DiscardMove)]
    discard = [m for m in discards if m.card == worst] + discards
    chosen = (go_out + draw + discard)[:1]
    check(len(chosen) == 1, "no legal move")
    return chosen[0]


def main(base: str) -> None:
    anyone = Client(base_url=base)
    created = create_game.sync(
        client=anyone, body=CreateGameIn(players=[PlayerIn(name="ann"), PlayerIn(name="bob")])
    )
    if not isinstance(created, CreateGameOut):
        raise SystemExit(f"create: {created}")
    check(created.status == GameStatus.PLAYING, "both seats taken: the game plays")
    seats: dict[int, AuthenticatedClient] = {}
    for player in created.players:
        check(player.bot is None, "two human seats")
        if isinstance(player.token, str):
            seats[player.seat] = AuthenticatedClient(base_url=base, token=player.token)
    game_id = created.id

    def view_of(seat: int) -> PlayerView:
        view = get_player_view.sync(game_id, client=seats[seat])
        if not isinstance(view, PlayerView):
            raise SystemExit(f"view: {view}")
        return view

    draws = 0
    stale_checked = False
    for _turn in range(200):
        game = get_game.sync(game_id, client=anyone)
        if not isinstance(game, GameView):
            raise SystemExit(f"game: {game}")
        if game.round_ is None or game.round_.number > 1:
            break  # round 1 is over
        seat = game.round_.turn
        view = view_of(seat)
        move = choose(view)
        if not stale_checked:
            stale = make_move.sync_detailed(
                game_id, client=seats[seat], body=move, if_match=f'"{view.version - 1}"'
            )
            check(stale.status_code == 412, "a stale If-Match is refused")
            problem = stale.parsed
            check(isinstance(problem, Problem), "with a problem")
            if isinstance(problem, Problem):
                check(problem.code == ProblemCode.PRECONDITION_FAILED, "with its code")
                check(problem.current_version == view.version, "and the current version")
            stale_checked = True
        played = make_move.sync_detailed(
            game_id, client=seats[seat], body=move, if_match=f'"{view.version}"'
        )
        answer = played.parsed
        if not isinstance(answer, PlayerView):
            raise SystemExit(f"move {move.to_dict()}: {answer}")
        check(answer.version == view.version + 1, "a move makes a version")
        check(
            played.headers["ETag"].startswith(f'"{answer.version}.'),
            "the ETag names the version (and the last event)",
        )
        if isinstance(move, DrawMove):
            draws += 1

    events = list_events.sync(game_id, client=seats[0], after="0")
    if not isinstance(events, EventsOut):
        raise SystemExit(f"events: {events}")
    public_draws = 0
    first_hand: int | None = None
    round_ended = False
    for event in events.events:
        if isinstance(event, DealtEvent):
            check(event.seat == 0 and event.private, "only seat 0's own hand")
            first_hand = len(event.hand) if first_hand is None else first_hand
        elif isinstance(event, DrewEvent) and event.private is not True:
            public_draws += 1
            check(event.source == DrawSource.STOCK, "every draw is from the stock")
            check(isinstance(event.card, Unset), "a card drawn from the stock stays hidden")
        elif isinstance(event, RoundEndedEvent) and not round_ended:
            round_ended = True
            scores = [hand.points for hand in event.result.hands]
            check(event.result.number == 1, "round 1 ended")
            check(event.totals == scores, "after round 1 the totals are its scores")
    check(first_hand == 3, "round 1 deals three cards")
    check(public_draws == draws, "every draw is an event")
    check(round_ended, "round 1 ended")
    print(f"played round 1 of {game_id}: {draws} draws, {events.last_seq} events")


if __name__ == "__main__":
    main(sys.argv[1])
