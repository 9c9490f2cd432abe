"""`inferwatch serve`: an acknowledgement link holds for its own episode only, and open reads hide it.

Fire, resolve, fire again: the first episode's link is refused, the second's acknowledges.
Reading the notifications without the token shows no link (a link is a credential).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from tests.server._proc import start_serve

from alerting.test_serve_oncall import BOUND_S, TOKEN, Hooks, _stop

pytestmark = pytest.mark.slow
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def hooks() -> object:
    h = Hooks()
    yield h
    h.service.stop()


def _config(tmp_path: Path, url: str) -> Path:
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text(f"""
server: {{data_dir: '{tmp_path / "data"}', api_token: {TOKEN}, external_url: 'https://iw.example.com'}}
rules: {{default_pack: false}}
alerting:
  default_actions: false
  receivers: [{{name: first, type: webhook, url: '{url}/first'}}]
  escalations: [{{name: p0, steps: [{{after: 0s, notify: [first]}}]}}]
  route: {{receiver: first, group_by: [alertname], group_wait: 0s, group_interval: 1s, escalation: p0}}
""")
    return cfg


def _post(c: httpx.Client, url: str, status: str) -> None:
    alert = {"status": status, "labels": {"alertname": "Delta", "service": "ranker", "tier": "P0"},
             "annotations": {"summary": "Delta on ranker"}}
    if status == "resolved":
        alert["endsAt"] = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    r = c.post(f"{url}/api/v1/alertmanager", headers=AUTH, json={"version": "4", "alerts": [alert]})
    assert r.status_code == 200, r.text


def _recorded(c: httpx.Client, url: str) -> str:
    """The answer once it lists a notification (the record follows the delivery)."""
    end = time.monotonic() + BOUND_S
    while time.monotonic() < end:
        text = c.get(url).text
        if "Acknowledge: " in text:
            return text
        time.sleep(0.05)  # a bounded poll of the server's own answer
    raise AssertionError(f"{url} never listed the notification")


def _links(hooks: Hooks) -> list[str]:
    return [n.split(": ", 1)[1] for _, b in list(hooks.got) if b["status"] == "firing"
            for n in b.get("notes", []) if n.startswith("Acknowledge: ")]


def test_a_link_from_an_earlier_episode_is_refused_and_open_reads_hide_links(tmp_path: Path,
                                                                            hooks: Hooks) -> None:
    proc, url = start_serve(_config(tmp_path, hooks.url), timeout=BOUND_S)
    try:
        with httpx.Client(timeout=BOUND_S) as c:
            _post(c, url, "firing")
            assert hooks.wait(lambda got: len(_links(hooks)) >= 1)
            (first,) = _links(hooks)
            query1 = first.split("?", 1)[1]

            open_read = _recorded(c, f"{url}/api/v1/notifications")
            assert "episode=" not in open_read and "link hidden" in open_read
            # (before: the open reads listed every link, and the first link acknowledged every later firing)
            timeline = _recorded(c, f"{url}/api/v1/dashboard/timeline")
            assert "episode=" not in timeline and "link hidden" in timeline
            assert query1 in c.get(f"{url}/api/v1/notifications", headers=AUTH).text  # the token holder's

            _post(c, url, "resolved")
            assert hooks.wait(lambda got: any(b["status"] == "resolved" for _, b in got))
            _post(c, url, "firing")
            assert hooks.wait(lambda got: len(_links(hooks)) >= 2)
            second = _links(hooks)[-1].split("?", 1)[1]
            assert second != query1

            old = c.post(f"{url}/api/v1/alerts/ack/link?{query1}")
            assert old.status_code == 403 and "episode is over" in old.text
            assert c.get(f"{url}/api/v1/alerts/ack/link?{query1}").status_code == 403
            r = c.post(f"{url}/api/v1/alerts/ack/link?{second}")
            assert r.status_code == 200 and "Acknowledged" in r.text
    finally:
        err = _stop(proc)
    assert "Traceback" not in err, err
