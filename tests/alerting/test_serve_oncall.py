"""`inferwatch serve` as a subprocess: escalation, acknowledgement by API, CLI and link, history.

Alerts come in as a real Alertmanager sends them (``POST /api/v1/alertmanager``), so
this is also the "behind an Alertmanager" path. Receivers are loopback webhook fakes.
Every wait is on a request at the fake or a bounded HTTP poll of the server's own answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server._proc import start_serve

from alerting.fakes import FakeService, Reply, Request

pytestmark = pytest.mark.slow
TOKEN = "t0ken-for-oncall-tests"
BOUND_S = 60.0


class Hooks:
    """Two webhook paths on one fake: what each got, in order."""

    def __init__(self) -> None:
        self.got: list[tuple[str, dict[str, Any]]] = []
        self.cond = threading.Condition()
        self.service = FakeService(self._handle).start()
        self.url = self.service.url

    def _handle(self, req: Request) -> Reply:
        with self.cond:
            self.got.append((req.path, req.json()))
            self.cond.notify_all()
        return 200, {}, b""

    def wait(self, pred: Any) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: pred(list(self.got)), BOUND_S)

    def steps(self, path: str) -> list[tuple[str, int]]:
        with self.cond:
            return [(b["groupLabels"]["alertname"], b.get("escalation", {}).get("step", 0))
                    for p, b in self.got if p == path]


@pytest.fixture
def hooks() -> Iterator[Hooks]:
    h = Hooks()
    yield h
    h.service.stop()


def _config(tmp_path: Path, url: str) -> Path:
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text(f"""
server: {{data_dir: '{tmp_path / "data"}', api_token: {TOKEN}, external_url: 'https://iw.example.com'}}
rules:
  default_pack: false
  rules: [{{name: Warming, dimension: service, tier: P2, signal: {{type: expr, expr: 'vector(1)'}},
            threshold: 0, for: 1h}}]
alerting:
  default_actions: false
  receivers:
    - {{name: first, type: webhook, url: '{url}/first'}}
    - {{name: second, type: webhook, url: '{url}/second'}}
  escalations:
    - name: p0
      steps: [{{after: 0s, notify: [first]}}, {{after: 20s, notify: [second]}}]
  route: {{receiver: first, group_by: [alertname], group_wait: 0s, group_interval: 1h, escalation: p0}}
