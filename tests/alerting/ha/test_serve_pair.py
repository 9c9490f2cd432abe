"""Two real ``inferwatch serve`` over one real PostgreSQL: the HA pair's story, end to end.

At the issue's scale on one compressed clock (``--speed 10``, both given the same ``--start`` and
``--start-anchor``): the default 15 s lease, escalation steps at 0, 1 and 2 minutes. A starts
first and takes the sender's lease, B follows; the P0 alerts reach both (as a Prometheus pair
sends to both Alertmanagers). A silence made on A mutes on B; an acknowledgement through B stops
the escalation A runs; ``amtool cluster show`` lists both; delayed labels posted to either are
polled from both and a device uploading to A is known to B; then, one minute into the escalation,
A is killed with SIGKILL and B continues A's escalation from the shared state: the next step on
time, nothing lost, at most one duplicate. Receivers are a loopback webhook fake; every wait is
on a request at the fake or a bounded poll of the servers' own answers.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx
import pytest
from tests._postgres import PostgresCluster
from tests._require import require_tool
from tests.server._proc import start_serve

from alerting.fakes import Reply, Request
from alerting.ha.conftest import poll
from alerting.test_serve_oncall import BOUND_S, Hooks, _stop
from inferwatch.edge import Batch, encode_batch
from inferwatch.model import Labels, Sample

pytestmark = pytest.mark.slow
TOKEN = "t0ken-for-ha-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SPEED, LEASE_S, STEP_S, EVAL_S = 10, 15.0, 60.0, 10.0  # seconds of the servers' clock
SLACK_S = 8 * SPEED  # 8 real seconds of a loaded machine, on top of the lease and a round
DEVICE_TOKEN = "cam-1-t0ken"


def _config(tmp_path: Path, name: str, db: str, hooks: str, beats: str) -> Path:
    cfg = tmp_path / f"{name}.yml"
    cfg.write_text(f"""
server: {{data_dir: '{tmp_path / name}', api_token: {TOKEN}, evaluation_interval: {EVAL_S:g}s}}
ha: {{database: '{db}', replica: {name}, lease: {LEASE_S:g}s}}
edge: {{devices: {{cam-1: {DEVICE_TOKEN}}}}}
rules: {{default_pack: false}}
alerting:
  default_actions: false
  heartbeat: {{kind: webhook, url: '{beats}/watchdog', interval: 30s}}
  receivers:
    - {{name: first, type: webhook, url: '{hooks}/first'}}
    - {{name: second, type: webhook, url: '{hooks}/second'}}
    - {{name: third, type: webhook, url: '{hooks}/third'}}
  escalations:
    - name: p0
      steps: [{{after: 0s, notify: [first]}}, {{after: {STEP_S:g}s, notify: [second]}},
              {{after: {2 * STEP_S:g}s, notify: [third]}}]
  route: {{receiver: first, group_by: [alertname], group_wait: 0s, group_interval: 1h, escalation: p0}}
""")
    return cfg


class TimedHooks(Hooks):
    """The fake webhook, with when each request came."""

    def __init__(self) -> None:
        self.at: list[float] = []
        super().__init__()

    def _handle(self, req: Request) -> Reply:
        self.at.append(time.monotonic())
        return super()._handle(req)

    def when(self, path: str, name: str, step: int) -> list[float]:
        with self.cond:
            return [t for t, (p, b) in zip(self.at, self.got, strict=True)
                    if p == path and b["groupLabels"]["alertname"] == name
                    and b.get("escalation", {}).get("step") == step]


def _senders(got: list[tuple[str, dict[str, object]]]) -> set[str]:
    """The replicas whose Watchdog reached the heartbeat service."""
    return {a["labels"]["replica"] for p, b in got if p == "/watchdog"
            for a in b["alerts"]}  # type: ignore[attr-defined,index]


def _shares_outcomes_and_devices(c: httpx.Client, url_a: str, url_b: str, t0: float) -> None:
    """Delayed labels posted to either replica are polled from both, in one sequence; a device that
    uploads to A is known to B (its last contact), so B's fleet alerting goes on after a failover."""
    for url, rid in ((url_a, "r-a"), (url_b, "r-b")):
        r = c.post(f"{url}/api/v1/outcomes", headers=AUTH,
                   json={"outcomes": [{"request_id": rid, "label": 1}]})
        assert r.status_code == 200, r.text
    for url in (url_a, url_b):
        got = c.get(f"{url}/api/v1/outcomes", params={"after": 0}).json()["data"]
        assert [(o["seq"], o["request_id"]) for o in got["outcomes"]] == [(1, "r-a"), (2, "r-b")], got
    batch = encode_batch(Batch("cam-1", "s:1-1", (Sample(Labels.of("cam_temp"), t0, 41.0),), 300.0))
    r = c.post(f"{url_a}/api/v1/edge/ingest", content=batch,
               headers={"Authorization": f"Bearer {DEVICE_TOKEN}", "Content-Encoding": "gzip"})
    assert r.status_code == 200, r.text
    fleet = lambda url: c.get(f"{url}/api/v1/edge/fleet").json()["data"]["rows"]  # noqa: E731
    (heard,) = fleet(url_a)
    assert poll(lambda: fleet(url_b)[0]["last_contact"] == heard["last_contact"]), fleet(url_b)


