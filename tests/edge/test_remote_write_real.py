"""Remote-write 1.0 from the agent into a real Prometheus 2.42 and a real VictoriaMetrics on loopback."""

from __future__ import annotations

import math
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from inferwatch.edge import Agent, AgentConfig, Deadband, DeadbandSettings, SpoolConfig, UploadConfig
from inferwatch.model import Labels, Sample, SimulatedClock

from .helpers import Lines, ScriptedSource

pytestmark = [pytest.mark.tools, pytest.mark.slow]
T0 = math.floor(time.time()) - 3600.0  # an hour ago: inside both databases' accepted window


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _run(cmd: list[str], ready: str) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines = Lines(proc)
    try:
        while ready not in (got := lines.next(60)):
            assert got, f"{cmd[0]} did not start: {''.join(lines.seen)[-2000:]}"
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        lines.close()


def _wave(name: str, t: float) -> float:
    k = (t - T0) / 15
    return 10.0 + (5.0 if 40 <= k < 80 else 0.0) + 0.01 * (k % 7) + (1.0 if name.endswith("b") else 0.0)


def _ship(tmp: Path, url: str) -> list[Sample]:
    """One simulated hour of two series at 15 s through a real agent; returns what the deadband sent."""
    clock = SimulatedClock(T0)
    upload = UploadConfig("remote_write", url)
    cfg = AgentConfig("cam-7", spool=SpoolConfig(tmp / "spool.sqlite"), upload=upload)
    agent = Agent(cfg, clock=clock, sources=[ScriptedSource(_wave, names=("cam_temp_a", "cam_temp_b"))])
    for _ in range(240):
        agent.collect_once()
        clock.advance(15)
    agent.uploader.drain()
    assert (agent.spool.backlog(), agent.uploader.rejected) == (0, 0)
    agent.close()
    want = Deadband(DeadbandSettings())
    return [s for k in range(240) for n in ("cam_temp_a", "cam_temp_b")
            for s in want.offer(Sample(Labels.of(n), T0 + 15 * k, _wave(n, T0 + 15 * k)))]


def _check(want: list[Sample], got: dict[str, list[tuple[float, float]]]) -> None:
    assert sorted(got) == ["cam_temp_a", "cam_temp_b"]
    for name, points in got.items():
        assert points == [(s.t, s.v) for s in want if s.labels.name == name]
    # per series: every 300 s (the first, heartbeats; the step up at 600 s and down at 1200 s fall on them)
    assert [s.t - T0 for s in want if s.labels.name == "cam_temp_a"] == [300.0 * k for k in range(12)]


def test_remote_write_into_prometheus(tmp_path: Path, require_tool: Callable[..., str]) -> None:
    # rule: what the deadband sent is exactly what Prometheus stored, labelled device="cam-7"
    port = _free_port()
    (tmp_path / "prometheus.yml").write_text("global: {scrape_interval: 1m}\n")
    cmd = [require_tool("prometheus"), f"--config.file={tmp_path / 'prometheus.yml'}",
           f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}",
           "--web.enable-remote-write-receiver"]
    with _run(cmd, "Server is ready to receive web requests"):
        want = _ship(tmp_path, f"http://127.0.0.1:{port}/api/v1/write")
        r = httpx.get(f"http://127.0.0.1:{port}/api/v1/query",
                      params={"query": '{__name__=~"cam_temp_.*",device="cam-7"}[2h]', "time": T0 + 3600},
                      timeout=10).json()
    result = r["data"]["result"]
    got = {s["metric"]["__name__"]: [(float(t), float(v)) for t, v in s["values"]] for s in result}
    _check(want, got)


def test_remote_write_into_victoriametrics(tmp_path: Path, require_tool: Callable[..., str]) -> None:
    port = _free_port()
    cmd = [require_tool("victoria-metrics"), f"-httpListenAddr=127.0.0.1:{port}",
           f"-storageDataPath={tmp_path / 'vm'}", "-retentionPeriod=1y"]
    with _run(cmd, "starting http server at"):
        base = f"http://127.0.0.1:{port}"
        want = _ship(tmp_path, f"{base}/api/v1/write")
        assert httpx.get(f"{base}/internal/force_flush", timeout=10).status_code == 200
        r = httpx.get(f"{base}/api/v1/export", params={"match[]": '{__name__=~"cam_temp_.*",device="cam-7"}'},
                      timeout=10)
    import json

    rows = [json.loads(line) for line in r.text.splitlines() if line]
    got = {row["metric"]["__name__"]: [(ms / 1000, float(v))
                                       for ms, v in zip(row["timestamps"], row["values"], strict=True)]
           for row in rows}
    _check(want, got)
