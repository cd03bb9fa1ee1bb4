"""WSGI entry point for gunicorn: ``service.wsgi:app``.

On the embedded store (no ``REDIS_URL``: ``make run``) the webhook delivery worker
and the bot worker run here too, in threads of this process: no other process can
read that store.  With a Redis, each runs as a process of its own
(``three-thirteen-webhooks``, ``three-thirteen-bots``)."""

from service.app import create_app
from service.botplay.worker import BotWorker
from service.webhooks.worker import DeliveryWorker

app = create_app()

_services = app.extensions["t13"]
if _services.config.embedded_store:
    DeliveryWorker(_services.store.client, _services.config, sweeps=False).start()
    BotWorker(_services.store, _services.config, sweeps=False).start()
