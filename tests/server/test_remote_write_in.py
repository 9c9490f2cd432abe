"""``POST /api/v1/write`` on a real ``inferwatch serve``: a real Prometheus 2.42 pushes into it."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.export._engines import poll, prometheus

from inferwatch.edge import REMOTE_WRITE_HEADERS, encode_write_request
from inferwatch.model import Labels, Sample

from ._proc import Served, serve

TOKEN = "rw-t0k3n-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
EXPOSITION = b"# TYPE tiny_requests_total counter\ntiny_requests_total{code=\"200\"} 42\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("rw")
    with serve(f"server: {{data_dir: '{tmp}/data', api_token: {TOKEN}}}\n", tmp) as s:
        yield s
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)


@pytest.fixture
def tiny_target() -> Iterator[str]:
    """A loopback target answering one counter in the Prometheus text format."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.end_headers()
            self.wfile.write(EXPOSITION)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _query(url: str, promql: str) -> list[dict[str, Any]]:
    r = httpx.get(f"{url}/api/v1/query", params={"query": promql}, timeout=30)
    assert r.status_code == 200, r.text
    return list(r.json()["data"]["result"])


@pytest.mark.slow
def test_a_real_prometheus_remote_writes_into_inferwatch(server: Served, tiny_target: str, tmp_path: Path,
                                                         require_tool: Callable[..., str]) -> None:
    config = tmp_path / "prometheus.yml"
    config.write_text(f"""\
global: {{scrape_interval: 1s, external_labels: {{replica: a}}}}
scrape_configs:
  - job_name: tiny
    static_configs: [{{targets: ['{tiny_target}']}}]
remote_write:
  - url: {server.url}/api/v1/write
    authorization: {{credentials: {TOKEN}}}
    queue_config: {{batch_send_deadline: 1s, min_backoff: 100ms}}
""")
    with prometheus(require_tool("prometheus"), config, tmp_path):
        got = poll(lambda: _query(server.url, 'tiny_requests_total{job="tiny"}'), timeout=90,
                   what="the remote-written counter in inferwatch")
        up = poll(lambda: _query(server.url, 'up{job="tiny"}'), timeout=30, what="up in inferwatch")
    (series,) = got
    assert series["metric"] == {"__name__": "tiny_requests_total", "code": "200", "instance": tiny_target,
                                "job": "tiny", "replica": "a"}
    assert series["value"][1] == "42"
    assert up[0]["value"][1] == "1"


def _push(url: str, body: bytes, **headers: str) -> httpx.Response:
    return httpx.post(f"{url}/api/v1/write", content=body, timeout=30,
                      headers={**REMOTE_WRITE_HEADERS, **AUTH, **headers})


@pytest.mark.slow
def test_pushed_samples_are_stored_once_and_bad_requests_are_refused_whole(server: Served) -> None:
    now = time.time()
    series = Labels.of("pushed_total", job="push")
    batch = encode_write_request([Sample(series, now - 2, 1.0), Sample(series, now - 1, 2.0)])
    assert _push(server.url, batch).status_code == 204
    assert _push(server.url, batch).status_code == 204  # a retry: duplicates dropped, not stored twice
    (counted,) = _query(server.url, "count_over_time(pushed_total[1m])")
    assert counted["value"][1] == "2"
    future = encode_write_request([Sample(Labels.of("ahead", job="push"), now - 1, 1.0),
                                   Sample(Labels.of("ahead", job="push"), now + 3600, 2.0)])
    r = _push(server.url, future)
    assert r.status_code == 400
    assert "out of bounds: 1 samples stamped more than 600s ahead" in r.json()["error"]
    assert _query(server.url, "ahead") == []  # nothing of a refused request is stored
    bad_name = encode_write_request([Sample(Labels({"__name__": "bad-name"}), now, 1.0)])
    r = _push(server.url, bad_name)
    assert r.status_code == 400 and "invalid metric name 'bad-name'" in r.json()["error"]
    r = _push(server.url, b"\x05garbage")
    assert r.status_code == 400 and "not a snappy-compressed remote-write WriteRequest" in r.json()["error"]
    assert _push(server.url, batch, Authorization="Bearer wrong").status_code == 401


@pytest.mark.slow
def test_a_request_of_many_new_series_is_stored_whole_beside_the_collector_s_freeze(server: Served) -> None:
    # 1,500 new series: serve's receiver freezes the objects made so far (NewSeriesGc) after storing them
    now = time.time()
    many = [Sample(Labels.of("bulk_total", job="push", instance=f"h{i}"), now - 2, float(i))
            for i in range(1_500)]
    assert _push(server.url, encode_write_request(many)).status_code == 204
    again = [Sample(s.labels, now - 1, 1.0) for s in many]
    assert _push(server.url, encode_write_request(again)).status_code == 204
    (counted,) = _query(server.url, "count(count_over_time(bulk_total[1m]) == 2)")
    assert counted["value"][1] == "1500"


