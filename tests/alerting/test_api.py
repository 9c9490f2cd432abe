"""The alerting HTTP API (silences, webhook, records) and a real Alertmanager delivering to it."""

from __future__ import annotations

import json
import random
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.testclient import TestClient

from alerting.fakes import PD_KEY, FakeKube, FakeService, Handler, pagerduty_handler
from inferwatch.alerting import Pipeline, PipelineHandles, RecordingNotifier
from inferwatch.config import Secret, parse_config
from inferwatch.model import SimulatedClock, SystemClock, alertmanager_fingerprint
from inferwatch.server.api._alerting_api import alerting_routes

TOKEN = "api-token-123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def api() -> Iterator[tuple[TestClient, Pipeline, RecordingNotifier]]:
    cfg = parse_config("alerting: {route: {receiver: terminal, group_wait: 0s}}").alerting
    rec = RecordingNotifier("terminal")
    p = Pipeline(cfg, clock=SimulatedClock(1_800_000_000), notifiers={"terminal": rec}, actions=[])
    with TestClient(Starlette(routes=alerting_routes(PipelineHandles.of(p), Secret(TOKEN)))) as c:
        yield c, p, rec


SILENCE = {"matchers": [{"name": "service", "value": "ranker", "isRegex": False, "isEqual": True}],
           "startsAt": "2027-01-15T08:00:00Z", "endsAt": "2027-01-15T10:00:00.000Z",
           "createdBy": "ops", "comment": "deploy"}


def test_silence_create_list_expire(api) -> None:  # type: ignore[no-untyped-def]
    c, _, _ = api
    r = c.post("/api/v2/silences", json=SILENCE, headers=AUTH)
    assert r.status_code == 200
    sid = r.json()["silenceID"]
    (s,) = c.get("/api/v2/silences").json()
    assert s["id"] == sid and s["status"]["state"] == "active" and s["matchers"][0]["name"] == "service"
    assert c.delete(f"/api/v2/silence/{sid}", headers=AUTH).status_code == 200
    assert c.get("/api/v2/silences").json()[0]["status"]["state"] == "expired"
    assert c.delete("/api/v2/silence/nope", headers=AUTH).status_code == 404


@pytest.mark.parametrize(("body", "where"), [
    # each bad body gets a 400 naming the field, never a 500
    ({**SILENCE, "comment": ""}, "comment"),
    ({**SILENCE, "endsAt": "2027-01-15T07:00:00Z"}, "endsAt"),
    ({**SILENCE, "startsAt": "yesterday"}, "startsAt"),
    ({**SILENCE, "matchers": [{"name": "a", "value": "(", "isRegex": True}]}, "matchers"),
    ({**SILENCE, "matchers": [{"name": "a", "value": ".*", "isRegex": True}]}, "matchers"),
    ([], "silence"),
])
def test_bad_silences_are_400(api, body, where) -> None:  # type: ignore[no-untyped-def]
    c, _, _ = api
    r = c.post("/api/v2/silences", json=body, headers=AUTH)
    assert r.status_code == 400 and where in r.json()  # Alertmanager's shape: the message as a JSON string


def test_writes_need_the_token_and_it_never_shows(api) -> None:  # type: ignore[no-untyped-def]
    c, _, _ = api
    assert c.post("/api/v2/silences", json=SILENCE).status_code == 401
    assert c.post("/api/v2/silences", json=SILENCE, headers={"Authorization": "Bearer x"}).status_code == 401
    assert TOKEN not in c.get("/api/v2/silences").text + c.get("/api/v1/notifications").text


def test_webhook_runs_receivers(api) -> None:  # type: ignore[no-untyped-def]
    c, _, rec = api
    body = {"version": "4", "status": "firing", "receiver": "iw", "groupKey": "{}:{}", "alerts": [
        {"status": "firing", "labels": {"alertname": "Down", "service": "ranker"}, "annotations": {},
         "startsAt": "2027-01-15T07:59:00.123456789Z", "endsAt": "0001-01-01T00:00:00Z"}]}
    assert c.post("/api/v1/alertmanager", json=body, headers=AUTH).status_code == 200
    assert [a.name for n in rec.sent for a in n.alerts] == ["Down"]
    assert c.get("/api/v1/notifications").json()[0]["status"] == "sent"
    bad = c.post("/api/v1/alertmanager", content=b"{nope", headers=AUTH)
    assert bad.status_code == 400 and "JSON" in bad.json()["error"]


