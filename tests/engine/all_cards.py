"""Every card once: the 52 and the joker, in id order."""

from __future__ import annotations

from service.engine import Card

ALL_CARDS = [Card.from_id(i) for i in range(53)]
