"""The hosting layer: games as the service hosts them, between the engine and the API.

Plain Python: no Flask, no HTTP, and Redis only through the store, which every
function that reads or writes games takes as a parameter (with the
:class:`~service.config.Config` it needs), never from a request.  The API calls it
with the app's store; a worker, a command or a test can call it the same way.

The game record and its operations (no store):

* :mod:`~service.hosting.record` -- the game record: seats, engine state, timers'
  deadline, and the operations every move goes through;
* :mod:`~service.hosting.document` -- its stored document format and the texts of
  the views saved beside it;
* :mod:`~service.hosting.game_views` -- the public view and the seats' views of a record;
* :mod:`~service.hosting.seating` -- a new game, joining, and claiming a rematch seat;
* :mod:`~service.hosting.lobby_operations` -- leaving, renaming, resigning; a table's
  timers, what quick-join matches, the lobby's summary of a game;
* :mod:`~service.hosting.timers` -- turn timers and autopilot seats;
* :mod:`~service.hosting.bot_turns` -- the bots' turns, a bounded stretch a call;
* :mod:`~service.hosting.replays` -- rematches, and the replays that prove the deals;
* :mod:`~service.hosting.tokens` -- bearer tokens, game ids, client seeds;
* :mod:`~service.hosting.game_webhooks` -- a game's webhook: URL, events, secret;
* :mod:`~service.hosting.addresses` -- which addresses a webhook may reach;
* :mod:`~service.hosting.refusals` -- the requests it refuses, each with a stable code.

Over a store:

* :mod:`~service.hosting.write_loop` -- the one optimistic write loop of every change;
* :mod:`~service.hosting.due_turns` -- a due turn (bots', a timer's) played by a bot
  worker, a write of its own;
* :mod:`~service.hosting.game_creation` -- a new game, its seats held, its first write;
* :mod:`~service.hosting.fair_play` -- rematches started, replays built once and saved;
* :mod:`~service.hosting.snapshots` -- what a write saves beside the document;
* :mod:`~service.hosting.webhook_deliveries` -- what a write sends to the game's webhook;
* :mod:`~service.hosting.saved_answers` -- idempotency: answers saved and replayed
  (tokens masked by :mod:`~service.hosting.token_masking`);
* :mod:`~service.hosting.lobby_listing` -- the lobby's index kept in step, and its pages;
* :mod:`~service.hosting.matchmaking` -- quick-join;
* :mod:`~service.hosting.lobby_caps` -- the seats and listed games an address may hold;
* :mod:`~service.hosting.verify` -- the ``three-thirteen-verify`` command.
"""
