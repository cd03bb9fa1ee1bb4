"""The route table (service.api.routes) is the one declaration of the endpoints:
Flask serves exactly its routes, and each rate limit it declares is counted, on
either path (Flask's, the fast lane's), before anything else of the request."""

from __future__ import annotations

import pytest

from service.api.limits import Rate
from service.api.routes import ROUTES
from tests.api.conftest import make_app

LIMITED = [(route, method, limited) for route in ROUTES for method, limited in route.limits.items()]

ONE_PER_HOUR = {
    rate.setting.upper(): "1/hour"
    for rate in Rate
    if rate is not Rate.AUTH_FAILURES  # the bogus token's 401s: not what refuses here
}


def test_flask_serves_the_route_table_and_nothing_else(redis_url):
    app = make_app(redis_url)
    served = {
        (rule.endpoint, rule.rule, method)
        for rule in app.url_map.iter_rules()
        if rule.endpoint.split(".")[0] not in ("docs", "static")
        for method in rule.methods or ()
        if method not in ("HEAD", "OPTIONS")
    }
    declared = {
        (route.endpoint, route.template, method) for route in ROUTES for method in route.methods
    } - {(route.endpoint, route.template, m) for route in ROUTES for m in ("HEAD", "OPTIONS")}
    assert served == declared


@pytest.mark.parametrize("lane", ["true", "false"])
@pytest.mark.parametrize(
    ("route", "method", "limited"),
    LIMITED,
    ids=[f"{method} {route.template}" for route, method, _ in LIMITED],
)
def test_each_declared_limit_is_counted_before_the_request_is_read(
    redis_client, redis_url, lane, route, method, limited
):
    app = make_app(redis_url, RATE_LIMITS="true", FAST_LANE=lane, **ONE_PER_HOUR)
    client = app.test_client()
    path = route.template.replace("<game_id:game_id>", "unknown-game")
    path = path.replace("<player_id:player_id>", "some-player")
    # an address of its own: the limits of the other cases are counted apart
    environ = {"REMOTE_ADDR": f"10.0.{len(LIMITED)}.{LIMITED.index((route, method, limited))}"}
    headers = {"Authorization": "Bearer some-token", "Content-Type": "application/json"}
    first = client.open(path, method=method, data=b"{}", headers=headers, environ_base=environ)
    assert first.status_code != 429, first.get_json()
    second = client.open(path, method=method, data=b"{}", headers=headers, environ_base=environ)
    assert second.status_code == 429, (second.status_code, second.get_json())
    assert second.get_json()["code"] == "RATE_LIMITED"
    label = limited.rate.label
    assert second.get_json()["detail"].startswith(
        f"rate limit exceeded ({label + ': ' if label else ''}1 per 1 hour)"
    )
    assert "Retry-After" in second.headers
