"""`inferwatch serve` as a subprocess: kill -9 with notifications pending, and an alert storm.

The receiver is a loopback fake of a webhook endpoint that counts what it accepted.
Every wait is on a line of the server, a request at the fake or a bounded HTTP call.
"""

from __future__ import annotations

import sqlite3
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.server._proc import start_serve
from tests.server._webhook import Webhook, post_alerts, stop_serve

from alerting.fakes import FakeService, Reply, Request

pytestmark = pytest.mark.slow
TOKEN = "t0ken-for-tests"
BOUND_S = 60.0


@pytest.fixture
def webhook() -> Iterator[Webhook]:
    w = Webhook(up=False)
    yield w
    w.stop()


def _config(tmp_path: Path, url: str, group_wait: str = "1s") -> Path:
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text(f"""
server: {{data_dir: '{tmp_path / "data"}', api_token: {TOKEN}}}
rules: {{default_pack: false}}
alerting:
  default_actions: false
  route: {{receiver: hook, group_by: [alertname, service], group_wait: {group_wait}, group_interval: 1h}}
  receivers: [{{name: hook, type: webhook, url: '{url}', max_attempts: 20}}]
  notify: {{initial_backoff: 1s, max_backoff: 2s, jitter: 0}}
""")
    return cfg


def _stop(proc: subprocess.Popen[str]) -> str:
    """SIGTERM, then the rest of its stderr."""
    return stop_serve(proc)[1]


def _sent(url: str, n: int) -> bool:
    """Wait (bounded) until the server has recorded ``n`` sent notifications (its own answer)."""
    end = time.monotonic() + BOUND_S
    with httpx.Client(timeout=BOUND_S) as c:
        while time.monotonic() < end:
            records = c.get(f"{url}/api/v1/notifications").json()
            if sum(r["status"] == "sent" for r in records) >= n:
                return True
    return False


def _post(url: str, alerts: list[dict[str, object]], client: httpx.Client | None = None) -> httpx.Response:
    return post_alerts(url, alerts, TOKEN, client)


def _alert(name: str, service: str, instance: str) -> dict[str, object]:
    return {"status": "firing", "labels": {"alertname": name, "service": service, "instance": instance,
                                           "severity": "warning", "tier": "P2", "dimension": "service"},
            "annotations": {"summary": name}}


def test_kill_9_with_notifications_pending_delivers_each_exactly_once_after_restart(
        tmp_path: Path, webhook: Webhook) -> None:
    # rule: pending sends (retries) are in the outbox on disk: after kill -9 and a restart each
    # group is delivered once, with the idempotency key its failed attempts carried
    cfg = _config(tmp_path, webhook.url)
    proc, url = start_serve(cfg)
    try:
        alerts = [_alert(f"Pending{k}", "svc", "i1") for k in range(3)]
        assert _post(url, alerts).status_code == 200
        # every group failed at least once: each is now waiting for its retry
        assert webhook.wait(lambda: len({b["groupKey"] for b in webhook.refused}) == 3)
    finally:
        proc.kill()  # kill -9
        proc.communicate(timeout=BOUND_S)
    keys_before = {str(b["groupKey"]): str(b["notificationID"]) for b in webhook.refused}
    webhook.up = True
    proc, url = start_serve(cfg)
    try:
        assert webhook.wait(lambda: len(webhook.accepted) >= 3)
        assert _sent(url, 3)  # recorded: the notification log is written
    finally:
        err = _stop(proc)
    assert "Traceback" not in err, err
    per_group = Counter(str(b["groupKey"]) for b in webhook.accepted)
    assert sorted(per_group.values()) == [1, 1, 1] and set(per_group) == set(keys_before)
    assert {str(b["groupKey"]): str(b["notificationID"]) for b in webhook.accepted} == keys_before
    with sqlite3.connect(tmp_path / "data" / "alerting.sqlite") as db:
        (owed,) = db.execute("SELECT count(*) FROM outbox").fetchone()
        # the hook's groups only: three failures in a row also raise NotificationsFailing, which goes to
        # the fallback receiver ('terminal') and is logged there when the server got to it before the kill
        (logged,) = db.execute("SELECT count(*) FROM nflog WHERE receiver = 'hook'").fetchone()
    assert owed == 0 and logged == 3  # nothing is owed any more: nothing can be sent again


def test_a_storm_of_10000_warnings_is_accepted_in_seconds_and_notified_as_100_groups(
        tmp_path: Path, webhook: Webhook) -> None:
    # rule: inhibition sources are indexed by their `equal` labels, so a storm of warnings
    # (targets of the default critical->warning rule) costs O(alerts), not O(alerts^2)
    webhook.up = True
    proc, url = start_serve(_config(tmp_path, webhook.url, group_wait="20s"))  # all in before the flush
    try:
        alerts = [_alert(f"Storm{k}", f"svc{i % 10}", f"10.0.{i // 250}.{i % 250}:9000")
                  for k in range(10) for i in range(1000)]
        with httpx.Client(timeout=BOUND_S) as client:  # one connection, as Alertmanager keeps
            t0 = time.monotonic()
            for j in range(0, len(alerts), 100):
                r = _post(url, alerts[j:j + 100], client)
                assert r.status_code == 200 and r.json()["alerts"] == 100
            accepted_s = time.monotonic() - t0
        print(f"storm: 100 POSTs of 100 alerts accepted in {accepted_s:.2f}s")
        assert webhook.wait(lambda: sum(len(b["alerts"]) for b in webhook.accepted) >= 10_000)  # type: ignore[arg-type,misc]
    finally:
        err = _stop(proc)
    assert "Traceback" not in err, err
    assert accepted_s < 20, f"100 POSTs took {accepted_s:.1f}s"
    assert len(webhook.accepted) == 100
    assert len({b["groupKey"] for b in webhook.accepted}) == 100


