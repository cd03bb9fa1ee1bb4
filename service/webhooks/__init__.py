"""Delivering webhooks: the worker that takes queued deliveries from the outboxes
(:mod:`service.store.outbox`), signs them (:mod:`~service.webhooks.signing`), checks
where they go (:mod:`~service.webhooks.guard`), sends them
(:mod:`~service.webhooks.sender`) and settles each attempt
(:mod:`~service.webhooks.worker`).  ``three-thirteen-webhooks`` runs one
(:mod:`~service.webhooks.__main__`); ``make run`` runs one inside the server, on the
embedded store.  The design is in ``docs/WEBHOOKS.md``."""
