"""Issue 59 #1: SIGTERM (systemd, Docker, Kubernetes) and SIGINT stop ``serve`` the same way.

Real processes on loopback: the signal is sent to ``inferwatch serve`` during a storm of
2,000 alerts to a slow webhook; it exits 0 within its grace, leaves no SQLite ``-wal``
file, and after the restart every alert has reached the webhook exactly once. Sent while
serve starts (its handler just installed; its files being opened), it ends the start:
exit 0, every file whole.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from tests._process import catches, poll_until
from tests.server._proc import spawn_serve, start_serve
from tests.server._webhook import Webhook, post_alerts, stop_serve

from inferwatch.model import stop_signals
from inferwatch.server._shutdown import Shutdown, Step

TOKEN = "t0ken-for-shutdown"
BOUND_S = 60.0
STORM_BOUND_S = 300.0  # 2,000 deliveries on a loaded 2-core runner: returns as soon as they are in
GRACE_S = 25.0
STORM = 2000


@pytest.fixture
def webhook() -> Iterator[Webhook]:
    w = Webhook(delay=0.05)
    yield w
    w.stop()


def _config(tmp_path: Path, url: str) -> Path:
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text(f"""
server: {{data_dir: '{tmp_path / "data"}', api_token: {TOKEN}, shutdown_grace: {GRACE_S:g}s}}
rules: {{default_pack: false}}
alerting:
  default_actions: false
  route: {{receiver: hook, group_by: [alertname, instance], group_wait: 0s, group_interval: 1h}}
  receivers: [{{name: hook, type: webhook, url: '{url}', max_attempts: 20}}]
""")
    return cfg


def _storm(url: str) -> None:
    alerts = [{"status": "firing", "annotations": {"summary": "storm"},
               "labels": {"alertname": "Storm", "instance": f"i{k}", "severity": "warning"}}
              for k in range(STORM)]
    with httpx.Client(timeout=BOUND_S) as c:
        for j in range(0, STORM, 100):
            r = post_alerts(url, alerts[j:j + 100], TOKEN, c)
            assert r.status_code == 200, r.text


def _wal_files(data: Path) -> list[str]:
    return sorted(p.name for p in data.iterdir() if p.name.endswith(("-wal", "-journal")))


@pytest.mark.slow
def test_sigterm_in_a_storm_exits_0_checkpointed_and_every_alert_arrives_once(
        tmp_path: Path, webhook: Webhook) -> None:
    cfg = _config(tmp_path, webhook.url)
    proc, url = start_serve(cfg)
    try:
        _storm(url)
        assert webhook.wait(lambda: len(webhook.counts) >= 100)  # deliveries are under way, most still owed
    finally:
        code, err, took = stop_serve(proc, signal.SIGTERM)
    assert code == 0, err
    assert "Traceback" not in err, err
    assert "SIGTERM: stopping" in err and "stopped in " in err, err
    print(f"SIGTERM mid-storm: exit {code} after {took:.2f}s (grace {GRACE_S:g}s), "
          f"{len(webhook.counts)} of {STORM} alerts delivered before the stop")
    assert took < BOUND_S  # the watchdog bounds it at the grace; the margin is for a loaded runner
    assert _wal_files(tmp_path / "data") == []
    delivered_before = len(webhook.counts)
    assert delivered_before < STORM  # the stop came mid-storm: the rest is owed across the restart

    webhook.delay = 0.0
    proc, url = start_serve(cfg)
    try:
        assert webhook.wait(lambda: len(webhook.counts) >= STORM, STORM_BOUND_S)
    finally:
        code, err, _ = stop_serve(proc, signal.SIGINT)
    assert code == 0, err
    assert "SIGINT: stopping" in err, err
    twice = {k: n for k, n in webhook.counts.items() if n > 1}
    assert len(webhook.counts) == STORM and not twice, f"sent more than once: {twice}"
    assert _wal_files(tmp_path / "data") == []


def _caught(proc: subprocess.Popen[str], data: Path) -> bool:
    return catches(proc.pid)


def _building(proc: subprocess.Popen[str], data: Path) -> bool:
    return (data / "tsdb.sqlite").exists()


# the moments of a start: the stop handler just installed (config not read yet), the store's
# file just created (build under way); once uvicorn serves (its own handlers), the storm test
MOMENTS: dict[str, Callable[[subprocess.Popen[str], Path], bool]] = {"caught": _caught, "building": _building}


@pytest.mark.slow
@pytest.mark.parametrize("moment", MOMENTS)
def test_sigterm_at_any_moment_of_the_start_exits_0_with_nothing_half_written(
        tmp_path: Path, moment: str) -> None:
    # rule: inferwatch's own handler is installed first thing; a stop during start-up ends the
    # start where it is safe and runs the same shutdown: exit 0, files checkpointed and whole
    cfg = tmp_path / "inferwatch.yml"
    data = tmp_path / "data"
    cfg.write_text(f"server: {{data_dir: '{data}', api_token: {TOKEN}}}\n")
    proc = spawn_serve(cfg)
    try:
        poll_until(lambda: MOMENTS[moment](proc, data), moment)
    finally:
        code, err, took = stop_serve(proc, signal.SIGTERM)
    print(f"SIGTERM at {moment}: exit {code} after {took:.2f}s")
    assert code == 0, err
    assert "Traceback" not in err, err
    assert "SIGTERM: stopping" in err, err
    assert moment == "caught" or "stopped in " in err, err  # the shutdown ran over what was open
    files = sorted(data.glob("*.sqlite")) if data.exists() else []
    assert _wal_files(data) == [] if data.exists() else True
    for f in files:  # nothing half-written: each file SQLite reads whole
        with sqlite3.connect(f) as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",), f
    assert moment == "caught" or files  # a later moment had opened the files, and closed them


def test_a_step_that_fails_does_not_stop_the_next_ones() -> None:
    lines: list[str] = []
    ran: list[str] = []

    def boom(left: float) -> None:
        raise RuntimeError("disk gone")

    sd = Shutdown(5.0, announce=lines.append)
    left = sd.run([Step("store", boom), Step("state", lambda left: ran.append("state") or None)])
    assert left == ["store: failed (RuntimeError: disk gone)"] and ran == ["state"]
    assert "not finished: store: failed" in lines[-1]


def test_the_watchdog_ends_the_process_at_the_grace_naming_the_step() -> None:
    # rule: a step that hangs past the grace does not wait for the orchestrator's SIGKILL
    lines: list[str] = []
    exited = threading.Event()
    codes: list[int] = []
    release = threading.Event()

    def exit_(code: int) -> None:
        codes.append(code)
        exited.set()
        release.set()

    sd = Shutdown(1.0, announce=lines.append, force_exit=exit_)
    sd.run([Step("finishing deliveries", lambda left: release.wait(BOUND_S) and None)])
    assert exited.is_set() and codes == [0]
    assert any("passed its grace of 1s while finishing deliveries" in x for x in lines), lines


def test_stop_signals_restores_the_previous_handlers() -> None:
    before = signal.getsignal(signal.SIGTERM)
    got: list[int] = []
    with stop_signals(lambda sig, frame: got.append(sig)):
        signal.raise_signal(signal.SIGTERM)
        assert got == [signal.SIGTERM]
    assert signal.getsignal(signal.SIGTERM) == before