""")
    return cfg


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.terminate()
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err


def _cli(cfg: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("INFERWATCH_CONFIG", "INFERWATCH_DATA_DIR")}
    return subprocess.run([sys.executable, "-m", "inferwatch", *args, "--config", str(cfg), "--url", url,
                           "--token", TOKEN], capture_output=True, text=True, timeout=BOUND_S, env=env,
                          check=False)


def _alert(name: str) -> dict[str, object]:
    return {"status": "firing", "labels": {"alertname": name, "service": "ranker", "tier": "P0"},
            "annotations": {"summary": f"{name} on ranker"}}


def _acked(got: list[tuple[str, dict[str, Any]]]) -> dict[str, list[str]]:
    """The follow-ups saying who acknowledged, by group, as the first receiver got them."""
    return {b["groupLabels"]["alertname"]: b["notes"] for p, b in got
            if p == "/first" and any(n.startswith("Acknowledged by") for n in b.get("notes", ()))}


def test_escalation_and_acknowledgement_by_api_cli_and_link(tmp_path: Path, hooks: Hooks) -> None:
    # rules: step 1 at once, step 2 after 20 s unless acknowledged; an ack by the API, the CLI or a
    # signed link stops it; the history answers who was told and who acknowledged
    cfg = _config(tmp_path, hooks.url)
    proc, url = start_serve(cfg)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        with httpx.Client(timeout=BOUND_S) as c:
            alerts = [_alert(n) for n in ("Alpha", "Bravo", "Charlie", "Delta")]
            r = c.post(f"{url}/api/v1/alertmanager", headers=auth, json={"version": "4", "alerts": alerts})
            assert r.status_code == 200
            assert hooks.wait(lambda got: len(got) >= 4)
            assert sorted(hooks.steps("/first")) == [("Alpha", 1), ("Bravo", 1), ("Charlie", 1), ("Delta", 1)]
            delta = next(b for p, b in hooks.got if b["groupLabels"]["alertname"] == "Delta")
            (link,) = [n.split(": ", 1)[1] for n in delta["notes"] if n.startswith("Acknowledge: ")]
            assert link.startswith("https://iw.example.com/api/v1/alerts/ack/link?")
            assert TOKEN not in str(delta)
            query = link.split("?", 1)[1]

            r = c.post(f"{url}/api/v1/alerts/ack", headers=auth,
                       json={"matchers": ['alertname="Bravo"'], "by": "api-user", "comment": "on it"})
            # the claimed name, then the caller the server authenticated (the audit trail)
            assert r.status_code == 200
            assert r.json()["acknowledged"][0]["by"] == "api-user [token 'api_token' (admin)]"
            assert c.post(f"{url}/api/v1/alerts/ack", json={"matchers": ['alertname="Alpha"'], "by": "x"}
                          ).status_code == 401  # writes need the token
            done = _cli(cfg, url, "ack", 'alertname="Charlie"', "--by", "cli-user", "-m", "looking")
            assert done.returncode == 0 and "acknowledged group" in done.stdout, done.stderr
            page = c.get(f"{url}/api/v1/alerts/ack/link?{query}")
            assert page.status_code == 200 and 'id="ack"' in page.text  # GET changes nothing
            assert c.get(f"{url}/api/v1/alerts/ack/link?{query[:-2]}00").status_code == 403
            r = c.post(f"{url}/api/v1/alerts/ack/link?{query}")
            assert r.status_code == 200 and "Acknowledged" in r.text
            # each acknowledgement (API, CLI, link) is told on the channel that carried the page
            assert hooks.wait(lambda got: len(_acked(got)) == 3)
            told = _acked(hooks.got)
            assert told["Bravo"] == ["Acknowledged by api-user [token 'api_token' (admin)]: on it"]
            assert told["Charlie"][0].startswith("Acknowledged by cli-user") and told["Charlie"][0].endswith(
                ": looking")
            assert told["Delta"] == ["Acknowledged by link: one-click link"]

            # Alpha alone reaches step 2 (all four were due at the same tick). The three acks, a CLI
            # process among them, must land before it: 8 s was within reach of a loaded runner.
            assert hooks.wait(lambda got: any(p == "/second" for p, _ in got))
            assert hooks.steps("/second") == [("Alpha", 2)]
            groups = {g["labels"]["alertname"]: g for g in c.get(f"{url}/api/v1/alerts/oncall-groups").json()}
            assert groups["Alpha"]["ack"] is None and groups["Alpha"]["escalation"]["step"] == 2
            assert {n: groups[n]["ack"]["by"].split(" [")[0] for n in ("Bravo", "Charlie", "Delta")} == {
                "Bravo": "api-user", "Charlie": "cli-user", "Delta": "link"}

            hist = c.get(f"{url}/api/v1/alerts/history",
                         params={"match[]": 'alertname="Alpha"'}).json()["data"]
            kinds = [e["kind"] for e in hist]
            assert kinds[0] == "firing" and kinds.count("escalated") == 2
            told = [(e["detail"]["receiver"], e["detail"]["step"]) for e in hist if e["kind"] == "notified"]
            assert told == [("first", 1), ("second", 2)]
            pending = c.get(f"{url}/api/v1/alerts/history", params={"kind": "pending"}).json()["data"]
            assert [e["labels"]["alertname"] for e in pending] == ["Warming"]  # the evaluator's, once
            bad = c.get(f"{url}/api/v1/alerts/history", params={"kind": "nope"})
            assert bad.status_code == 400 and "unknown" in bad.json()["error"]
        out = _cli(cfg, url, "history", 'alertname="Bravo"')
        assert out.returncode == 0 and "acknowledged    Bravo" in out.stdout and "by api-user" in out.stdout
        listed = _cli(cfg, url, "ack", "--list")
        assert listed.returncode == 0 and "p0 step 2" in listed.stdout, listed.stdout
        stats = _cli(cfg, url, "history", "--stats", "--json")
        assert stats.returncode == 0 and '"acknowledged": 3' in stats.stdout
    finally:
        err = _stop(proc)
    assert "Traceback" not in err, err
    assert TOKEN not in err
