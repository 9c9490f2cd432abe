"""Issue 59 #1: SIGTERM to a real agent mid-upload: the upload finishes, exit 0, nothing sent twice.

The agent uploads to a real ``inferwatch serve`` through a slow loopback proxy (each
request waits ``delay`` seconds before it is forwarded), so the SIGTERM lands while a
batch is at the server's door. The agent waits for the answer, acknowledges the batch,
exits 0; after a restart the rest of the spool arrives and the server counts no
duplicate batch.
"""

from __future__ import annotations

import http.server
import signal
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import httpx
import pytest
from tests._process import catches, poll_until

from .helpers import Lines, agent_file, read_store, serve, start_agent

pytestmark = pytest.mark.slow
BOUND_S = 60.0


class SlowProxy:
    """Forwards each POST to ``upstream`` after ``delay`` seconds; ``arrived`` is set at each request."""

    def __init__(self, upstream: str) -> None:
        self.upstream, self.delay = upstream, 0.0
        self.arrived = threading.Event()
        self.answered: list[int] = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                proxy.arrived.set()
                time.sleep(proxy.delay)  # the slow network under test, not a synchronisation
                req = urllib.request.Request(proxy.upstream + self.path, data=body, method="POST", headers={
                    k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")})
                try:
                    with urllib.request.urlopen(req, timeout=BOUND_S) as r:
                        status, answer = r.status, r.read()
                except urllib.error.HTTPError as exc:
                    status, answer = exc.code, exc.read()
                proxy.answered.append(status)
                self.send_response(status)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _stop(proc: subprocess.Popen[str], lines: Lines, sig: signal.Signals) -> tuple[int, float]:
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        proc.wait(BOUND_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(BOUND_S)
    took = time.monotonic() - t0
    while lines.next(5.0):  # the rest of its stderr
        pass
    lines.close()
    return int(proc.returncode), took


def test_sigterm_mid_upload_finishes_the_upload_and_exits_0(tmp_path: Path, app: str) -> None:
    with serve(tmp_path) as (url, _):
        proxy = SlowProxy(url)
        try:
            cfg = agent_file(tmp_path, proxy.url, app)
            proxy.delay = 1.0
            proc, lines = start_agent(cfg)
            assert "inferwatch edge: device cam-1" in lines.next()
            assert proxy.arrived.wait(BOUND_S)  # a batch is on its way: the proxy holds it for 1 s
            code, took = _stop(proc, lines, signal.SIGTERM)
            err = "".join(lines.seen)
            print(f"edge SIGTERM mid-upload: exit {code} after {took:.2f}s")
            assert code == 0, err
            assert "Traceback" not in err, err
            assert "SIGTERM: stopping" in err and "inferwatch edge: stopped (" in err, err
            assert proxy.answered and proxy.answered[0] == 200  # the upload in flight finished
            assert any(x.startswith("inferwatch edge: ok ") for x in lines.seen), err  # and was acknowledged
            assert not (tmp_path / "spool.sqlite-wal").exists()

            proxy.delay = 0.0  # the restart sends the rest of the spool
            proc, lines = start_agent(cfg)
            lines.next()
            assert lines.next().startswith("inferwatch edge: ok "), lines.seen
            code, _ = _stop(proc, lines, signal.SIGINT)
            assert code == 0, "".join(lines.seen)
            devices = httpx.get(f"{url}/api/v1/edge/devices", timeout=10).json()["data"]
        finally:
            proxy.close()
    assert devices[0]["duplicates"] == 0  # no batch came twice
    (seq,) = read_store(tmp_path / "data", "app_seq").values()
    values = [v for _, v in seq]
    assert len(values) == len(set(values))  # no sample stored twice


def test_sigterm_while_the_agent_starts_exits_0(tmp_path: Path, app: str) -> None:
    # rule: the handler is installed first thing: a stop before the agent runs is a stop, not exit 143
    cfg = agent_file(tmp_path, "http://127.0.0.1:9/unused", app)
    proc, lines = start_agent(cfg)
    poll_until(lambda: catches(proc.pid), "the agent's stop handler")
    code, _ = _stop(proc, lines, signal.SIGTERM)
    err = "".join(lines.seen)
    assert code == 0, err
    assert "Traceback" not in err and "SIGTERM: stopping" in err, err
    assert not (tmp_path / "spool.sqlite-wal").exists()
