"""Configuration from the server (issue #52): a running agent polls a real ``inferwatch serve``, applies a
new configuration within a poll, refuses a bad one (keeping its own) and the server's fleet shows both."""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

import httpx
import pytest
from tests.server._proc import serve

from inferwatch.edge import Agent
from inferwatch.model import SimulatedClock

from .helpers import TOKEN, ScriptedSource, agent_config

pytestmark = pytest.mark.slow
T0 = math.floor(time.time() / 86400) * 86400 - 86400


def _fleet_row(url: str) -> dict[str, object]:
    rows = httpx.get(f"{url}/api/v1/edge/fleet", timeout=10).json()["data"]["rows"]
    return next(r for r in rows if r["device"] == "cam-1")


def test_a_configuration_change_reaches_a_running_agent_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    configs = tmp_path / "agent-configs"
    configs.mkdir()
    berlin = configs / "10-berlin.yaml"
    berlin.write_text("match: {site: berlin}\nconfig: {deadband: {band: 0.05}, upload: {interval: 7s}}\n")
    (configs / "20-others.yaml").write_text("match: {}\nconfig: {deadband: {band: 0.3}}\n")
    config = (f"server: {{data_dir: '{tmp_path / 'data'}', api_token: t}}\n"
              f"edge: {{devices: {{cam-1: {TOKEN}}}, agent_configs: '{configs}'}}\n")
    clock = SimulatedClock(T0)
    with serve(config, tmp_path) as s:
        cfg = dataclasses.replace(agent_config(tmp_path, s.url), labels={"site": "berlin"})
        source = ScriptedSource(lambda n, t: 20.0 + (t - T0) / 6.0, names=("temp",))  # every round sends
        agent = Agent(cfg, clock=clock, sources=[source])

        def round_trip() -> None:
            agent.collect_once()
            agent.uploader.drain()
            clock.advance(60)

        round_trip()  # the server learns the device's site from its first batch
        assert agent.poll_config()  # poll 1: berlin's
        assert (agent.deadband.settings.band, agent.uploader.flush_interval) == (0.05, 7.0)
        applied = agent.remote.applied if agent.remote else ""
        round_trip()
        row = _fleet_row(s.url)
        assert (row["config_hash"], row["config_error"]) == (applied, "")

        berlin.write_text("match: {site: berlin}\nconfig: {deadband: {band: 0.2, heartbeat: 4m}}\n")
        assert agent.poll_config(), agent.remote and agent.remote.error  # a change: applied at the next poll
        assert (agent.deadband.settings.band, agent.deadband.settings.heartbeat) == (0.2, 240.0)
        assert agent.uploader.flush_interval == cfg.upload.interval  # no longer set: the file's own
        good = agent.remote.applied if agent.remote else ""
        assert good != applied
        assert not agent.poll_config()  # the same: 304, nothing to do

        berlin.write_text("match: {site: berlin}\n"
                          "config: {deadband: {band: lots}, upload: {token: s3cret}}\n")
        assert not agent.poll_config()
        assert agent.deadband.settings.band == 0.2  # kept
        berlin.write_text("match: {site: berlin}\nconfig: {deadband: {band: lots}}\n")
        assert not agent.poll_config()
        round_trip()
        row = _fleet_row(s.url)
        assert row["config_hash"] == good and "deadband.band" in str(row["config_error"])
        assert "s3cret" not in httpx.get(f"{s.url}/api/v1/edge/fleet", timeout=10).text

        auth = {"Authorization": f"Bearer {TOKEN}"}
        etag = httpx.get(f"{s.url}/api/v1/edge/config", headers=auth, timeout=10)
        assert etag.status_code == 200 and etag.headers["ETag"] == f'"{etag.json()["hash"]}"'
        same = httpx.get(f"{s.url}/api/v1/edge/config", timeout=10,
                         headers={"Authorization": f"Bearer {TOKEN}", "If-None-Match": etag.headers["ETag"]})
        assert same.status_code == 304
        assert httpx.get(f"{s.url}/api/v1/edge/config", timeout=10).status_code == 401
        agent.close()
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)
