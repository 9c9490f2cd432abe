"""Config reload: POST /-/reload (token-guarded) and SIGHUP on a real `inferwatch serve`."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from inferwatch.config import Config, Secret, load_config
from inferwatch.model import SimulatedClock
from inferwatch.server import Server, ServerComponents, build_components, create_app
from inferwatch.server._lifecycle import Reloader, reload_route
from inferwatch.store import parse_selector, stale_mask

from .conftest import FakeTarget

TOKEN = "t0ken-for-tests"
EXTRA = "rules: {rules: [{name: ExtraRule, dimension: service, tier: P2, signal: up, threshold: 2}]}\n"


def _write(path: Path, data_dir: Path, targets: str, extra: str = "") -> None:
    path.write_text(f"server: {{data_dir: '{data_dir}'}}\nscrape: {{targets: [{targets}]}}\n{extra}")


@pytest.fixture
def setup(tmp_path: Path, target: FakeTarget) -> Iterator[tuple[TestClient, Server, Path, FakeTarget]]:
    cfg_path = tmp_path / "inferwatch.yml"
    _write(cfg_path, tmp_path / "data", f"{{job: svc, url: '{target.url}'}}")
    clock = SimulatedClock(1000.0)
    server = Server(build_components(load_config(cfg_path), clock=clock), clock=clock)

    def build(cfg: Config, current: ServerComponents) -> ServerComponents:
        return build_components(cfg, clock=clock, store=current.store)

    reloader = Reloader(server, lambda: load_config(cfg_path), build)
    app = create_app(server, extra_routes=[reload_route(reloader, Secret(TOKEN))])
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c, server, cfg_path, target
    server.stop()


def _rules(c: TestClient) -> list[str]:
    return [r["name"] for r in c.get("/api/v1/rules").json()["data"]["groups"][0]["rules"]]


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


def test_reload_needs_the_token(setup: tuple[TestClient, Server, Path, FakeTarget]) -> None:
    c, *_ = setup
    assert c.post("/-/reload").status_code == 401
    assert c.post("/-/reload", headers={"Authorization": "Bearer wrong"}).status_code == 401


def test_reload_adds_a_rule_and_keeps_unchanged_targets_fresh(
        setup: tuple[TestClient, Server, Path, FakeTarget]) -> None:
    # rule: a reload swaps in the new rules; an unchanged target keeps its state (no stale
    # marker written for its series, the parser cache carries on)
    c, server, cfg_path, target = setup
    target.body = "a 1\n"
    server.components.scrape.tick(1000.0)
    assert "ExtraRule" not in _rules(c)
    _write(cfg_path, cfg_path.parent / "data", f"{{job: svc, url: '{target.url}'}}", EXTRA)
    r = c.post("/-/reload", headers=_auth())
    assert r.status_code == 200, r.text
    assert r.json()["data"].startswith("reloaded: 1 targets,")
    assert "ExtraRule" in _rules(c)
    server.components.scrape.tick(1060.0)  # the target's schedule carried on: due at 1000 + 60 s
    (a,) = server.components.store.select(parse_selector('a{job="svc"}'), 0, 1e9)
    assert a.t.tolist() == [1000.0, 1060.0] and not stale_mask(a.v).any()


def test_a_bad_config_is_400_naming_the_field_and_the_old_one_stays(
        setup: tuple[TestClient, Server, Path, FakeTarget]) -> None:
    c, _, cfg_path, _ = setup
    before = _rules(c)
    cfg_path.write_text("rules: {rules: [{name: X, dimension: service, tier: P9, signal: up, "
                        "threshold: 1}]}\n")
    r = c.post("/-/reload", headers=_auth())
    assert r.status_code == 400
    body = r.json()
    assert body["status"] == "error" and "rules.rules[0].tier" in body["error"]
    assert str(cfg_path) in body["error"]
    assert _rules(c) == before
    fams = {s.name: s.value for f in text_string_to_metric_families(c.get("/metrics").text)
            for s in f.samples}
    assert fams["inferwatch_config_last_reload_successful"] == 0


def test_a_storage_change_needs_a_restart(setup: tuple[TestClient, Server, Path, FakeTarget]) -> None:
    c, _, cfg_path, target = setup
    _write(cfg_path, cfg_path.parent / "elsewhere", f"{{job: svc, url: '{target.url}'}}")
    r = c.post("/-/reload", headers=_auth())
    assert r.status_code == 400 and "need a restart" in r.json()["error"]


def test_a_removed_target_goes_stale(setup: tuple[TestClient, Server, Path, FakeTarget]) -> None:
    c, server, cfg_path, target = setup
    target.body = "a 1\n"
    server.components.scrape.tick(1000.0)
    assert isinstance(server.clock, SimulatedClock)
    server.clock.set(1010.0)
    _write(cfg_path, cfg_path.parent / "data", "")  # nothing left but defaults: refused unless forced
    assert c.post("/-/reload", headers=_auth()).status_code == 400
    assert c.post("/-/reload?force=true", headers=_auth()).status_code == 200
    (a,) = server.components.store.select(parse_selector('a{job="svc"}'), 0, 1e9)
    assert a.t.tolist() == [1000.0, 1010.0] and stale_mask(a.v).tolist() == [False, True]


def _line(proc: subprocess.Popen[str], timeout: float = 60.0) -> str:
    """The process's next stderr line, waiting at most ``timeout`` ("" if it died or said nothing)."""
    assert proc.stderr is not None
    ready, _, _ = select.select([proc.stderr], [], [], timeout)
    return proc.stderr.readline() if ready else ""


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP on this platform")
def test_sighup_reloads_a_running_serve(tmp_path: Path) -> None:
    # rule: `--listen 127.0.0.1:0` announces the port it got; SIGHUP reloads, announces the
    # outcome on stderr, and never stops the server (no sleeps: each step waits on a line)
    cfg = tmp_path / "inferwatch.yml"
    base = f"server: {{data_dir: '{tmp_path / 'data'}', api_token: {TOKEN}}}\n"
    cfg.write_text(base)
    env = {k: v for k, v in os.environ.items() if k not in ("INFERWATCH_CONFIG", "INFERWATCH_DATA_DIR")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "inferwatch", "serve", "--config", str(cfg), "--listen", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = _line(proc)
        m = re.search(r"listening on (http://127\.0\.0\.1:(\d+)) ", first)
        assert m and int(m.group(2)) != 0, first
        url = m.group(1)
        assert httpx.get(f"{url}/-/ready", timeout=5).status_code == 200  # ready before it announced

        def names() -> list[str]:
            groups = httpx.get(f"{url}/api/v1/rules", timeout=2).json()["data"]["groups"]
            return [r["name"] for r in groups[0]["rules"]]

        assert "ExtraRule" not in names()
        defaults = len(names())
        cfg.write_text(base + EXTRA)
        proc.send_signal(signal.SIGHUP)
        announced = _line(proc)  # the reload announces its outcome once done
        assert announced.startswith(f"inferwatch serve: reloaded: 0 targets, {defaults + 1} rules"), announced
        assert "ExtraRule" in names()
        assert proc.poll() is None  # SIGHUP reloads, it does not stop the server
    finally:
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    assert "Traceback" not in err, err


def test_alert_state_carries_over_a_reload(tmp_path: Path) -> None:
    # rule: a pending alert keeps its activeAt through a reload (its `for` timer does not restart)
    cfg_path = tmp_path / "inferwatch.yml"
    _write(cfg_path, tmp_path / "data", "{job: gone, url: 'http://127.0.0.1:1/metrics'}")
    clock = SimulatedClock(1000.0)
    server = Server(build_components(load_config(cfg_path), clock=clock), clock=clock)
    reloader = Reloader(server, lambda: load_config(cfg_path),
                        lambda cfg, cur: build_components(cfg, clock=clock, store=cur.store))
    server.components.scrape.scrape_once(1000.0)
    server.tick(1000.0)
    before = [(a.alertname, a.active_since) for a in server.components.evaluator.active()]
    assert ("TargetDown", 1000.0) in before
    _write(cfg_path, tmp_path / "data", "{job: gone, url: 'http://127.0.0.1:1/metrics'}", EXTRA)
    clock.set(1010.0)
    reloader.reload()
    server.tick(1015.0)
    after = [(a.alertname, a.active_since) for a in server.components.evaluator.active()]
    server.stop()
    assert ("TargetDown", 1000.0) in after


def test_an_unexpected_failure_is_a_400_not_a_500(
        setup: tuple[TestClient, Server, Path, FakeTarget], monkeypatch: pytest.MonkeyPatch) -> None:
    c, server, _, _ = setup

    def broken(build: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(server, "reload", broken)
    r = c.post("/-/reload", headers=_auth())
    assert r.status_code == 400 and "RuntimeError: disk on fire" in r.json()["error"]


def test_query_and_http_bounds_need_a_restart(setup: tuple[TestClient, Server, Path, FakeTarget]) -> None:
    # rule: the query pool and the connection bounds are built once; a reload says so
    c, _, cfg_path, target = setup
    cfg_path.write_text(f"server: {{data_dir: '{cfg_path.parent / 'data'}', query: {{timeout: 5s}}}}\n"
                        f"scrape: {{targets: [{{job: svc, url: '{target.url}'}}]}}\n")
    r = c.post("/-/reload", headers=_auth())
    assert r.status_code == 200, r.text
    assert "server.query changes take effect after a restart" in r.text
