"""Stream tickets in Redis: what a ticket stands for (a seat, as held by a token),
for a while (issued by the stream-tickets route, opened by ``api/following.py``).

Mixed into :class:`~service.store.game_store.GameStore`, which gives the client
and the confirmed writes (``REDIS_WAIT_*``, :mod:`service.store.durability`).
Redis keeps a hash of each ticket (:func:`service.store.keys.ticket_key`), never
the ticket.
"""

from __future__ import annotations

import orjson

from service.store import keys
from service.store.durability import Command
from service.store.failures import translate_errors
from service.store.redis_client import RedisClient


class TicketStore:
    """The stream tickets of a game store."""

    @property
    def client(self) -> RedisClient:
        """The store's client (given by the store)."""
        raise NotImplementedError

    def _confirmed(self, game_id: str, command: Command) -> bool:
        """Send ``command`` confirmed, if the store's durability asks (given by the store)."""
        raise NotImplementedError

    def issue_ticket(
        self, game_id: str, ticket: str, seat: int, holder: str, ttl_seconds: int
    ) -> None:
        """Remember that ``ticket`` stands for ``seat`` of ``game_id`` as held by the
        token whose hash is ``holder``, for ``ttl_seconds`` (Redis keeps a hash of the
        ticket, never the ticket)."""
        value = orjson.dumps({"v": 1, "seat": seat, "holder": holder})
        command = ("SET", keys.ticket_key(game_id, ticket), value, "EX", ttl_seconds)
        if self._confirmed(game_id, command):
            return
        with translate_errors():
            self.client.set(keys.ticket_key(game_id, ticket), value, ex=ttl_seconds)

    def open_ticket(self, game_id: str, ticket: str, ttl_seconds: int) -> tuple[int, str] | None:
        """``(seat, holder)`` of ``ticket`` in ``game_id``, its life renewed to
        ``ttl_seconds``; None if it is unknown or expired."""
        with translate_errors():
            value = self.client.getex(keys.ticket_key(game_id, ticket), ex=ttl_seconds)
        if value is None:
            return None
        data = orjson.loads(value)
        if not isinstance(data, dict):  # a bare seat number, as tickets were: no holder to check
            return None
        return int(data["seat"]), str(data["holder"])

    def renew_ticket(self, game_id: str, ticket: str, ttl_seconds: int) -> None:
        """Renew ``ticket``'s life to ``ttl_seconds`` (if it is still there)."""
        with translate_errors():
            self.client.expire(keys.ticket_key(game_id, ticket), ttl_seconds)

    def void_ticket(self, game_id: str, ticket: str) -> None:
        """Forget ``ticket``."""
        with translate_errors():
            self.client.delete(keys.ticket_key(game_id, ticket))
