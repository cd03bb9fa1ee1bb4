"""How a finished game moves its players' ratings, exactly once.

**The model.** openskill's Plackett--Luce model (:data:`MODEL`): it rates a
free-for-all of 2 to 8 seats from their order (with ties) in one update, as a
Bayesian estimate per player (``mu``, ``sigma``: see :mod:`service.hosting.ratings`)
-- no pairwise Elo approximations, and a new player's rating moves fast while an
established one moves little.  It is maintained (openskill 6, typed, compiled
wheels), and fast: an 8-seat game is rated in about 0.05 ms, a 2-seat one in 0.02 ms.

**The order.** The lowest game total wins; equal totals share a rank.  A seat
whose player resigned is ranked below every seat that did not, whatever its total
(a bot played it out); resigned seats tie among themselves.  A seat on autopilot is
its player's: ranked by its total.

**The participants.** Every seat takes part, so a win against strong opposition
counts more, but only an app's players' ratings are changed:

* a player's seat (bound to the app's ``player_id``): its rating in the game's pool,
  read when the game is archived, and updated;
* a bot's seat: a fixed anchor per level (:data:`BOT_ANCHORS`), never updated;
* a seat token's seat (a human without a ``player_id``): an unknown of the
  default rating, never stored (nobody to store it for).

A game of no app (open mode) has no players and is not rated; nor is a cancelled
or aborted game (never archived), nor an unfinished one.

**Exactly once.** The changes are computed once, when the game is archived
(:func:`rate_game`), and written in the archive (written once: the first
computation stands, whoever archives again); each player's change is then applied
by :meth:`~service.store.ratings.PlayerRatings.apply`, one script in the player's
own slot that records the game id with the change and changes nothing for a game
it recorded (:func:`apply_ratings`).  A change is applied as a delta (``mu`` moves by
the computed change; ``sigma`` becomes the computed one, or is scaled by its ratio
if another game changed it meanwhile), so a rating another game updated since the
archive was computed keeps that game's change too.  With ``REDIS_WAIT_REPLICAS`` or
``REDIS_WAIT_AOF``, each change is confirmed before the next step (and so before the
finished game's entry is removed); without, a failover may lose a change made after
the entry went: that player's rating then misses the game (never counts it twice).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openskill.models import PlackettLuce

from service.hosting.players import player_tag
from service.hosting.ratings import (
    DEFAULT,
    DEFAULT_MU,
    DEFAULT_SIGMA,
    Rating,
    check_pool,
    from_stored,
)
from service.hosting.record import GameRecord
from service.hosting.tokens import PLAYER_HOLDER_PREFIX, app_of_game
from service.store import GameStore

MODEL = PlackettLuce(mu=DEFAULT_MU, sigma=DEFAULT_SIGMA)
"""openskill's Plackett--Luce model, with its defaults (beta = 25/6, tau = 25/300)."""

ANCHOR_SIGMA = 1.0
"""The uncertainty of every bot's anchor: small, a bot's strength is known."""

BOT_ANCHORS: dict[str, tuple[float, float]] = {
    "random": (0.0, ANCHOR_SIGMA),
    "basic": (DEFAULT_MU, ANCHOR_SIGMA),
    "strong": (27.5, ANCHOR_SIGMA),
    "expert": (28.25, ANCHOR_SIGMA),
}
"""Each bot level's fixed rating (mu, sigma).  ``basic`` is a new player's mean; the
others are placed so that the model's chance of one level finishing ahead of another
at a 2-seat table (``MODEL.predict_win``) is what ``make bench-bots`` measured
(docs/PERFORMANCE.md): strong ahead of basic 65% (the model: 66%), expert ahead of
strong 55% (55%), expert ahead of basic 70% (70%), basic ahead of random 100%
(99.998%)."""

PLAYER, BOT, ANONYMOUS = "player", "bot", "anonymous"
"""What a seat is to the ratings (field ``kind`` of an archive's ratings)."""


@dataclass(frozen=True, slots=True)
class AppliedRating:
    """A player's rating in a game's pool once the game's change is applied (by this
    call, ``applied``, or by an earlier run of the archiving step)."""

    app_id: str
    player_id: str
    ruleset: str
    table_size: int
    rating: Rating
    applied: bool


