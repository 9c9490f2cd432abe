"""``GET /api/v1/ha`` (the Replicas page): the pair's overview, or ``enabled: false`` without one."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.testclient import TestClient

from inferwatch.server.api import ha_routes


def test_without_a_pair_the_view_says_so_and_with_one_it_is_the_replicas_overview() -> None:
    # rule: Prometheus's envelope either way; the page reads `enabled` before anything else
    with TestClient(Starlette(routes=ha_routes(None))) as c:
        assert c.get("/api/v1/ha").json() == {"status": "success", "data": {"enabled": False}}
    overview = {"enabled": True, "replica": "b", "replicas": []}
    with TestClient(Starlette(routes=ha_routes(lambda: overview))) as c:
        assert c.get("/api/v1/ha").json()["data"] == overview
        assert c.post("/api/v1/ha").status_code == 405
