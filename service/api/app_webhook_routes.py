"""An app's webhook over HTTP, for its backend (its secret key): the delivery log of
the lifecycle of its games, and a delivery sent again.  The webhook itself is set by
the operator (``three-thirteen-admin apps webhook``, :mod:`service.hosting.app_webhooks`).
Who may call each is the route table's (:mod:`service.api.access`); in open mode they
answer 404."""

from __future__ import annotations

from flask import Response
from flask.views import MethodView

from service.api.auth import principal
from service.api.blueprint import Blueprint, document_errors
from service.api.context import call, store
from service.api.problems import ApiError
from service.api.responses import json_response
from service.api.schemas.app_webhook_schemas import AppDeliveriesOut, RedeliveredOut
from service.hosting import app_webhooks, apps
from service.hosting.apps import App

blp = Blueprint(
    "app_webhook",
    __name__,
    url_prefix="/v1/app/webhook",
    description="Apps mode: the deliveries of an app's webhook (its backend)",
)

APP_KEY: list[dict[str, list[str]]] = [{"appKey": []}]

ERRORS_APP = {
    401: "Missing, unknown, revoked or expired credential",
    403: "Not an app's secret key",
}


def _app() -> App:
    """The app of the request's key, read afresh (its webhook as it is now); 404 in
    open mode."""
    found = principal() if call().services.apps is not None else None
    if found is None or found.app is None:
        raise ApiError("NOT_FOUND", "apps exist in apps mode only (AUTH_MODE=apps)")
    return apps.load(store().apps, found.app)


class AppDeliveries(MethodView):
    @blp.doc(operationId="getAppWebhookDeliveries", security=APP_KEY)
    @blp.response(200, AppDeliveriesOut)
    @document_errors(
        blp, {**ERRORS_APP, 404: "Not in apps mode"}, "INVALID_CREDENTIAL", "NOT_FOUND"
    )
    def get(self) -> Response:
        """The app's webhook deliveries

        Where the lifecycle of the app's games is delivered (set by the operator),
        and the last 200 attempts, oldest first: each with the delivery's id, event,
        game and seq, the attempt's number, time and outcome (`delivered`,
        `retrying`, `failed`), the receiver's status or the error.
        """
        return json_response(app_webhooks.delivery_log(store().app_hooks, _app()))


class Redeliver(MethodView):
    @blp.doc(operationId="redeliverAppWebhookDelivery", security=APP_KEY)
    @blp.response(202, RedeliveredOut)
    @document_errors(
        blp,
        {**ERRORS_APP, 404: "No webhook, no such delivery among the last 200 attempts"},
        "INVALID_CREDENTIAL",
        "WEBHOOK_NOT_FOUND",
        "DELIVERY_NOT_FOUND",
    )
    def post(self, delivery_id: str) -> Response:
        """Send a delivery again

        Queues the delivery (one of the log's) again, with the same id and body, to
        the webhook as it is now: retried as a new delivery is, and logged anew.
        """
        app = _app()
        game_id = app_webhooks.redeliver(store().app_hooks, app, delivery_id)
        return json_response({"delivery_id": delivery_id, "game_id": game_id}, 202)