def ranks(totals: list[int], resigned: list[bool]) -> list[int]:
    """Each seat's rank (1 best): by total, lowest first, equal totals sharing a rank;
    every resigned seat after all others, sharing the last rank.

    >>> ranks([40, 12, 40, 7], [False, False, False, False])
    [3, 2, 3, 1]
    >>> ranks([5, 30, 30], [True, False, False])
    [3, 1, 1]
    """
    playing = sorted(t for t, r in zip(totals, resigned, strict=True) if not r)
    last = len(playing) + 1
    return [
        last if r else 1 + sum(1 for other in playing if other < t)
        for t, r in zip(totals, resigned, strict=True)
    ]


def seat_kind(record: GameRecord, seat: int) -> str:
    """What seat ``seat`` of ``record`` is to the ratings: :data:`PLAYER`,
    :data:`BOT` or :data:`ANONYMOUS`."""
    info = record.seats[seat]
    holder = info.token_hash
    if holder is not None and holder.startswith(PLAYER_HOLDER_PREFIX) and info.player_id:
        return PLAYER
    if holder is None and info.bot in BOT_ANCHORS:
        return BOT
    return ANONYMOUS


def rate_game(store: GameStore, record: GameRecord) -> dict[str, Any] | None:
    """The ratings' part of ``record``'s archive, computed from its players' ratings
    now: None when the game is not rated (not finished, of no app, no player seat).

    ``{"ruleset", "table_size", "seats": [{"kind", "rank", "mu", "sigma",
    "mu_after", "sigma_after"}, ...]}``, one entry per seat; ``*_after`` only for a
    player's seat (the others are not updated)."""
    app_id = app_of_game(record.id)
    state = record.state
    if app_id is None or state is None or record.status != "finished":
        return None
    size = len(record.seats)
    pool = check_pool(record.ruleset, size)
    kinds = [seat_kind(record, i) for i in range(size)]
    if PLAYER not in kinds:
        return None
    order = ranks(list(state.totals), [s.resigned for s in record.seats])
    before = []
    for seat, kind in zip(record.seats, kinds, strict=True):
        if kind == PLAYER:
            now = from_stored(store.ratings.read(player_tag(app_id, seat.player_id or ""), pool))
            before.append((now.mu, now.sigma))
        elif kind == BOT:
            before.append(BOT_ANCHORS[seat.bot or "basic"])
        else:
            before.append((DEFAULT.mu, DEFAULT.sigma))
    teams = [[MODEL.rating(mu=mu, sigma=sigma)] for mu, sigma in before]
    after = MODEL.rate(teams, ranks=[float(r) for r in order])
    seats = []
    for i, kind in enumerate(kinds):
        entry: dict[str, Any] = {
            "kind": kind,
            "rank": order[i],
            "mu": before[i][0],
            "sigma": before[i][1],
        }
        if kind == PLAYER:
            entry["mu_after"] = after[i][0].mu
            entry["sigma_after"] = after[i][0].sigma
        seats.append(entry)
    return {"ruleset": record.ruleset, "table_size": size, "seats": seats}


def apply_ratings(store: GameStore, archive: dict[str, Any]) -> list[AppliedRating]:
    """Apply the changes ``archive`` records to its players' ratings, each once
    whatever runs before or after (see the module's docstring): every rated player's
    rating after the game.  With durability on, returns once each change is
    confirmed (:class:`~service.store.store_errors.NotDurable` otherwise: run it again)."""
    rated = archive.get("ratings")
    app_id = app_of_game(archive["id"])
    if not rated or app_id is None:
        return []
    ruleset, size = rated["ruleset"], rated["table_size"]
    pool = check_pool(ruleset, size)
    out = []
    for seat, change in zip(archive["seats"], rated["seats"], strict=True):
        if change["kind"] != PLAYER or not seat["player_id"]:
            continue
        done = store.ratings.apply(
            player_tag(app_id, seat["player_id"]),
            archive["id"],
            pool,
            mu_change=change["mu_after"] - change["mu"],
            sigma_before=change["sigma"],
            sigma_after=change["sigma_after"],
            default=(DEFAULT.mu, DEFAULT.sigma),
        )
        rating = Rating(done.mu, done.sigma, done.games)
        out.append(AppliedRating(app_id, seat["player_id"], ruleset, size, rating, done.applied))
    return out


def seat_change(archive: dict[str, Any], seat: int) -> dict[str, float] | None:
    """The displayed rating of ``seat``'s player before and after the game
    (``{"before", "after"}``), as the archive computed it; None for a seat not rated."""
    rated = archive.get("ratings")
    if not rated:
        return None
    change = rated["seats"][seat]
    if change["kind"] != PLAYER:
        return None
    return {
        "before": Rating(change["mu"], change["sigma"], 0).displayed,
        "after": Rating(change["mu_after"], change["sigma_after"], 0).displayed,
    }
