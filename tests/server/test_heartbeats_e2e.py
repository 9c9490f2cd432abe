"""Issue 48 #5: two sites watch each other. Site A's Watchdog reaches site B every interval
(B is A's dead man's switch, ``heartbeats:``); kill -9 A and B pages once, through its own
receivers. Two real ``inferwatch serve`` processes at ``--speed 60`` (1 m is a real second).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from tests.alerting.fakes import FakeService, webhook_handler

from probe._app import free_port
from server._proc import serve

SPEED = 60.0
TOKEN_B = "site-b-write-token"


def _site_a(tmp_path: Path, b_url: str) -> str:
    return f"""
server: {{data_dir: '{tmp_path / "a" / "data"}', api_token: site-a-token}}
storage: {{type: memory}}
alerting:
  heartbeat: {{kind: webhook, url: '{b_url}/api/v1/heartbeats/site-a', interval: 1m}}  # key: from the env
"""


def _site_b(tmp_path: Path, hook: str) -> str:
    return f"""
server: {{data_dir: '{tmp_path / "b" / "data"}', api_token: {TOKEN_B}}}
storage: {{type: memory}}
heartbeats:
  - {{name: site-a, expect_every: 1m, missing_after: 5m}}
alerting:
  receivers:
    - {{name: phone, type: webhook, url: '{hook}/phone'}}
    - {{name: wecom, type: webhook, url: '{hook}/wecom'}}
"""


def _heartbeat(client: httpx.Client) -> dict[str, object]:
    (state,) = client.get("/api/v1/heartbeats").json()["data"]
    return dict(state)


def _pages(hook: FakeService) -> list[tuple[str, str, str]]:
    return [(r.path, a["status"], a["labels"]["alertname"]) for r in list(hook.requests)
            for a in json.loads(r.body)["alerts"]]


def _until(what: str, cond: object, within_s: float = 60.0) -> None:
    end = time.monotonic() + within_s
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < end, f"{what} within {within_s:g} s"
        time.sleep(0.1)  # pacing the poll; the condition is the servers' state


@pytest.mark.slow
def test_site_b_hears_site_a_every_interval_and_pages_once_when_it_dies(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INFERWATCH_HEARTBEAT_KEY", TOKEN_B)  # site A's key (B's token), as a secret
    for site in ("a", "b"):
        (tmp_path / site).mkdir()
    hook = FakeService(webhook_handler()).start()
    b_port = free_port()
    b_url = f"http://127.0.0.1:{b_port}"
    try:
        # A first (its first sends fail until B listens), so B's grace never runs out at the start
        with serve(_site_a(tmp_path, b_url), tmp_path / "a", "--speed", f"{SPEED:g}") as a, \
                serve(_site_b(tmp_path, hook.url), tmp_path / "b", "--speed", f"{SPEED:g}",
                      "--listen", f"127.0.0.1:{b_port}") as b, \
                httpx.Client(base_url=b.url, timeout=30) as client:
            t0 = time.monotonic()
            _until("a heartbeat", lambda: int(_heartbeat(client)["received"]) >= 2)  # type: ignore[call-overload]
            print(f"first heartbeats after {time.monotonic() - t0:.1f} s")
            first = _heartbeat(client)
            _until("six more", lambda: int(_heartbeat(client)["received"]) >= int(first["received"]) + 6)  # type: ignore[call-overload]
            later = _heartbeat(client)
            got = int(later["received"]) - int(first["received"])  # type: ignore[call-overload]
            span = float(later["last_received"]) - float(first["last_received"])  # type: ignore[arg-type]
            # on every 1m interval, in B's compressed time (a real second is a minute: over six, the
            # arrival of the first and the last may each be a second late on a loaded machine)
            assert 40 <= span / got <= 100, (span, got)
            assert _pages(hook) == [] and not later["missing"]
            a.proc.kill()  # kill -9: no goodbye
            a.proc.wait(30)
            _until("HeartbeatMissing paged", lambda: _pages(hook))
            at_page = _heartbeat(client)
            print(f"paged after {time.monotonic() - t0:.1f} s")
            quiet_until = time.monotonic() + 3 * 60 / SPEED  # three more minutes of B's time
            while time.monotonic() < quiet_until:
                time.sleep(0.2)  # B keeps checking; nothing more may arrive
            metrics = client.get("/metrics").text
            assert _heartbeat(client)["received"] == at_page["received"]  # the Watchdogs stopped with A
    finally:
        hook.stop()
    assert _pages(hook) == [("/phone", "firing", "HeartbeatMissing")]  # P0, once
    body = json.loads(hook.requests[0].body)
    assert body["alerts"][0]["labels"]["heartbeat"] == "site-a"
    assert "the last arrived" in body["alerts"][0]["annotations"]["description"]
    assert 'inferwatch_heartbeats_received_total{heartbeat="site-a"}' in metrics
    assert not any("site-b-write-token" in line for line in a.lines + b.lines)  # the key is never logged
