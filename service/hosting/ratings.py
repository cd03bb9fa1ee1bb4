"""Players' ratings: what a player's rating is, and how it is read.

An app's player (a seat bound to the app's ``player_id``: :mod:`service.hosting.players`)
has one rating per *pool*: a ruleset (``classic``, ``finnish``, ``party``; option
overrides do not make another pool) and a table size (2 to 8 seats).  A rating is
openskill's Bayesian estimate of the player's skill: ``mu``, the mean, and ``sigma``,
its uncertainty, with the number of rated games; its displayed value is openskill's
*ordinal* ``mu - 3 sigma`` -- a value the player's skill exceeds with about 99.9%
confidence, so it rises as the player's games make the estimate surer.  A player's
first rating in a pool is :data:`DEFAULT` (displayed 0).

How finished games move them is :mod:`service.hosting.rating_updates`'s; the ratings
are kept in the player's own slot (:mod:`service.store.ratings`), forever.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from service.engine import MAX_PLAYERS, MIN_PLAYERS
from service.engine.options import PRESETS
from service.hosting.players import PLAYER_ID_PATTERN, player_tag
from service.hosting.tokens import is_app_id
from service.store import GameStore
from service.store.ratings import StoredRating, pool_name

DEFAULT_MU = 25.0
"""openskill's default mean: a new player's (and the ``basic`` bot's)."""

DEFAULT_SIGMA = 25.0 / 3
"""openskill's default uncertainty: a new player's."""

_PLAYER_ID = re.compile(PLAYER_ID_PATTERN)


class RatingQueryError(ValueError):
    """A rating asked for with a ruleset, table size, app or player id that none has."""


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's rating in one pool: ``mu`` (the estimate of its skill), ``sigma``
    (its uncertainty) and the ``games`` rated.

    >>> Rating(25.0, 25.0 / 3, 0).displayed
    0.0
    >>> round(Rating(30.0, 2.0, 12).displayed, 6)
    24.0
    """

    mu: float
    sigma: float
    games: int

    @property
    def displayed(self) -> float:
        """The value shown to players and ranked by: openskill's ordinal, ``mu - 3 sigma``."""
        return self.mu - 3 * self.sigma


DEFAULT = Rating(DEFAULT_MU, DEFAULT_SIGMA, 0)
"""A player's rating before its first rated game of a pool."""


@dataclass(frozen=True, slots=True)
class PoolRating:
    """A player's rating in the pool of ``ruleset`` and ``table_size``."""

    ruleset: str
    table_size: int
    rating: Rating


def check_pool(ruleset: str, table_size: int) -> str:
    """The pool's name (:func:`~service.store.ratings.pool_name`), or
    :class:`RatingQueryError` for a ruleset or a table size no game has.

    >>> check_pool("classic", 2)
    'classic:2'
    >>> check_pool("classic", 9)
    Traceback (most recent call last):
    ...
    service.hosting.ratings.RatingQueryError: a table has 2 to 8 seats, not 9
    """
    if ruleset not in PRESETS:
        raise RatingQueryError(f"unknown ruleset {ruleset!r}: one of {', '.join(PRESETS)}")
    if isinstance(table_size, bool) or not MIN_PLAYERS <= table_size <= MAX_PLAYERS:
        raise RatingQueryError(
            f"a table has {MIN_PLAYERS} to {MAX_PLAYERS} seats, not {table_size!r}"
        )
    return pool_name(ruleset, table_size)


def rating_tag(app_id: str, player_id: str) -> str:
    """The tag of the player's keys (:func:`~service.hosting.players.player_tag`), or
    :class:`RatingQueryError` for an app or player id that none has."""
    if not is_app_id(app_id):
        raise RatingQueryError(f"not an app's id: {app_id!r}")
    if not isinstance(player_id, str) or _PLAYER_ID.fullmatch(player_id) is None:
        raise RatingQueryError(f"a player id matches {PLAYER_ID_PATTERN}")
    return player_tag(app_id, player_id)


def from_stored(stored: StoredRating) -> Rating:
    """The rating of a pool's stored fields (none: :data:`DEFAULT`)."""
    if stored.mu is None or stored.sigma is None:
        return DEFAULT
    return Rating(stored.mu, stored.sigma, stored.games)


def current_rating(
    store: GameStore, app_id: str, ruleset: str, table_size: int, player_id: str
) -> Rating:
    """``player_id``'s rating (of ``app_id``) in the pool of ``ruleset`` and
    ``table_size``: :data:`DEFAULT` before its first rated game there.  One read;
    :class:`RatingQueryError` for a ruleset, size, app or player id no game has."""
    pool = check_pool(ruleset, table_size)
    return from_stored(store.ratings.read(rating_tag(app_id, player_id), pool))


def ratings_of(store: GameStore, app_id: str, player_id: str) -> list[PoolRating]:
    """Every rating ``player_id`` (of ``app_id``) has, by ruleset then table size:
    only the pools it played a rated game in.  One read; :class:`RatingQueryError`
    for an app or player id none has."""
    out = []
    for pool, stored in store.ratings.read_all(rating_tag(app_id, player_id)).items():
        ruleset, _, size = pool.rpartition(":")
        if ruleset in PRESETS and size.isdigit() and stored.mu is not None:
            out.append(PoolRating(ruleset, int(size), from_stored(stored)))
    return sorted(out, key=lambda p: (p.ruleset, p.table_size))


def listed_ratings(
    store: GameStore,
    app_id: str,
    player_id: str,
    ruleset: str | None = None,
    table_size: int | None = None,
) -> list[PoolRating]:
    """:func:`ratings_of`, only those of ``ruleset`` and/or ``table_size`` when given;
    with both, the one rating of that pool (:data:`DEFAULT` before its first game)."""
    if ruleset is not None and table_size is not None:
        rating = current_rating(store, app_id, ruleset, table_size, player_id)
        return [PoolRating(ruleset, table_size, rating)]
    return [
        pool
        for pool in ratings_of(store, app_id, player_id)
        if ruleset in (None, pool.ruleset) and table_size in (None, pool.table_size)
    ]
