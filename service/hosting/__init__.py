"""The hosting layer: games as the service hosts them, between the engine and the API.

No Flask and no Redis here.  The API loads a :class:`~service.hosting.record.GameRecord`
from the store, calls one operation of this package, and saves the record and the
events it returns.

* :mod:`~service.hosting.record` -- the game record: seats, engine state, timers'
  deadline, and the operations every move goes through;
* :mod:`~service.hosting.document` -- its stored document format and the texts of
  the views saved beside it;
* :mod:`~service.hosting.game_views` -- the public view and the seats' views of a record;
* :mod:`~service.hosting.seating` -- a new game, joining, and claiming a rematch seat;
* :mod:`~service.hosting.timers` -- turn timers and autopilot seats;
* :mod:`~service.hosting.bot_turns` -- the bots' turns after a move;
* :mod:`~service.hosting.replays` -- rematches, and the replays that prove the deals;
* :mod:`~service.hosting.tokens` -- bearer tokens, game ids, client seeds;
* :mod:`~service.hosting.game_webhooks` -- a game's webhook and what its events send;
* :mod:`~service.hosting.refusals` -- the requests it refuses (answered 409);
* :mod:`~service.hosting.verify` -- the ``three-thirteen-verify`` command.
"""
