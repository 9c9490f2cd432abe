"""End to end: ``inferwatch serve`` remote-writes to a real Prometheus 2.42 and a real VictoriaMetrics,
is killed with SIGKILL mid-stream, restarts on the same data directory, and every sample it stored is in
both receivers exactly once (same series, timestamps and values; nothing missing, nothing twice).
"""

from __future__ import annotations

import json
import math
import re
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from inferwatch.edge import REMOTE_WRITE_HEADERS, encode_write_request
from inferwatch.model import Labels, Sample

from ._proc import Served, serve, wait_scraped
from .conftest import FakeTarget

pytestmark = pytest.mark.slow

Points = dict[tuple[tuple[str, str], ...], list[tuple[int, float]]]  # series -> [(ms, value)]
SERIES = 60
WRITE_TOKEN = "e2e-write-t0ken"
VM_REL = 1e-11  # VictoriaMetrics stores a float as a decimal of about 12 significant digits


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _poll(check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Ask ``check`` until it holds (an external process is involved: a bounded deadline)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@contextmanager
def _process(args: list[str], base: str, ready: str, log: Path) -> Iterator[str]:
    """Run ``args`` until the block ends; yield ``base`` once ``base + ready`` answers 200."""
    with log.open("w") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    try:
        _poll(lambda: proc.poll() is None and httpx.get(base + ready, timeout=2).status_code == 200,
              f"{args[0]} ready", timeout=60)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def prometheus(tmp_path: Path, require_tool: Callable[..., str]) -> Iterator[str]:
    binary = require_tool("prometheus")
    port = _free_port()
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text("global: {}\n")
    with _process([binary, f"--config.file={cfg}", "--web.enable-remote-write-receiver",
                   f"--storage.tsdb.path={tmp_path / 'prom'}", f"--web.listen-address=127.0.0.1:{port}"],
                  f"http://127.0.0.1:{port}", "/-/ready", tmp_path / "prometheus.log") as url:
        yield url


@pytest.fixture
def victoria(tmp_path: Path, require_tool: Callable[..., str]) -> Iterator[str]:
    binary = require_tool("victoria-metrics")
    port = _free_port()
    # -dedup.minScrapeInterval: VictoriaMetrics keeps one sample per series and millisecond, so a batch
    # re-sent after a crash (at-least-once) counts once, as it does for an HA pair of Prometheus servers.
    with _process([binary, f"-storageDataPath={tmp_path / 'vm'}", f"-httpListenAddr=127.0.0.1:{port}",
                   "-dedup.minScrapeInterval=1ms", "-loggerLevel=ERROR"],
                  f"http://127.0.0.1:{port}", "/health", tmp_path / "vm.log") as url:
        yield url


def _body(k: int) -> str:
    lines = ["# TYPE model_requests_total counter"]
    lines += [f'model_requests_total{{model="m{i}"}} {k * (i + 1)}' for i in range(SERIES)]
    return "\n".join(lines) + "\n"


def _config(tmp_path: Path, target: FakeTarget, prometheus: str, victoria: str) -> str:
    prom = prometheus.replace("http://", "http://inferwatch:s3cr3t-pw@")  # shown redacted, never in full
    queue = "{max_samples_per_send: 25, batch_send_deadline: 200ms, min_backoff: 30ms, max_backoff: 1s}"
    return (f"server: {{data_dir: '{tmp_path / 'data'}', evaluation_interval: 1s, api_token: {WRITE_TOKEN},\n"
            "  remote_write: [\n"
            f"  {{url: '{prom}/api/v1/write', name: prometheus, queue: {queue}}},\n"
            f"  {{url: '{victoria}/api/v1/write', name: victoria, bearer_token: vm-t0ken,\n"
            f"    queue: {queue}}}]}}\n"
            f"scrape: {{targets: [{{job: app, url: '{target.url}', interval: 500ms}}]}}\n"
            "edge: {devices: {cam-1: cam-1-upload-token}}\n")  # the device watch's samples: the ingest path


def _self_metric(served: Served, name: str, remote: str) -> float:
    text = httpx.get(f"{served.url}/metrics", timeout=10).text
    m = re.search(rf'^{name}{{remote_name="{remote}",url="[^"]*"}} (\S+)$', text, re.M)
    return float(m.group(1)) if m else 0.0


def _matrix(result: list[dict[str, object]], cut_ms: int) -> Points:
    out: Points = {}
    for r in result:
        metric = r["metric"]
        assert isinstance(metric, dict)
        values = r["values"]
        assert isinstance(values, list)
        pts = [(round(float(t) * 1000), float(v)) for t, v in values]
        pts = [(t, v) for t, v in pts if t <= cut_ms and not math.isnan(v)]
        if pts:
            out[tuple(sorted(metric.items()))] = pts
    return out


def _query(base: str, at: float, cut_ms: int) -> Points:
    r = httpx.get(f"{base}/api/v1/query", params={"query": '{__name__=~".+"}[10m]', "time": f"{at:.3f}"},
                  timeout=30)
    r.raise_for_status()
    return _matrix(r.json()["data"]["result"], cut_ms)


def _behind(base: str, cut_ms: int) -> list[tuple[tuple[str, str], ...]]:
    """The series the server writes itself (one sampled in the 10 s before ``cut_ms``) with none after it."""
    now = time.time()
    before, after = _query(base, cut_ms / 1000, cut_ms), _query(base, now, round(now * 1000) + 1)
    return [series for series, pts in before.items()
            if pts[-1][0] > cut_ms - 10_000 and ("__name__", "agent_pushed") not in series  # pushed: no more
            and not any(t > cut_ms for t, _ in after.get(series, []))]


def _export(base: str, cut_ms: int) -> Points:
    """VictoriaMetrics' raw samples (every stored one, duplicates included, none hidden)."""
    httpx.get(f"{base}/internal/force_flush", timeout=30)
    r = httpx.get(f"{base}/api/v1/export", params={"match[]": '{__name__=~".+"}'}, timeout=30)
    r.raise_for_status()
    out: Points = {}
    for line in r.text.splitlines():
        row = json.loads(line)
        pts = [(int(t), float(v)) for t, v in zip(row["timestamps"], row["values"], strict=True)]
        pts = sorted((t, v) for t, v in pts if t <= cut_ms and not math.isnan(v))
        if pts:
            key = tuple(sorted(row["metric"].items()))
            out[key] = out.get(key, []) + pts
    return {k: sorted(v) for k, v in out.items()}


def _missing_or_extra(stored: Points, got: Points, rel: float = 0.0) -> list[str]:
    """What differs per series: timestamps exactly (each once), values within ``rel``."""
    problems = []
    for series, pts in stored.items():
        have = got.get(series, [])
        times, got_times = [t for t, _ in pts], [t for t, _ in have]
        values_ok = len(have) == len(pts) and all(
            math.isclose(a, b, rel_tol=rel) for (_, a), (_, b) in zip(pts, have, strict=True))
        if times != got_times or not values_ok:
            missing = sorted(set(times) - set(got_times))[:3]
            twice = sorted({t for t in got_times if got_times.count(t) > 1})[:3]
            extra = sorted(set(got_times) - set(times))[:3]
            problems.append(f"{dict(series)}: {len(pts)} stored, {len(have)} received; missing {missing}, "
                            f"twice {twice}, not stored {extra}, values equal: {values_ok}")
    return problems


def test_kill_9_mid_stream_then_every_stored_sample_is_in_both_receivers_once(
        tmp_path: Path, target: FakeTarget, prometheus: str, victoria: str) -> None:
    target.body = _body(0)
    config = _config(tmp_path, target, prometheus, victoria)
    k = 0
    with serve(config, tmp_path) as first:
        client = httpx.Client(base_url=first.url, timeout=10)
        wait_scraped(client)

        def streaming() -> bool:
            nonlocal k
            k += 1
            target.body = _body(k)
            return all(_self_metric(first, "inferwatch_remote_write_samples_sent_total", r) >= 500
                       for r in ("prometheus", "victoria"))

        _poll(streaming, "both receivers to acknowledge 500 samples")
        first.proc.kill()  # SIGKILL while scrapes and sends go on: no shutdown, no flush
        first.proc.wait(30)
        client.close()

    with serve(config, tmp_path) as second:
        client = httpx.Client(base_url=second.url, timeout=10)
        sent_before = _self_metric(second, "inferwatch_remote_write_samples_sent_total", "prometheus")

        def more() -> bool:
            nonlocal k
            k += 1
            target.body = _body(k)
            return _self_metric(second, "inferwatch_remote_write_samples_sent_total", "prometheus") >= \
                sent_before + 500

        _poll(more, "the restarted server to send 500 more samples")
        now = time.time()  # an agent pushes into the server (remote-write in): shipped on too
        pushed = [Sample(Labels.of("agent_pushed", source="alloy"), now - 3 + k, float(k)) for k in range(3)]
        r = client.post("/api/v1/write", content=encode_write_request(pushed),
                        headers={**REMOTE_WRITE_HEADERS, "Authorization": f"Bearer {WRITE_TOKEN}"})
        assert r.status_code == 204, r.text
        cut = time.time()
        cut_ms = round(cut * 1000)
        # Every sample stamped before `cut` is stored once each of the server's own writers (the
        # scrape loop, the device watch: each stores in the order it stamps) has stored one stamped
        # after it. (A 1.5 s sleep stood for this wait; a loaded runner can starve a scrape longer.)
        _poll(lambda: not _behind(second.url, cut_ms), "a sample stamped after the cut from each writer")
        stored = _query(second.url, cut, cut_ms)
        assert sum(map(len, stored.values())) > 1000
        assert len([s for s in stored if ("__name__", "model_requests_total") in s]) == SERIES
        assert [s for s in stored if ("device", "cam-1") in s]  # stored by the edge ingest path
        assert len(stored[(("__name__", "agent_pushed"), ("source", "alloy"))]) == 3  # and by remote-write in

        def delivered() -> bool:
            return not _missing_or_extra(stored, _query(prometheus, cut, cut_ms)) and \
                not _missing_or_extra(stored, _export(victoria, cut_ms), VM_REL)

        try:
            _poll(delivered, "every stored sample in both receivers", timeout=90)
        except AssertionError:
            prom_problems = _missing_or_extra(stored, _query(prometheus, cut, cut_ms))
            vm_problems = _missing_or_extra(stored, _export(victoria, cut_ms), VM_REL)
            raise AssertionError(f"prometheus: {prom_problems[:5]}\nvictoria: {vm_problems[:5]}") from None
        # nothing the server did not store, either (a receiver holds only what it was sent)
        assert set(_query(prometheus, cut, cut_ms)) == set(stored)
        assert set(_export(victoria, cut_ms)) == set(stored)

        metrics = httpx.get(f"{second.url}/metrics", timeout=10).text
        assert "s3cr3t-pw" not in metrics and "vm-t0ken" not in metrics
        port = prometheus.rsplit(":", 1)[1]
        assert (f'inferwatch_remote_write_samples_pending{{remote_name="prometheus",'
                f'url="http://127.0.0.1:{port}/api/v1/write"}}') in metrics
        for name in ("failed_total", "dropped_total"):
            assert re.search(rf'^inferwatch_remote_write_samples_{name}{{remote_name="victoria".*}} 0\.0$',
                             metrics, re.M), name
        client.close()
    log = "".join(second.lines) + "".join(first.lines)
    assert "s3cr3t-pw" not in log and "vm-t0ken" not in log


@pytest.fixture
def lossy_proxy(prometheus: str) -> Iterator[tuple[str, list[int]]]:
    """A loopback proxy to Prometheus that forwards each write, and for the first one loses the answer."""
    import http.server
    import threading

    answers: list[int] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            r = httpx.post(f"{prometheus}/api/v1/write", content=body, timeout=30,
                           headers={k: v for k, v in self.headers.items() if k.lower() != "host"})
            answers.append(r.status_code)
            if len(answers) == 1:  # Prometheus stored it; the sender never hears so, and sends it again
                self.close_connection = True
                self.connection.close()
                return
            self.send_response(r.status_code)
            self.send_header("Content-Length", str(len(r.content)))
            self.end_headers()
            self.wfile.write(r.content)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    th = threading.Thread(target=server.serve_forever, daemon=True)
    th.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/api/v1/write", answers
    server.shutdown()
    server.server_close()
    th.join(10)


def test_a_batch_prometheus_already_has_sent_again_loses_and_doubles_nothing(
        tmp_path: Path, prometheus: str, lossy_proxy: tuple[str, list[int]]) -> None:
    from inferwatch.config import RemoteWriteSpec
    from inferwatch.model import Labels, SimulatedClock
    from inferwatch.server.remote._remote_write_out import RemoteSender
    from inferwatch.server.remote._rw_wal import RemoteWAL

    url, answers = lossy_proxy
    t0 = float(int(time.time()) - 60)
    clock = SimulatedClock(t0)
    wal = RemoteWAL(tmp_path / "rw.sqlite", ["p"], clock=clock)
    series = [Labels.of("resend_test", shard=str(i)) for i in range(3)]
    for k in range(8):  # 8 scrapes of 3 series, 1 s apart: batches of 12 hold 4 samples per series
        wal.append_columns(series, [t0 + k] * 3, [float(k * 10 + i) for i in range(3)])
    spec = RemoteWriteSpec.model_validate({"url": url, "name": "p", "queue": {"max_samples_per_send": 12}})
    sender = RemoteSender(spec, wal, clock=clock, user_agent="inferwatch/test")
    assert sender.step() == 0.0 and sender.step() == 0.0
    sender.stop()
    # first batch: stored, answer lost -> re-sent -> Prometheus refuses it as out of order (it has it);
    # the second batch goes through. Nothing is missing and nothing is there twice.
    assert answers == [204, 400, 204]
    assert (sender.counts.retries, sender.counts.failed, sender.counts.sent) == (1, 12, 12)
    got = _query(prometheus, t0 + 30, round((t0 + 30) * 1000))
    want = {tuple(sorted(ls.items())): [(round((t0 + k) * 1000), float(k * 10 + i)) for k in range(8)]
            for i, ls in enumerate(series)}
    assert got == want
