"""False pages of the quality dimension: the new user's setup replayed, notifications counted (issue #29).

The README's model server (``quality_pages_app.py``: Starlette, ``Monitor``, a
``DriftAggregator``) runs under real ``uvicorn --workers 2`` with a multiprocess
directory. Compressed time (a file every worker reads as its clock) moves in
15 s steps; each step sends 6 requests of 5 rows and records one scrape of
``/metrics``, as ``inferwatch serve`` would. Story: 30 minutes of healthy traffic (the app
starts 60 s before a drift window closes), 25 minutes with ``age`` and
``income`` shifted (PSI about 0.34: review, not rollback), a 3-minute outage
answering 503, then the traffic stops for 17 minutes while scrapes go on.

The scraped series are then replayed through the default rule pack and the
default notification pipeline (receivers recorded, actions recorded) on the
same timeline, and the notifications are counted. What a new user should get:
0 notifications before the shift, one drift notification per receiver naming
age and income, one P0 page for the outage (not resolved while the traffic is
gone), no rollback recommendation for a feature that did not move.

    python benchmarks/bench_quality_pages.py            # table
    python benchmarks/bench_quality_pages.py --json     # counts as JSON (the test reads them)

It runs against whatever ``inferwatch`` is importable (PYTHONPATH), old code included.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from prometheus_client.parser import text_string_to_metric_families

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _results  # noqa: E402
from inferwatch.alerting import ReplayPipeline  # noqa: E402
from inferwatch.config import parse_config  # noqa: E402
from inferwatch.rules import load_rules  # noqa: E402
from inferwatch.rules._replay import run_replay  # noqa: E402
from inferwatch.rules._testfile import parse_test_file  # noqa: E402
from quality_pages_data import WINDOW_S, sample  # noqa: E402

STEP_S = 15.0
HEALTHY, SHIFT, OUTAGE, STOPPED = 120, 100, 12, 68  # steps of 15 s: 30 min, 25 min, 3 min, 17 min
REQUESTS, ROWS = 6, 5
T0 = 1_800_000_000.0 - 60.0  # a minute before a window boundary: the first window is nearly empty
SHIFTED = {"age", "income"}


@contextmanager
def uvicorn(tmp: Path) -> Iterator[str]:
    """``uvicorn --workers 2`` serving the app, on a free loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = {**os.environ, "INFERWATCH_MULTIPROC_DIR": str(tmp / "mp"), "IW_BENCH_CLOCK": str(tmp / "clock"),
           "IW_BENCH_OUTAGE": str(tmp / "outage"),
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    log = (tmp / "uvicorn.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--workers", "2", "--host", "127.0.0.1", "--port", str(port),
         "--log-level", "warning", "quality_pages_app:app"], env=env, stdout=log, stderr=subprocess.STDOUT,
        cwd=tmp)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while _get(url + "/healthz") is None:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("uvicorn did not start: " + (tmp / "uvicorn.log").read_text()[-2000:])
            time.sleep(0.1)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        finally:
            proc.kill()
            proc.wait(30)
            log.close()


def _get(url: str) -> httpx.Response | None:
    try:
        return httpx.get(url, timeout=30)
    except httpx.TransportError:
        return None


def connections(url: str, workers: int = 2) -> list[httpx.Client]:
    """One kept-alive connection to each worker (a connection stays with the worker that accepted it)."""
    by_pid: dict[str, httpx.Client] = {}
    spare: list[httpx.Client] = []
    for _ in range(200):
        client = httpx.Client(base_url=url, timeout=30)
        pid = client.get("/healthz").text
        if pid in by_pid:
            spare.append(client)
        else:
            by_pid[pid] = client
        if len(by_pid) == workers:
            break
    for c in spare:
        c.close()
    if len(by_pid) < workers:
        raise RuntimeError(f"reached {len(by_pid)} of {workers} workers")
    return list(by_pid.values())


def phase_of(step: int) -> str:
    """The story's phase at a step."""
    for name, end in (("healthy", HEALTHY), ("shift", HEALTHY + SHIFT), ("outage", HEALTHY + SHIFT + OUTAGE)):
        if step < end:
            return name
    return "stopped"


Series = dict[tuple[str, tuple[tuple[str, str], ...]], list[float | None]]
"""Scraped series: (name, sorted labels) -> one value per step (None: absent)."""


