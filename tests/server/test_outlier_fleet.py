"""Issue 55, end to end: a real ``serve`` scraping five real replica processes.

One replica slows: one notification, naming it, with its peers' values. Then every replica
slows together: the first alert resolves and nothing else pages (no member is far from the
group's median).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.alerting.fakes import FakeService, webhook_handler
from tests.server._proc import serve, wait_query

APP = Path(__file__).with_name("fleet_app.py")
HEALTHY = (0.20, 0.21, 0.19, 0.22, 0.20)


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[list[tuple[str, Path]]]:
    procs, members = [], []
    try:
        for i, v in enumerate(HEALTHY):
            control = tmp_path / f"replica{i}.txt"
            control.write_text(str(v))
            p = subprocess.Popen([sys.executable, str(APP), str(control)], stdout=subprocess.PIPE, text=True)
            procs.append(p)
            assert p.stdout is not None
            members.append((f"127.0.0.1:{int(p.stdout.readline())}", control))
        yield members
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=30)
            if p.stdout is not None:
                p.stdout.close()


def _config(members: list[tuple[str, Path]], hook: str, data: Path) -> str:
    targets = ", ".join(f"{{job: replica, url: 'http://{m}/metrics', interval: 1s}}" for m, _ in members)
    return (f"server: {{data_dir: '{data}', evaluation_interval: 1s}}\n"
            f"scrape: {{targets: [{targets}]}}\n"
            "rules:\n  default_pack: false\n  rules:\n"
            "    - name: ReplicaSlow\n      dimension: service\n      tier: P1\n"
            "      outlier: {expr: app_p99_seconds, peers_by: [model], member: instance, tolerance: 3,\n"
            "                min_deviation: 0.1, direction: above}\n"
            "      for: 3s\n"
            "      annotations: {peers: '{{ $peers }}', median: '{{ $median }}'}\n"
            "alerting:\n"
            "  route: {receiver: hook, group_by: [alertname, instance], group_wait: 0s, group_interval: 1s}\n"
            f"  receivers: [{{name: hook, type: webhook, url: '{hook}/hook'}}]\n")


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
        fleet: list[tuple[str, Path]], tmp_path: Path) -> None:
    hook = FakeService(webhook_handler()).start()
    try:
        with serve(_config(fleet, hook.url, tmp_path / "data"), tmp_path) as served, \
                httpx.Client(base_url=served.url, timeout=30) as client:
            wait_query(client, "count(app_p99_seconds) == 5")
            slow, control = fleet[2]
            control.write_text("0.9")
            got = _wait(hook, lambda a: any(x["status"] == "firing" for x in a))
            firing = [a for a in got if a["status"] == "firing"]
            assert {a["labels"]["instance"] for a in firing} == {slow}  # type: ignore[index]
            peers = firing[0]["annotations"]["peers"]  # type: ignore[index]
            assert slow not in peers and all(m in peers for m, _ in fleet if m != slow)
            assert firing[0]["annotations"]["median"] == "0.21"  # type: ignore[index]

            for _, c in fleet:  # the whole fleet slows together
                c.write_text("0.9")
            _wait(hook, lambda a: any(x["status"] == "resolved" for x in a))
            # six seconds of every replica slow (twice `for`) have been scraped and evaluated
            wait_query(client, "count(min_over_time(app_p99_seconds[6s]) > 0.5) == 5")
            wait_query(client, "count(count_over_time(app_p99_seconds[6s]) >= 5) == 5")
            active = client.get("/api/v1/alerts").json()["data"]["alerts"]
            assert active == []
            assert {a["labels"]["instance"] for a in _alerts(hook)} == {slow}  # type: ignore[index]
    finally:
        hook.stop()
