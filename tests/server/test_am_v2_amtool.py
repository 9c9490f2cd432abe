"""Issue 15 #3: the real amtool 0.25 (Debian's prometheus-alertmanager) against ``inferwatch serve``.

Each command's effect is checked through the API, not through amtool's own output alone.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests._require import require_tool

from inferwatch.model import alertmanager_fingerprint

from ._proc import Served, serve

AMTOOL = require_tool("amtool")  # Debian's prometheus-alertmanager; the oracle: CI must have it
pytestmark = [pytest.mark.slow]

TOKEN = "am-t0ken-for-tests"
CONFIG = """\
storage: {type: memory}
server: {api_token: %s}
alerting:
  route: {receiver: terminal, group_by: [alertname], group_wait: 0s}
  inhibit_rules: []
"""


class Amtool:
    """Runs amtool against one server with the token in an http config file."""

    def __init__(self, url: str, tmp_path: Path) -> None:
        self.http_config = tmp_path / "amtool-http.yml"
        self.http_config.write_text(f"authorization:\n  type: Bearer\n  credentials: {TOKEN}\n")
        self.url = url

    def __call__(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = ["amtool", f"--alertmanager.url={self.url}", f"--http.config.file={self.http_config}", *args]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert (r.returncode == 0) is ok, f"{cmd}: rc={r.returncode}\n{r.stdout}\n{r.stderr}"
        return r


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[Served, httpx.Client, Amtool]]:
    with serve(CONFIG % TOKEN, tmp_path) as s, httpx.Client(base_url=s.url, timeout=10) as c:
        yield s, c, Amtool(s.url, tmp_path)
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)


Running = tuple[Served, httpx.Client, Amtool]


def test_amtool_alerts_and_silences_against_inferwatch_serve(server: Running, tmp_path: Path) -> None:
    _, c, amtool = server
    # alert add: POST /api/v2/alerts; the alert is in the pipeline with Alertmanager's fingerprint
    amtool("alert", "add", "alertname=GpuHot", "service=ranker", "severity=warning",
           "--annotation=summary=hot GPU", "--generator-url=http://example.test/g")
    (alert,) = c.get("/api/v2/alerts").json()
    labels = {"alertname": "GpuHot", "service": "ranker", "severity": "warning"}
    assert alert["labels"] == labels and alert["annotations"] == {"summary": "hot GPU"}
    assert alert["fingerprint"] == alertmanager_fingerprint(labels)
    assert alert["status"] == {"inhibitedBy": [], "silencedBy": [], "state": "active"}
    # alert query: amtool's filter reaches the server (a miss is empty, a hit is the alert)
    listed = json.loads(amtool("alert", "query", "-o", "json", "alertname=GpuHot").stdout)
    assert [a["fingerprint"] for a in listed] == [alert["fingerprint"]]
    assert json.loads(amtool("alert", "query", "-o", "json", "alertname=Nope").stdout) == []
    assert "GpuHot" in amtool("alert", "query").stdout  # the table, and no version warning
    assert "Warning" not in amtool("alert", "query").stderr
    # status.config.original is a config Alertmanager itself accepts
    original = tmp_path / "original.yml"
    original.write_text(c.get("/api/v2/status").json()["config"]["original"])
    assert "SUCCESS" in amtool("check-config", str(original)).stdout

    # silence add: an active silence with amtool's matchers; the alert is now suppressed
    sid = amtool("silence", "add", "alertname=GpuHot", "service=~rank.*", "-a", "ops", "-c", "deploy",
                 "-d", "1h").stdout.strip()
    got = c.get(f"/api/v2/silence/{sid}").json()
    assert got["status"]["state"] == "active" and got["createdBy"] == "ops" and got["comment"] == "deploy"
    assert {(m["name"], m["value"], m["isRegex"]) for m in got["matchers"]} == {
        ("alertname", "GpuHot", False), ("service", "rank.*", True)}
    (alert,) = c.get("/api/v2/alerts").json()
    assert alert["status"] == {"inhibitedBy": [], "silencedBy": [sid], "state": "suppressed"}
    assert json.loads(amtool("alert", "query", "-o", "json").stdout) == []  # active only, by default
    assert len(json.loads(amtool("alert", "query", "-o", "json", "--silenced").stdout)) == 1

    # silence query: by filter (Alertmanager's: a filter equals one of the silence's matchers)
    assert sid in amtool("silence", "query", "alertname=GpuHot").stdout
    assert json.loads(amtool("silence", "query", "-o", "json", "alertname=Other").stdout) == []

    # silence update: an active silence keeps its id when only the end and comment change
    # (its -q prints a Go pointer in 0.25, so the table's first column is read instead)
    table = amtool("silence", "update", sid, "-c", "deploy, longer", "-d", "2h").stdout.splitlines()
    assert table[1].split()[0] == sid
    assert c.get(f"/api/v2/silence/{sid}").json()["comment"] == "deploy, longer"

    # silence import: the query's JSON back in updates the same silence (Alertmanager's rules for an
    # unchanged active silence); with --force amtool drops the ids and a new silence is created
    exported = tmp_path / "silences.json"
    exported.write_text(amtool("silence", "query", "-o", "json").stdout)
    assert amtool("silence", "import", str(exported)).stdout.strip() == sid
    assert len(c.get("/api/v2/silences").json()) == 1
    new_id = amtool("silence", "import", "--force", str(exported)).stdout.strip()
    assert new_id and new_id != sid
    assert c.get(f"/api/v2/silence/{new_id}").json()["matchers"] == got["matchers"]
    assert len(c.get("/api/v2/silences", params={"filter": "alertname=GpuHot"}).json()) == 2
    # an id the server does not know: 404, and amtool retries it as a new silence
    unknown = "00000000-0000-4000-8000-000000000000"
    exported.write_text(exported.read_text().replace(sid, unknown))
    third = amtool("silence", "import", str(exported)).stdout.strip()
    assert third not in (sid, new_id, unknown) and c.get(f"/api/v2/silence/{unknown}").status_code == 404
    amtool("silence", "expire", third)

    # silence expire: both end; the alert is active again
    amtool("silence", "expire", sid, new_id)
    assert {x["status"]["state"] for x in c.get("/api/v2/silences").json()} == {"expired"}
    assert sid not in amtool("silence", "query").stdout
    assert sid in amtool("silence", "query", "--expired").stdout
    assert c.get("/api/v2/alerts").json()[0]["status"]["state"] == "active"


def test_amtool_without_the_token_is_refused_and_changes_nothing(server: Running) -> None:
    s, c, _ = server
    r = subprocess.run(["amtool", f"--alertmanager.url={s.url}", "silence", "add", "alertname=X", "-c", "x"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "401" in r.stderr + r.stdout
    assert c.get("/api/v2/silences").json() == []
    assert TOKEN not in r.stderr + "".join(s.lines)