def test_the_columns_reader_reads_what_the_edge_codec_reads() -> None:
    from inferwatch.edge import decode_write_request
    from inferwatch.formats import _snappy_pure as _snappy
    from inferwatch.formats.columnar import WriteRequestReader
    from inferwatch.model import STALE_NAN, is_stale_nan

    samples = [Sample(Labels.of("a_total", job="x", path="/é"), 1_700_000_000.123, 5.0),
               Sample(Labels.of("a_total", job="x", path="/é"), 1_700_000_001.0, STALE_NAN),
               Sample(Labels.of("b"), -1.5, -2.0)]
    body = encode_write_request(samples)
    got = WriteRequestReader().read(_snappy.decompress(body))
    want = decode_write_request(body, max_bytes=1 << 20)
    keys = [(s.labels, s.t) for s in samples]
    assert list(zip(got.labels, got.t.tolist(), strict=True)) == [(s.labels, s.t) for s in want] == keys
    assert got.v[0] == 5.0 and is_stale_nan(float(got.v[1])) and got.v[2] == -2.0


def test_the_receiver_stores_columns_and_refuses_with_the_sender_s_status() -> None:
    from inferwatch.model import SimulatedClock
    from inferwatch.server.ingest._remote_write_in import MAX_DECODED_BYTES, RemoteWriteReceiver
    from inferwatch.store import MemoryStore, parse_selector

    store = MemoryStore()
    t0 = 1_700_000_000.0  # after 2000: earlier is out of bounds
    rx = RemoteWriteReceiver(store, SimulatedClock(t0 + 1_000.0))
    body = encode_write_request([Sample(Labels.of("up", job="a"), t0 + 990.0, 1.0),
                                 Sample(Labels.of("up", job="b"), t0 + 990.0, 0.0)])
    assert rx.write(body) == 2 and rx.write(body) == 2  # the second time from the label cache
    assert [s.v.tolist() for s in store.select(parse_selector("up"), t0, t0 + 2_000)] == [[1.0], [0.0]]

    def status(raw: bytes) -> int:
        with pytest.raises(Exception) as caught:  # the receiver's own refusal, with the status
            rx.write(raw)
        return int(caught.value.status)  # type: ignore[attr-defined]

    # a body announcing more than the limit once expanded: refused before expanding
    announced = MAX_DECODED_BYTES + 1
    header = bytes([(announced >> s & 0x7F) | (0x80 if announced >> s + 7 else 0) for s in range(0, 28, 7)])
    assert status(header + b"\x00") == 413
    assert status(b"\x05garbage") == 400
    from inferwatch.formats import _snappy_pure as _snappy

    def label(k: bytes, v: bytes) -> bytes:
        return bytes([0x0A, 4 + len(k) + len(v), 0x0A, len(k)]) + k + bytes([0x12, len(v)]) + v

    sample = b"\x12\x10\x09" + bytes(8) + b"\x10" + bytes([0x80] * 5 + [0x30])  # 0.0 at a 6-byte time
    head = label(b"__name__", b"up") + label(b"job", b"f")
    twice = b"".join(bytes([0x0A, len(ts)]) + ts
                     for ts in [head + sample, head + label(b"job", b"g") + sample])
    with pytest.raises(Exception) as refused:  # a repeated label name, beside a good series
        rx.write(_snappy.compress(twice))
    assert refused.value.status == 400  # type: ignore[attr-defined]
    assert "duplicate label name" in str(refused.value)
    ahead = encode_write_request([Sample(Labels.of("up", job="c"), t0 + 990.0, 1.0),
                                  Sample(Labels.of("up", job="c"), t0 + 1_000.0 + 3_600, 2.0)])
    assert status(ahead) == 400 and store.select(parse_selector('up{job="c"}'), 0, t0 + 10_000) == []
    old = encode_write_request([Sample(Labels.of("up", job="d"), 990.0, 1.0)])  # 1970: out of bounds
    assert status(old) == 400 and store.select(parse_selector('up{job="d"}'), 0, t0 + 10_000) == []
    assert store.stats.discarded == {"too_far_in_future": 2, "too_old": 1}
    rx.retention = 86_400.0  # storage.retention: older than its start is out of bounds too
    week_old = encode_write_request([Sample(Labels.of("up", job="e"), t0 - 7 * 86_400, 1.0)])
    assert status(week_old) == 400 and store.stats.discarded["too_old"] == 2