def drive(tmp: Path) -> tuple[Series, dict[str, Any]]:
    """Run the story against the app; the scraped series (one value per step) and traffic facts."""
    steps = HEALTHY + SHIFT + OUTAGE + STOPPED
    series: Series = {}
    rng = np.random.default_rng(7)
    pids: set[int] = set()
    codes: dict[int, int] = {}
    (tmp / "clock").write_text(repr(T0))
    with uvicorn(tmp) as url:
        clients = connections(url)
        try:
            for step in range(steps):
                (tmp / "clock").write_text(repr(T0 + step * STEP_S))
                phase = phase_of(step)
                if phase == "outage":
                    (tmp / "outage").touch()
                if phase != "stopped":
                    for i in range(REQUESTS):  # the workers take turns, as a balancer would send them
                        rows = sample(rng, ROWS, shifted=phase != "healthy")
                        r = clients[i % len(clients)].post("/predict", json={"rows": rows})
                        codes[r.status_code] = codes.get(r.status_code, 0) + 1
                        if r.status_code == 200:
                            pids.add(r.json()["pid"])
                # Scrapes reach either worker. A worker publishes its state when scraped (else every
                # 0.5 s of real time): compressed steps are far shorter than that, so every worker is
                # scraped and the last one's answer recorded, as fresh as a real 15 s interval makes it.
                order = clients[step % len(clients):] + clients[:step % len(clients)]
                for other in order[1:]:
                    other.get("/metrics")
                scrape = order[0].get("/metrics").text
                for family in text_string_to_metric_families(scrape):
                    for s in family.samples:
                        if s.name.startswith("inferwatch_") and not s.name.endswith("_created"):
                            labels = {**s.labels, "job": "ranker", "instance": "app"}  # as a scrape adds
                            key = (s.name, tuple(sorted(labels.items())))
                            series.setdefault(key, [None] * steps)[step] = float(s.value)
        finally:
            for c in clients:
                c.close()
    return series, {"workers_that_served": len(pids), "responses": codes}


def replay(series: Series) -> ReplayPipeline:
    """The scraped series through the default rules and notification pipeline."""
    steps = HEALTHY + SHIFT + OUTAGE + STOPPED
    lines = ["evaluation_interval: 15s", "tests:", "  - interval: 15s", "    input_series:"]
    for (name, labels), values in sorted(series.items()):
        sel = name + "{" + ",".join(f'{k}="{v}"' for k, v in labels) + "}"
        vals = " ".join("_" if v is None else repr(v) for v in values)
        lines += [f"      - series: '{sel}'", f"        values: '{vals}'"]
    end = int((steps - 1) * STEP_S)
    lines += ["    alert_rule_test:", f"      - eval_time: {end}s", "        alertname: ServiceUnavailable",
              "        exp_alerts: []"]
    config = parse_config("")
    sink = ReplayPipeline(config.alerting)
    run_replay(parse_test_file("\n".join(lines)), load_rules(config), sink=sink, on_evaluated=sink.evaluated)
    sink.finish(float(end))
    return sink


def count(sink: ReplayPipeline) -> dict[str, Any]:
    """The notification counts the issue asks for."""
    shift_t, outage_t = HEALTHY * STEP_S, (HEALTHY + SHIFT) * STEP_S
    stopped_t = (HEALTHY + SHIFT + OUTAGE) * STEP_S
    before, drift, pages, resolved_p0, other = [], {}, 0, 0, []
    for n in sink.notifications:
        name = n["group_labels"].get("alertname") or (n["alerts"][0]["alertname"] if n["alerts"] else "-")
        firing = [a for a in n["alerts"] if a["status"] == "firing"]
        if n["t"] < shift_t:
            before.append(f"{n['receiver']}:{name}")
        elif name.startswith("FeatureDrift") and firing:
            names = sorted({a["labels"].get("feature", "") for a in firing})
            drift.setdefault(n["receiver"], []).append(f"{name}[{','.join(names)}]")
        elif name == "ServiceUnavailable" and firing and n["t"] >= outage_t:
            pages += 1
        elif name == "ServiceUnavailable" and not firing and n["t"] >= stopped_t:
            resolved_p0 += 1
        else:
            other.append(f"{n['receiver']}:{name}:{'firing' if firing else 'resolved'}")
    rollbacks = sorted({a["labels"].get("feature", "") for a in sink.actions
                        if a["action"] == "rollback" and a["phase"] != "resolve"})
    return {
        "notifications_before_shift": len(before), "before_shift": before,
        "drift_notifications_per_receiver": {r: len(v) for r, v in sorted(drift.items())},
        "drift_notifications": drift,
        "p0_pages": pages, "p0_resolved_while_traffic_stopped": resolved_p0,
        "rollback_recommended_for": rollbacks,
        "rollback_for_unmoved_features": sorted(set(rollbacks) - SHIFTED),
        "other_notifications": other,
    }


def record(result: dict[str, Any]) -> None:
    """Its row of RESULTS.md (``run.py --results``); the "before" cell is the fix's (fixed) reference."""
    per = sorted(set(result["drift_notifications_per_receiver"].values()))
    drift = f"{'/'.join(map(str, per)) or 0} drift notification{'' if per == [1] else 's'}"
    _results.record("Model quality and estimated performance",
                    "False pages in the README app's replay (drift, outage, silence)",
                    f"{result['notifications_before_shift']} before the shift; {drift}; "
                    f"{result['p0_pages']} P0",
                    "main before the fix (5f1283e): 2; 2; 1", None)


def main(argv: list[str]) -> int:
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="iw-bench-q29-") as tmp:
        series, traffic = drive(Path(tmp))
    took = time.perf_counter() - t0
    sink = replay(series)
    result = {**count(sink), **traffic, "drive_s": round(took, 1),
              "replay_s": round(time.perf_counter() - t0 - took, 1), "window_s": WINDOW_S}
    record(result)
    if "--json" in argv:
        print(json.dumps(result))
        return 0
    for key, value in result.items():
        print(f"{key:38} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
