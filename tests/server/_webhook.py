"""A webhook receiver on loopback for the ``serve`` stories, and how they post alerts and stop serve.

One copy for the stories that count what reached a webhook: the alert storm and kill -9
(tests/alerting/test_serve_delivery.py), SIGTERM mid-storm (tests/server/test_shutdown.py)
and the full disk (tests/server/test_storage_failing.py); and ``serve_p0``, the one serve
story the chat channels' fakes are checked through.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from alerting.fakes import FakeService, Reply, Request

BOUND_S = 60.0


def _instance(alert: dict[str, Any]) -> str:
    return str(alert["labels"].get("instance", ""))


class Webhook:
    """An Alertmanager-style webhook endpoint: up (200) or down (503), ``delay`` seconds a request.

    Keeps every body it accepted (``accepted``, with the wall time each came in ``times``) or
    refused, and counts the alerts it accepted by ``key`` (their ``instance`` label by default).
    """

    def __init__(self, *, up: bool = True, delay: float = 0.0,
                 key: Callable[[dict[str, Any]], str] | None = None) -> None:
        self.up, self.delay, self._key = up, delay, key or _instance
        self.accepted: list[dict[str, Any]] = []
        self.times: list[float] = []
        self.refused: list[dict[str, Any]] = []
        self.counts: Counter[str] = Counter()
        self.cond = threading.Condition()
        self.service = FakeService(self._handle).start()
        self.url = f"{self.service.url}/hook"

    def _handle(self, req: Request) -> Reply:
        body = req.json()
        assert req.method == "POST" and body["version"] == "4" and body["alerts"]
        if self.delay:
            time.sleep(self.delay)  # the slow receiver under test, not a synchronisation
        with self.cond:
            if self.up:
                self.accepted.append(body)
                self.times.append(time.time())
                self.counts.update(self._key(a) for a in body["alerts"])
            else:
                self.refused.append(body)
            self.cond.notify_all()
        return (200, {}, b"") if self.up else (503, {}, b"down")

    def wait(self, pred: Callable[[], bool], within: float = BOUND_S) -> bool:
        """Wait until ``pred()`` holds (checked at each request), at most ``within`` seconds."""
        with self.cond:
            return self.cond.wait_for(pred, within)

    def stop(self) -> None:
        """Stop the endpoint."""
        self.service.stop()


def post_alerts(url: str, alerts: list[dict[str, object]], token: str,
                client: httpx.Client | None = None) -> httpx.Response:
    """POST ``alerts`` to serve's Alertmanager-webhook endpoint, as an Alertmanager would."""
    c = client or httpx.Client(timeout=BOUND_S)
    try:
        return c.post(f"{url}/api/v1/alertmanager", json={"version": "4", "alerts": alerts},
                      headers={"Authorization": f"Bearer {token}"})
    finally:
        if client is None:
            c.close()


P0_FIRING: dict[str, object] = {
    "status": "firing", "startsAt": "2026-12-04T01:00:00Z",
    "labels": {"alertname": "ServiceUnavailable", "service": "ranker", "tier": "P0"}}


def serve_p0(tmp_path: Path, receivers: list[str], got: list[threading.Event], token: str) -> str:
    """Run serve routing everything to each of ``receivers`` (YAML flow mappings named ``r0``, ``r1``...),
    post one P0, wait (bounded) until every event of ``got`` is set; return serve's stderr."""
    from tests.server._proc import start_serve

    routes = ", ".join(f"{{receiver: r{i}, continue: true}}" for i in range(len(receivers)))
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text(f"""
server: {{data_dir: '{tmp_path / "data"}', api_token: {token}}}
rules: {{default_pack: false}}
alerting:
  default_actions: false
  route: {{receiver: r0, group_wait: 0s, routes: [{routes}]}}
  receivers: [{", ".join(receivers)}]
""")
    proc, url = start_serve(cfg)
    try:
        assert post_alerts(url, [P0_FIRING], token).status_code == 200
        missed = [i for i, e in enumerate(got) if not e.wait(BOUND_S)]
        assert not missed, f"receivers {missed}' fakes got nothing"
    finally:
        err = stop_serve(proc)[1]
    return err


def stop_serve(proc: subprocess.Popen[str], sig: signal.Signals = signal.SIGTERM) -> tuple[int, str, float]:
    """Send ``sig`` (SIGKILL after BOUND_S); return the exit code, stderr and the seconds it took."""
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return proc.returncode, err, time.monotonic() - t0
