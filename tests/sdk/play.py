"""Plays round 1 of a two-player game with the generated Python client, as an
integrator would, in AUTH_MODE=apps: the app's backend creates the game for two of
its players and mints their tokens, each player plays with its own; every move
taken from the view's legal_moves and posted back unchanged, the events read
through their typed fields, a stale If-Match answered with a typed 412 problem.
Checked with ``mypy --strict``; run as ``python play.py BASE_URL APP_KEY``."""

from __future__ import annotations

import sys

from three_thirteen_client import AuthenticatedClient
from three_thirteen_client.api.games import (
    create_game,
    get_game,
    get_player_view,
    list_events,
    make_move,
)
from three_thirteen_client.api.players import list_my_games, mint_player_token
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
    MyGamesOut,
    PlayerIn,
    PlayerTokenIn,
    PlayerTokenOut,
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


def main(base: str, app_key: str) -> None:
    """AUTH_MODE=apps: the app's backend (``app_key``) creates the game for its
    players u1 and u2 and mints a token for each; each player finds the game
    through ``listMyGames`` and plays with its own token."""
    backend = AuthenticatedClient(base_url=base, token=app_key)
    players = [PlayerIn(name="ann", player_id="u1"), PlayerIn(name="bob", player_id="u2")]
    created = create_game.sync(client=backend, body=CreateGameIn(players=players))
    if not isinstance(created, CreateGameOut):
        raise SystemExit(f"create: {created}")
    check(created.status == GameStatus.PLAYING, "both seats taken: the game plays")
    game_id = created.id
    seats: dict[int, AuthenticatedClient] = {}
    for player in created.players:
        check(isinstance(player.token, Unset), "a player's seat has no token of its own")
        check(isinstance(player.player_id, str), "the seat is the player's")
        if isinstance(player.player_id, str):
            minted = mint_player_token.sync(
                player.player_id, client=backend, body=PlayerTokenIn(name=player.name)
            )
            if not isinstance(minted, PlayerTokenOut):
                raise SystemExit(f"mint: {minted}")
            device = AuthenticatedClient(base_url=base, token=minted.token)
            mine = list_my_games.sync(client=device)
            if not isinstance(mine, MyGamesOut):
                raise SystemExit(f"my games: {mine}")
            found = [game.seat for game in mine.games if game.id == game_id]
            check(found == [player.seat], "the player's games show its seat")
            seats[player.seat] = device
    check(sorted(seats) == [0, 1], "two players' seats")

    def view_of(seat: int) -> PlayerView:
        view = get_player_view.sync(game_id, client=seats[seat])
        if not isinstance(view, PlayerView):
            raise SystemExit(f"view: {view}")
        return view

    draws = 0
    stale_checked = False
    for _turn in range(200):
        game = get_game.sync(game_id, client=backend)  # the app reads its game
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
    main(sys.argv[1], sys.argv[2])