@pytest.fixture
def served() -> Iterator[Callable[[Pipeline], str]]:
    """Serve the alerting routes of a pipeline on loopback with uvicorn; yields a starter."""
    running: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(p: Pipeline) -> str:
        port = _free_port()
        app = Starlette(routes=alerting_routes(PipelineHandles.of(p), Secret(TOKEN)))
        server = uvicorn.Server(uvicorn.Config(app,
                                               host="127.0.0.1", port=port, log_level="warning"))
        t = threading.Thread(target=server.run, daemon=True)
        t.start()
        running.append((server, t))
        url = f"http://127.0.0.1:{port}"
        assert _until(lambda: _ok(url + "/api/v2/silences"), 20)
        return url

    yield start
    for server, t in running:
        server.should_exit = True
        t.join(10)


def test_silence_cli_add_list_expire(served, capsys) -> None:  # type: ignore[no-untyped-def]
    from inferwatch.cli import main

    cfg = parse_config("").alerting
    p = Pipeline(cfg, clock=SystemClock(), notifiers={}, actions=[])
    url = served(p)
    assert main(["silence", "--url", url, "--token", TOKEN, "add", 'service="ranker"', "-d", "1h",
                 "-m", "deploy", "-a", "ops"]) == 0
    sid = capsys.readouterr().out.strip()
    assert p.silences.get(sid) is not None
    assert main(["silence", "--url", url, "list"]) == 0
    assert sid in capsys.readouterr().out
    assert main(["silence", "--url", url, "--token", TOKEN, "expire", sid]) == 0
    assert p.silences.get(sid).state(SystemClock().now()) == "expired"  # type: ignore[union-attr]
    # no token: one readable line, exit 2, no traceback
    assert main(["silence", "--url", url, "add", "a=b", "-m", "x"]) == 2
    assert "refused the write (401)" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _until(cond: Callable[[], bool], deadline_s: float) -> bool:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if cond():
            return True
        threading.Event().wait(0.1)
    return cond()


@pytest.mark.tools
def test_real_alertmanager_delivers_to_our_webhook(  # type: ignore[no-untyped-def]
    require_tool, tmp_path: Path, fake: Callable[[Handler], FakeService], served
) -> None:
    am_bin = require_tool("prometheus-alertmanager", "alertmanager")
    pd = fake(pagerduty_handler())
    kube = FakeKube("kt", {"default/ranker": 1})
    k8s = fake(kube)
    cfg = parse_config(f"""
alerting:
  route: {{receiver: phone, group_wait: 0s}}
  receivers: [{{name: phone, type: pagerduty, routing_key: {PD_KEY}, url: '{pd.url}'}}]
  default_actions: false
  actions: [{{name: scale_out, type: kubernetes_scale, matchers: ['tier="P0"'], api_server: '{k8s.url}',
             token: kt}}]
""").alerting
    p = Pipeline(cfg, clock=SystemClock(), rng=random.Random(0))
    url = served(p)
    am_port = _free_port()
    (tmp_path / "am.yml").write_text(json.dumps({
        "route": {"receiver": "iw", "group_wait": "1s", "group_interval": "1s", "repeat_interval": "1h"},
        "receivers": [{"name": "iw", "webhook_configs": [{
            "url": f"{url}/api/v1/alertmanager",
            "http_config": {"authorization": {"credentials": TOKEN}}}]}]}))
    am_log = (tmp_path / "am.log").open("wb")
    am = subprocess.Popen([am_bin, f"--config.file={tmp_path / 'am.yml'}", f"--storage.path={tmp_path}",
                           f"--web.listen-address=127.0.0.1:{am_port}", "--cluster.listen-address="],
                          stdout=subprocess.DEVNULL, stderr=am_log)
    try:
        am_url = f"http://127.0.0.1:{am_port}"
        assert _until(lambda: _ok(f"{am_url}/-/ready"), 30), "alertmanager did not become ready"
        alert = {"labels": {"alertname": "ServiceUnavailable", "tier": "P0", "severity": "critical",
                            "service": "ranker", "instance": "a:9000"}, "annotations": {"summary": "down"}}
        httpx.post(f"{am_url}/api/v2/alerts", json=[alert], timeout=5).raise_for_status()
        # Alertmanager as the oracle of the fingerprint our webhook payload and API show
        (shown,) = httpx.get(f"{am_url}/api/v2/alerts", timeout=5).json()
        assert shown["fingerprint"] == alertmanager_fingerprint(alert["labels"])
        assert _until(lambda: len(pd.requests) >= 1, 30), "no PagerDuty event from the webhook path"
        ev = pd.requests[0].json()
        assert ev["event_action"] == "trigger" and ev["payload"]["severity"] == "critical"
        assert _until(lambda: kube.replicas["default/ranker"] == 2, 10)
    finally:
        am.terminate()
        am.wait(10)
        am_log.close()


def _ok(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