class Hanging:
    """A webhook endpoint that accepts each request and answers only when released (or after 30 s)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.got: list[tuple[float, dict[str, object]]] = []
        self.cond = threading.Condition()
        self.service = FakeService(self._handle).start()
        self.url = f"{self.service.url}/hook"

    def _handle(self, req: Request) -> Reply:
        with self.cond:
            self.got.append((time.monotonic(), req.json()))
            self.cond.notify_all()
        self.release.wait(30)
        return 200, {}, b""

    def wait(self, n: int) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: len(self.got) >= n, BOUND_S)


def _evaluations(url: str) -> float:
    text = httpx.get(f"{url}/metrics", timeout=BOUND_S).text
    (line,) = [x for x in text.splitlines() if x.startswith("inferwatch_rule_evaluations_total ")]
    return float(line.split()[1])


def test_a_hanging_receiver_stops_neither_evaluation_nor_the_other_receiver(
        tmp_path: Path, webhook: Webhook) -> None:
    # rule: the hanging receiver's attempt times out (attempt_timeout 2s) and is retried after
    # the backoff (1s) with the same idempotency key; meanwhile rounds run every second and
    # the healthy receiver is notified at once
    webhook.up = True
    stuck = Hanging()
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text(f"""
server: {{data_dir: '{tmp_path / "data"}', api_token: {TOKEN}, evaluation_interval: 1s}}
alerting:
  default_actions: false
  route: {{receiver: hook, group_wait: 0s, group_interval: 1h, routes: [
    {{receiver: stuck, continue: true}}, {{receiver: hook}}]}}
  receivers: [{{name: hook, type: webhook, url: '{webhook.url}'}},
              {{name: stuck, type: webhook, url: '{stuck.url}', max_attempts: 5}}]
  notify: {{initial_backoff: 1s, jitter: 0, attempt_timeout: 2s}}
""")
    proc, url = start_serve(cfg)
    try:
        t0 = time.monotonic()
        assert _post(url, [_alert("Slow", "svc", "i1")]).status_code == 200
        assert time.monotonic() - t0 < 5  # the webhook API does not wait for any receiver
        assert webhook.wait(lambda: len(webhook.accepted) == 1)
        first = _evaluations(url)
        assert stuck.wait(2)  # the first attempt timed out and was retried
        # rounds go on while 'stuck' still hangs (it is released below): about one a second, fewer
        # on a loaded runner, so wait for two more, bounded by time
        end = time.monotonic() + BOUND_S
        while (second := _evaluations(url)) < first + 2 and time.monotonic() < end:
            pass  # each look is a round trip to the server: its evaluation thread runs meanwhile
        (t1, b1), (t2, b2) = stuck.got[:2]
    finally:
        stuck.release.set()
        err = _stop(proc)
        stuck.service.stop()
    assert "Traceback" not in err, err
    assert t2 - t1 >= 3.0 - 0.5  # timeout 2 s + backoff 1 s (less the fake's and the clock's slack)
    assert b1["notificationID"] == b2["notificationID"]
    assert second - first >= 2  # rounds went on, about one a second, while 'stuck' hung


def test_kill_9_with_a_send_in_flight_sends_it_at_most_once_more_with_the_same_key(
        tmp_path: Path) -> None:
    # rule: at least once: a send in flight at the crash is repeated after the restart, once,
    # with the idempotency key of the lost attempt, so the receiver can drop the repeat
    stuck = Hanging()
    try:
        cfg = _config(tmp_path, stuck.url)
        proc, url = start_serve(cfg)
        try:
            assert _post(url, [_alert("InFlight", "svc", "i1")]).status_code == 200
            assert stuck.wait(1)  # the request is at the receiver, unanswered
        finally:
            proc.kill()  # kill -9
            proc.communicate(timeout=BOUND_S)
        stuck.release.set()  # from now on it answers at once
        proc, url = start_serve(cfg)
        try:
            assert stuck.wait(2)
            assert _sent(url, 1)
        finally:
            err = _stop(proc)
    finally:
        stuck.service.stop()
    assert "Traceback" not in err, err
    assert len(stuck.got) == 2
    (_, b1), (_, b2) = stuck.got
    assert b1["notificationID"] == b2["notificationID"] and b1["groupKey"] == b2["groupKey"]
    with sqlite3.connect(tmp_path / "data" / "alerting.sqlite") as db:
        (owed,) = db.execute("SELECT count(*) FROM outbox").fetchone()
    assert owed == 0
