"""Issue 59 #3: a server that cannot store says so: StorageWriteFailing, up 0, samples counted by reason.

The first tests run the server's generation on a simulated clock with the store's file
capped (SQLite's ``max_page_count``: writes past it fail as on a full disk); the last
runs a real ``inferwatch serve`` whose data directory is a small tmpfs the test mounts
and fills (root only: it skips, saying why, where mounting is refused): the page reaches a
webhook while the disk is full, and the resolve once space returns, each once.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from inferwatch._exceptions import StoreError
from inferwatch.config import Config, parse_config
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.server import Server, build_components
from inferwatch.store import SQLiteStore, parse_selector

from ._proc import serve, wait_query
from ._webhook import Webhook
from .conftest import FakeTarget

BOUND_S = 60.0
INTERVAL_S = 5.0  # the full-disk story's evaluation interval: the page within two of them
PAGE, RESOLVED = "StorageWriteFailing:firing", "StorageWriteFailing:resolved"


def _config(data: Path, target: FakeTarget, interval: str = "15s") -> Config:
    return parse_config(
        f"server: {{data_dir: '{data}', evaluation_interval: {interval}}}\n"
        f"scrape: {{targets: [{{job: svc, url: '{target.url}', interval: {interval}}}]}}\n")


def _fill(store: SQLiteStore, t: float) -> None:
    """Fill the capped file: big batches, then one sample at a time until even that is refused."""
    with pytest.raises(StoreError):
        for k in range(1000):
            store.append([Sample(Labels.of("filler", i=str(k), j=str(n)), t, 1.0) for n in range(200)])
    with pytest.raises(StoreError):
        for k in range(100_000):
            store.append([Sample(Labels.of("filler", i="0", j="0"), t + 1e-3 * (k + 1), 1.0)])


def _state(server: Server, name: str) -> str:
    got = [str(a.state) for a in server.components.evaluator.active() if a.alertname == name]
    return got[0] if got else "inactive"


def test_storage_write_failing_fires_within_two_rounds_and_resolves_without_restart(
        tmp_path: Path, target: FakeTarget) -> None:
    target.body = "app_requests_total 1\n"
    clock = SimulatedClock(10_000.0)
    store = SQLiteStore(tmp_path / "tsdb.sqlite", clock=clock, max_bytes=1024 * 1024)
    server = Server(build_components(_config(tmp_path, target), clock=clock, store=store), clock=clock)
    comps = server.components

    def round_at(t: float) -> None:
        clock.set(t)
        comps.scrape.tick(t)
        server.tick(t)

    try:
        round_at(10_000.0)  # a healthy round: the storage series exist on disk
        assert _state(server, "StorageWriteFailing") == "inactive"
        _fill(store, 10_001.0)  # the disk is full from here on
        round_at(10_015.0)
        round_at(10_030.0)
        assert _state(server, "StorageWriteFailing") == "firing"  # within two evaluation intervals
        (up,) = store.select(parse_selector('up{job="svc"}'), 10_030.0, 10_030.0)
        assert up.v.tolist() == [0.0]  # the target is down in memory, so TargetDown can fire
        (health,) = comps.scrape.targets()
        assert health.health == "down" and "disk full" in health.last_error
        assert store.stats.write_failed.get("disk_full", 0) > 0  # what was lost, by reason

        store.delete_before(10_002.0)  # space returns (retention, an operator)
        round_at(10_045.0)
        round_at(10_060.0)
        assert _state(server, "StorageWriteFailing") == "inactive"  # resolved, no restart
        (up,) = store.select(parse_selector('up{job="svc"}'), 10_060.0, 10_060.0)
        assert up.v.tolist() == [1.0]
    finally:
        server.stop()


def test_disk_almost_full_reads_the_filesystem_series(tmp_path: Path, target: FakeTarget) -> None:
    # rule: below 10 % or 1 GiB free for 15m: a P2 warning, before writes fail
    clock = SimulatedClock(20_000.0)
    cfg = _config(tmp_path, target)
    server = Server(build_components(cfg, clock=clock), clock=clock)
    health = server.components.health
    assert health is not None
    health._usage = lambda path: (500e6, 100e9)  # 0.5 GB free of 100 GB
    try:
        for k in range(0, 17 * 60, 60):
            clock.set(20_000.0 + k)
            server.tick(20_000.0 + k)
        assert _state(server, "DiskAlmostFull") == "firing"
        health._usage = lambda path: (50e9, 100e9)
        clock.set(21_100.0)
        server.tick(21_100.0)
        assert _state(server, "DiskAlmostFull") == "inactive"
    finally:
        server.stop()


def _mount_tmpfs(path: Path, size: str) -> None:
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs to fill (needs root): {done.stderr.strip() or done.returncode}")


def _alert_state(client: httpx.Client, name: str) -> str:
    alerts = client.get("/api/v1/alerts").json()["data"]["alerts"]
    return next((a["state"] for a in alerts if a["labels"]["alertname"] == name), "inactive")


def _until(pred: object, what: str) -> None:
    end = time.monotonic() + BOUND_S
    while time.monotonic() < end:
        if pred():  # type: ignore[operator]
            return
        time.sleep(0.2)  # polling a real server's state, bounded by BOUND_S
    raise AssertionError(f"{what} not within {BOUND_S:g} s")


def _rounds(client: httpx.Client) -> float:
    text = client.get("/metrics").text
    (line,) = [x for x in text.splitlines() if x.startswith("inferwatch_rule_group_iterations_total ")]
    return float(line.split()[1])


@pytest.mark.slow
def test_a_full_data_disk_pages_while_full_and_resolves_once_space_returns(
        tmp_path: Path, target: FakeTarget) -> None:
    # rule: the page reaches a person while the disk is full (the alerting state, on the same
    # disk, fails open into memory), within two evaluation intervals; the resolve once space
    # returns, without a restart; each delivered once (the held state is written back)
    disk = tmp_path / "disk"
    _mount_tmpfs(disk, "24m")
    hook = Webhook(key=lambda a: f"{a['labels']['alertname']}:{a['status']}")
    try:
        target.body = "app_requests_total 1\n"
        cfg = (f"server: {{data_dir: '{disk / 'data'}', evaluation_interval: {INTERVAL_S:g}s}}\n"
               f"scrape: {{targets: [{{job: svc, url: '{target.url}', interval: 1s}}]}}\n"
               "alerting:\n  default_actions: false\n"
               "  route: {receiver: hook, group_by: [alertname], group_wait: 0s, group_interval: 1s}\n"
               f"  receivers: [{{name: hook, type: webhook, url: '{hook.url}', send_resolved: true}}]\n")
        with serve(cfg, tmp_path) as served, httpx.Client(base_url=served.url, timeout=BOUND_S) as client:
            wait_query(client, "inferwatch_storage_write_failing == 0")
            filler = disk / "filler"
            with filler.open("wb") as f:  # fill the filesystem to the last byte
                try:
                    while True:
                        f.write(b"\0" * (256 * 1024))
                        f.flush()
                except OSError:
                    pass
            full_at = time.time()
            assert hook.wait(lambda: hook.counts[PAGE] >= 1), "no page while the disk is full"
            paged_at = hook.times[next(k for k, b in enumerate(hook.accepted)
                                       if b["alerts"][0]["labels"]["alertname"] == "StorageWriteFailing")]
            assert filler.exists() and shutil.disk_usage(disk).free < 1024 * 1024  # still full
            (t,) = client.get("/api/v1/targets").json()["data"]["activeTargets"]
            assert t["health"] == "down" and "disk full" in t["lastError"], t
            up = client.get("/api/v1/query", params={"query": 'up{job="svc"}'}).json()["data"]["result"]
            assert up[0]["value"][1] == "0"
            metrics = client.get("/metrics").text
            assert 'inferwatch_storage_failed_samples_total{reason="disk_full"}' in metrics
            assert "inferwatch_storage_write_failing 1.0" in metrics
            filler.unlink()  # space returns
            assert hook.wait(lambda: hook.counts[RESOLVED] >= 1), "no resolve after space returned"
            wait_query(client, 'up{job="svc"} == 1')
            seen = _rounds(client)  # one more round after the resolve: a page sent twice would be by then
            _until(lambda: _rounds(client) >= seen + 1, "one more evaluation round")
        print(f"full disk: paged {paged_at - full_at:.2f}s after the disk filled "
              f"(evaluation interval {INTERVAL_S:g}s); deliveries {dict(hook.counts)}")
        assert paged_at - full_at <= 2 * INTERVAL_S
        assert hook.counts[PAGE] == 1 and hook.counts[RESOLVED] == 1, hook.counts
        err = "".join(served.lines)
        changes = [x for x in err.splitlines()
                   if "the store cannot write" in x or "the store writes again" in x]
        # once per change of state (a nearly full filesystem may let a write through now and then)
        assert changes and all(("cannot" in x) == (k % 2 == 0) for k, x in enumerate(changes)), changes
        assert "writes again" in changes[-1], err
        held = [x for x in err.splitlines()
                if "the alerting state cannot be written" in x or "the alerting state is written to" in x]
        assert all(("cannot" in x) == (k % 2 == 0) for k, x in enumerate(held)), held
        # the state held in memory, then written to its file (a write that fitted in the WAL file's
        # room did not need the disk: then nothing was held, and the page went out all the same)
        assert not held or "is written to" in held[-1], err
        assert "Traceback" not in err, err
    finally:
        hook.stop()
        subprocess.run(["umount", "-l", str(disk)], check=False)