def test_the_pair_shares_silences_acks_and_takes_over_after_kill_9(
        tmp_path: Path, postgres: PostgresCluster) -> None:
    amtool = require_tool("amtool")
    db = postgres.new_database()
    hooks, beats = TimedHooks(), TimedHooks()  # the alerts' receivers; the dead man's switch service
    t0 = f"{time.time():.3f}"  # one compressed clock for both: the same start, read at the same real time
    clock = ("--speed", str(SPEED), "--start", t0, "--start-anchor", t0)
    a, url_a = start_serve(_config(tmp_path, "a", db, hooks.url, beats.url), *clock)
    b = None
    try:
        with httpx.Client(timeout=BOUND_S) as c:
            status = lambda url: c.get(f"{url}/api/v2/status").json()["cluster"]  # noqa: E731
            assert poll(lambda: status(url_a)["peers"])  # A holds the lease before B starts
            # a silence made on A, before anything fires: in force on B
            sil = c.post(f"{url_a}/api/v2/silences", headers=AUTH, json={
                "matchers": [{"name": "alertname", "value": "Quiet", "isRegex": False}],
                "startsAt": "2000-01-01T00:00:00Z", "endsAt": "2100-01-01T00:00:00Z",
                "createdBy": "ops", "comment": "maintenance"})
            assert sil.status_code == 200, sil.text
            b, url_b = start_serve(_config(tmp_path, "b", db, hooks.url, beats.url), *clock)
            assert poll(lambda: len(status(url_a)["peers"]) == 2)
            ha = c.get(f"{url_b}/api/v1/ha").json()["data"]  # what the dashboard's Replicas page shows
            assert [(r["name"], r["leader"], r["self"]) for r in ha["replicas"]] == [
                ("a", True, False), ("b", False, True)], ha
            assert ha["database"]["state"] == "up" and ha["journal"]["pending"] == 0 and not ha["delivering"]
            _shares_outcomes_and_devices(c, url_a, url_b, float(t0))
            cmd = [amtool, "cluster", "show", "-o", "extended", f"--alertmanager.url={url_b}"]
            show = subprocess.run(cmd, capture_output=True, text=True, timeout=BOUND_S, check=False)
            peers = [line.split() for line in show.stdout.splitlines() if line.startswith("127.0.0.1:")]
            assert show.returncode == 0 and sorted(p[1] for p in peers) == ["a", "b"], show.stdout

            # the P0 alerts reach both replicas, as a Prometheus pair sends to both Alertmanagers
            alerts = [{"status": "firing", "labels": {"alertname": n, "service": "ranker", "tier": "P0"},
                       "annotations": {"summary": f"{n} on ranker"}} for n in ("Down", "Acked", "Quiet")]
            for url in (url_a, url_b):
                r = c.post(f"{url}/api/v1/alertmanager", headers=AUTH,
                           json={"version": "4", "alerts": alerts})
                assert r.status_code == 200, r.text

            def quiet_on_b() -> bool:
                got = c.get(f"{url_b}/api/v2/alerts", params={"filter": 'alertname="Quiet"'}).json()
                return bool(got) and got[0]["status"]["silencedBy"] == [sil.json()["silenceID"]]
            assert poll(quiet_on_b)

            # step 1 of Down and Acked from A; Acked acknowledged through B before its step 2
            assert hooks.wait(lambda got: len(got) >= 2)
            r = c.post(f"{url_b}/api/v1/alerts/ack", headers=AUTH,
                       json={"matchers": ['alertname="Acked"'], "by": "bob"})
            assert r.status_code == 200, r.text
            # step 2 of Down from A (still leading); then A is killed
            assert hooks.wait(lambda got: any(p == "/second" for p, _ in got))
            assert beats.wait(lambda got: "a" in _senders(got))  # the leader's Watchdog
            a.kill()
            a.wait(BOUND_S)
            assert hooks.wait(lambda got: any(p == "/third" for p, _ in got))
            assert beats.wait(lambda got: "b" in _senders(got))  # the Watchdog goes on from B
            assert status(url_b)["name"] == "b"
    finally:
        err_a = _stop(a)
        err_b = _stop(b) if b is not None else ""
        hooks.service.stop()
        beats.service.stop()
    (first,) = hooks.when("/first", "Down", 1)[:1]
    third = hooks.when("/third", "Down", 3)
    # B sent step 3 on time (in the servers' seconds): not a round before it was due, at most a lease
    # and a round after (with a loaded machine's slack)
    late = (third[0] - first) * SPEED - 2 * STEP_S
    print(f"step 3 from B: {late:+.1f} s of the servers' clock after it was due")
    assert 1 <= len(third) <= 2 and -EVAL_S <= late <= LEASE_S + EVAL_S + SLACK_S
    assert len(hooks.when("/first", "Down", 1)) <= 2 and len(hooks.when("/second", "Down", 2)) <= 2
    assert hooks.steps("/second").count(("Acked", 2)) == 0 and hooks.steps("/third").count(("Acked", 3)) == 0
    assert all(b["groupLabels"]["alertname"] != "Quiet" for _, b in hooks.got)  # silenced on both
    # each message names the replica that sent it: A before the kill, B after
    sent_by = lambda path, step: {b.get("replica") for p, b in hooks.got  # noqa: E731
                                  if p == path and b["groupLabels"]["alertname"] == "Down"
                                  and b.get("escalation", {}).get("step") == step}
    assert "a" in sent_by("/first", 1) and sent_by("/third", 3) == {"b"}
    assert "Traceback" not in err_a + err_b and TOKEN not in err_b
