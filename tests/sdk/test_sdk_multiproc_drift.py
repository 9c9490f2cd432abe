"""Real gunicorn and uvicorn with 4 workers: one PSI per feature, equal to one process's on the same rows.

Each worker scores nothing on its own share: its window's bin counts travel through the
multiprocess directory and any scrape computes the PSI once on their sum. Time is a file the
test writes (``mp_quality_app.FileClock``); waits are bounded polls (external processes).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from inferwatch.settings._env import ENV_MULTIPROC_DIR

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import mp_quality_app as app  # noqa: E402  (the served module, imported here for its row generator)
from test_sdk_multiproc_servers import free_port, get, poll  # noqa: E402  (the same helpers)

LABELS = {"service": "svc", "model": "m"}


@contextmanager
def serve(kind: str, tmp_path: Path) -> Iterator[str]:
    port, clock = free_port(), tmp_path / "clock"
    clock.write_text("10.0")
    env = {**os.environ, ENV_MULTIPROC_DIR: str(tmp_path / "mp"), "IW_TEST_CLOCK": str(clock),
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    if kind == "gunicorn":
        cmd = [sys.executable, "-m", "gunicorn", "-w", "4", "-b", f"127.0.0.1:{port}", "mp_quality_app:wsgi"]
    else:
        cmd = [sys.executable, "-m", "uvicorn", "--workers", "4", "--host", "127.0.0.1", "--port", str(port),
               "--log-level", "warning", "mp_quality_app:asgi"]
    log = (tmp_path / f"{kind}.log").open("wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    url = f"http://127.0.0.1:{port}"
    try:
        poll(lambda: get(url + "/metrics") is not None, 120, "server never answered")
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        finally:
            proc.kill()
            proc.wait(30)
            log.close()


def quality(families: Iterable[Metric]) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families for s in f.samples
            if s.name.startswith(("inferwatch_feature_psi", "inferwatch_drift_window", "inferwatch_sketch"))}


def scraped(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return quality(text_string_to_metric_families(text))


def check_merged_equals_one_process(kind: str, tmp_path: Path) -> None:
    requests = [(seed, 40 + seed % 7, 0.6 if seed % 2 else 0.0) for seed in range(48)]
    with serve(kind, tmp_path) as url:
        served_by: set[str] = set()
        end = time.monotonic() + 60  # a loaded runner may hand one worker every request of a batch
        with ThreadPoolExecutor(8) as pool:
            batch = requests
            while True:
                answers = list(pool.map(
                    lambda r: get(f"{url}/predict?seed={r[0]}&n={r[1]}&shift={r[2]}"), batch))
                assert all(a is not None and a.status_code == 200 for a in answers)
                served_by |= {a.text for a in answers if a is not None}
                if len(served_by) >= 2 or time.monotonic() > end:
                    break
                batch = [(seed, 40 + seed % 7, 0.6 if seed % 2 else 0.0)
                         for seed in range(len(requests), len(requests) + 8)]
                requests += batch
        assert len(served_by) >= 2, "all requests went to one worker"
        one = app.aggregator()  # one process that saw every row
        for seed, n, shift in requests:
            one.consume("prediction", [(app.rows(seed, n, shift), None, None)], 20.0)
        want = quality(one.collect(70.0))
        total = sum(n for _, n, _ in requests)
        assert want["inferwatch_drift_window_samples", tuple(sorted(LABELS.items()))] == total
        (tmp_path / "clock").write_text("70.0")  # the window [0, 60) closes in every worker
        key = ("inferwatch_drift_window_samples", tuple(sorted(LABELS.items())))

        def complete() -> bool:
            r = get(url + "/metrics")
            return r is not None and scraped(r.text).get(key) == total
        # the first scrape after the window closed already counts every row: it asks every
        # worker to publish and waits for them (sketches, like counters, exact at every scrape)
        assert complete(), f"the first scrape did not count all {total} rows"
        answered: set[str] = set()
        end = time.monotonic() + 60  # 40 scrapes at least: a loaded runner may hand one worker a long run
        for look in range(1000):
            r = get(url + "/metrics")
            assert r is not None
            got = scraped(r.text)
            assert got.keys() == want.keys(), "one PSI per feature, no pid, no sketch"
            for k, v in want.items():
                assert got[k] == pytest.approx(v, rel=1e-12), (r.headers["x-pid"], k)
            answered.add(r.headers["x-pid"])
            if len(answered) >= 2 or (look >= 40 and time.monotonic() > end):
                break
        assert len(answered) >= 2, "every scrape reached the same worker"


def test_gunicorn_4_workers_merged_psi_equals_one_process(tmp_path: Path) -> None:
    check_merged_equals_one_process("gunicorn", tmp_path)


def test_uvicorn_4_workers_merged_psi_equals_one_process(tmp_path: Path) -> None:
    check_merged_equals_one_process("uvicorn", tmp_path)
