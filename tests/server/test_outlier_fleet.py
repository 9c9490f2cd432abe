"""Issue 55, end to end: a real ``serve`` scraping five real replica processes.

One replica slows: one notification, naming it, with its peers' values. Then every replica
slows together: the first alert resolves and nothing else pages (no member is far from the
group's median).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from tests.alerting.fakes import FakeService, webhook_handler
from tests.server._fleet import fleet, fleet_config  # noqa: F401 - the fixture
from tests.server._proc import serve, wait_query


def _alerts(hook: FakeService) -> list[dict[str, object]]:
    return [a for req in list(hook.requests) for a in json.loads(req.body)["alerts"]]


def _wait(hook: FakeService, cond: object, within_s: float = 60.0) -> list[dict[str, object]]:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        got = _alerts(hook)
        if cond(got):  # type: ignore[operator]
            return got
        hook.got.wait(1)
        hook.got.clear()
    raise AssertionError(f"condition not met within {within_s:g} s; got {_alerts(hook)}")


@pytest.mark.slow
def test_one_slow_replica_pages_once_naming_it_and_a_fleet_slowing_together_does_not(
        fleet: list[tuple[str, Path]], tmp_path: Path) -> None:  # noqa: F811
    hook = FakeService(webhook_handler()).start()
    try:
        with serve(fleet_config(fleet, hook.url, tmp_path / "data", step_rule=True), tmp_path) as served, \
                httpx.Client(base_url=served.url, timeout=30) as client:
            # a few seconds of every member first: ReplicaStep judges a step against the member's own
            # level before it, and a member slow from its first evaluated sample has no such level (on
            # a quiet machine the step could land before the first round, and ReplicaStep never fired)
            wait_query(client, "count(count_over_time(app_p99_seconds[1m]) >= 6) == 5")
            slow, control = fleet[2]
            control.write_text("0.9")
            got = _wait(hook, lambda a: {x["labels"]["alertname"] for x in a if x["status"] == "firing"}
                        == {"ReplicaSlow", "ReplicaStep"})
            assert {a["labels"]["instance"] for a in got} == {slow}  # type: ignore[index]
            # ReplicaStep: the same replica, paged by its step away from the peers (`change:`)
            firing = [a for a in got if a["status"] == "firing" and a["labels"]["alertname"] == "ReplicaSlow"]
            peers = firing[0]["annotations"]["peers"]  # type: ignore[index]
            assert slow not in peers and all(m in peers for m, _ in fleet if m != slow)
            assert firing[0]["annotations"]["median"] == "0.21"  # type: ignore[index]
            # the notification links to the dashboard's view of the group, the API shows it
            assert firing[0]["generatorURL"].endswith("/#/peers?rule=ReplicaSlow")  # type: ignore[index]
            assert firing[0]["annotations"]["peers_url"] == firing[0]["generatorURL"]  # type: ignore[index]
            rules = client.get("/api/v1/rules").json()["data"]["groups"][0]["rules"]
            assert [r["name"] for r in rules] == ["ReplicaSlow", "ReplicaStep"]
            (group,) = rules[0]["outlier"]["groups"]
            assert group["labels"] == {"model": "ranker"} and group["judged"] is True
            assert {m["member"]: m["outlier"] for m in group["members"]} == {m: m == slow for m, _ in fleet}

            for _, c in fleet:  # the whole fleet slows together
                c.write_text("0.9")
            _wait(hook, lambda a: any(x["status"] == "resolved" for x in a))
            # 20 seconds of every replica slow (twice `for`; a late scrape while they slow one by one
            # is shorter than `for`) have been scraped and evaluated
            wait_query(client, "count(min_over_time(app_p99_seconds[20s]) > 0.5) == 5")
            wait_query(client, "count(count_over_time(app_p99_seconds[20s]) >= 15) == 5")
            active = client.get("/api/v1/alerts").json()["data"]["alerts"]
            assert active == []
            assert {a["labels"]["instance"] for a in _alerts(hook)} == {slow}  # type: ignore[index]
    finally:
        hook.stop()
