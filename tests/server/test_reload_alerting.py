"""One builder (``server.build``) for serve and reload: a reload applies the ``alerting`` section
(routes, receivers) without a restart, and the pipeline's state carries on."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from tests.alerting.fakes import FakeService, webhook_handler

from inferwatch._exceptions import ConfigError
from inferwatch.config import AlertingConfig, Config, load_config
from inferwatch.model import Labels, SystemClock
from inferwatch.rules import Alert
from inferwatch.server import Server, ServerComponents, ServerParts, build, build_components
from inferwatch.server._lifecycle import Reloader

TOKEN = "t0ken-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _write(path: Path, receiver: str, hook_url: str) -> None:
    path.write_text(
        f"server: {{data_dir: '{path.parent / 'data'}', api_token: {TOKEN}}}\n"
        "alerting:\n"
        f"  route: {{receiver: {receiver}, group_by: [alertname], group_wait: 0s}}\n"
        f"  receivers: [{{name: hook, type: webhook, url: '{hook_url}/hook'}}]\n")


@pytest.fixture
def built(tmp_path: Path) -> Iterator[tuple[ServerParts, TestClient, Path, FakeService]]:
    hook = FakeService(webhook_handler()).start()
    cfg = tmp_path / "inferwatch.yml"
    _write(cfg, "terminal", hook.url)
    parts = build(load_config(cfg), clock=SystemClock(), reload=lambda: load_config(cfg))
    parts.start_workers()  # the pipeline's runner ticks, as in serve
    with TestClient(parts.app(), raise_server_exceptions=False) as client:
        yield parts, client, cfg, hook
    parts.stop()
    hook.stop()


def _fire(parts: ServerParts, name: str) -> None:
    now = parts.pipeline.clock.now()
    parts.pipeline.send([Alert(Labels({"alertname": name, "tier": "P1"}), starts_at=now)], now)


def _sent(hook: FakeService) -> set[str]:
    return {a["labels"]["alertname"] for req in list(hook.requests) for a in json.loads(req.body)["alerts"]}


def test_a_reload_applies_alerting_changes_without_a_restart(
        built: tuple[ServerParts, TestClient, Path, FakeService]) -> None:
    parts, client, cfg, hook = built
    pipeline = parts.pipeline
    silence = {"matchers": [{"name": "alertname", "value": "Muted", "isRegex": False}],
               "startsAt": "2020-01-01T00:00:00Z", "endsAt": "2999-01-01T00:00:00Z",
               "createdBy": "test", "comment": "kept across the reload"}
    sid = client.post("/api/v2/silences", json=silence, headers=AUTH).json()["silenceID"]
    _fire(parts, "Before")
    assert pipeline.root.match({"alertname": "Before"})[0].options.receiver == "terminal"
    assert not hook.requests  # the webhook is not routed to yet

    _write(cfg, "hook", hook.url)
    r = client.post("/-/reload", headers=AUTH)
    assert r.status_code == 200, r.text
    assert "alerting reloaded" in r.json()["data"] and "restart" not in r.json()["data"]
    assert parts.pipeline is pipeline  # the API, the sink and the runner keep their handle
    assert pipeline.root.match({"alertname": "After"})[0].options.receiver == "hook"

    _fire(parts, "After")
    deadline = time.monotonic() + 60
    while "After" not in _sent(hook) and time.monotonic() < deadline:  # waits on each request
        hook.got.wait(1)
        hook.got.clear()
    assert "After" in _sent(hook), "the new route's receiver did not get the new alert"
    assert any(s["id"] == sid for s in client.get("/api/v2/silences").json())  # state carried on


def test_a_bad_alerting_section_keeps_the_running_one(
        built: tuple[ServerParts, TestClient, Path, FakeService]) -> None:
    parts, client, cfg, _ = built
    cfg.write_text(cfg.read_text().replace("receiver: terminal", "receiver: nowhere"))
    r = client.post("/-/reload", headers=AUTH)
    assert r.status_code == 400 and "nowhere" in r.json()["error"]
    assert parts.pipeline.root.match({"alertname": "X"})[0].options.receiver == "terminal"


def test_when_the_pipeline_refuses_the_new_section_nothing_is_swapped(tmp_path: Path) -> None:
    # rule: build new, then swap: a failure applying the alerting side keeps the old generation
    # running and closes the one built for the reload
    cfg = tmp_path / "inferwatch.yml"
    _write(cfg, "terminal", "http://127.0.0.1:1")
    clock = SystemClock()
    server = Server(build_components(load_config(cfg), clock=clock), clock=clock)
    built: list[ServerComponents] = []

    def rebuild(c: Config, current: ServerComponents) -> ServerComponents:
        built.append(build_components(c, clock=clock, store=current.store))
        return built[-1]

    def refuse(_: AlertingConfig) -> None:
        raise ConfigError("alerting.receivers[0]: refused")

    reloader = Reloader(server, lambda: load_config(cfg), rebuild, alerting=refuse)
    before = server.components
    _write(cfg, "hook", "http://127.0.0.1:1")
    with pytest.raises(ConfigError, match="refused"):
        reloader.reload()
    assert server.components is before and server.stats.last_reload_ok is False
    assert built and built[0].state is not None
    with pytest.raises(Exception, match="closed"):  # the generation built for the reload was closed
        built[0].state.load()
    server.stop()
