"""The game's only source of randomness: a seeded, replayable shuffler.

Every random choice (first dealer, each round's shoe, each reshuffle of the
discards) is derived from the game's secret seed and a label naming the
choice, via HMAC-SHA256.  The same seed therefore replays the same game, and
publishing ``commitment(seed)`` at creation lets anyone check, once the seed is
revealed, that the deals were fixed in advance.

>>> s = Shuffler.from_hex("00" * 32)
>>> s.choice_index("dealer", 4) == Shuffler.from_hex("00" * 32).choice_index("dealer", 4)
True
>>> s.shuffled(list(range(5)), "round", 1) == s.shuffled(list(range(5)), "round", 1)
True
>>> len(commitment("00" * 32))
64
"""

from __future__ import annotations

import hashlib
import hmac
import random
import secrets
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from service.engine.errors import MalformedError

T = TypeVar("T")
SEED_BYTES = 32


def new_seed() -> str:
    """A fresh secret seed (256 bits, hex)."""
    return secrets.token_hex(SEED_BYTES)


@lru_cache(maxsize=4096)
def seed_from_client(seed: str | int) -> str:
    """A client-chosen seed (any string or number) as a hex seed: a seeded game
    (and the simulator) starts from it, so the same client seed replays the same game.

    >>> seed_from_client(7) == seed_from_client("7") != seed_from_client(8)
    True
    """
    return hashlib.sha256(str(seed).encode()).hexdigest()


def commitment(seed_hex: str) -> str:
    """The public SHA-256 commitment to a seed (hex of the hash of its bytes).

    Memoized: every view of a game shows it."""
    return hashlib.sha256(bytes.fromhex(seed_hex)).hexdigest()


@dataclass(frozen=True, slots=True)
class Shuffler:
    """Deterministic randomness keyed by a secret seed."""

    seed: bytes

    @classmethod
    def from_hex(cls, seed_hex: str) -> Shuffler:
        try:
            seed = bytes.fromhex(seed_hex)
        except (ValueError, TypeError):
            raise MalformedError("seed must be hex", field="seed") from None
        if not seed:
            raise MalformedError("seed must not be empty", field="seed")
        return cls(seed)

    def rng(self, label: str, *parts: int) -> random.Random:
        """An RNG for one labelled choice, e.g. ``rng("round", 3)``."""
        message = ":".join([label, *map(str, parts)]).encode()
        digest = hmac.new(self.seed, message, hashlib.sha256).digest()
        return random.Random(int.from_bytes(digest, "big"))

    def shuffled(self, items: list[T], label: str, *parts: int) -> list[T]:
        """A shuffled copy of ``items``."""
        out = list(items)
        self.rng(label, *parts).shuffle(out)
        return out

    def choice_index(self, label: str, n: int) -> int:
        """A number in ``range(n)``."""
        return self.rng(label).randrange(n)
