"""Targets that come and go: discovery (static, file, HTTP) into the scrape loop, on a simulated clock.

The scrape targets are an ``httpx.MockTransport`` answering for any address (only the loop's
bookkeeping is under test here); the HTTP SD endpoint is a real loopback server.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from inferwatch.config import HttpSDConfig, ScrapeJob
from inferwatch.model import SimulatedClock
from inferwatch.server import ScrapeLoop
from inferwatch.server.ingest import Discovery
from inferwatch.store import MemoryStore, parse_selector, stale_mask

T0 = 1000.0


def _answer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, text=f'req_total{{from="{request.url.host}"}} 1\n',
                          headers={"Content-Type": "text/plain; version=0.0.4"})


def _points(store: MemoryStore, sel: str) -> dict[str, list[tuple[float, str]]]:
    out = {}
    for s in store.select(parse_selector(sel), 0, 1e12):
        rows = zip(s.t.tolist(), s.v.tolist(), stale_mask(s.v).tolist(), strict=True)
        out[str(s.labels)] = [(t, "stale" if m else repr(v)) for t, v, m in rows]
    return out


def _setup(job: ScrapeJob, transport: httpx.BaseTransport | None = None
           ) -> tuple[ScrapeLoop, Discovery, MemoryStore, SimulatedClock]:
    clock, store = SimulatedClock(T0), MemoryStore()
    transport = transport or httpx.MockTransport(_answer)
    discovery = Discovery([job], clock=clock, transport=transport)
    loop = ScrapeLoop([], store, clock=clock, transport=transport, jobs=[job], discovery=discovery)
    return loop, discovery, store, clock


def _write(path: Path, groups: Any) -> None:
    path.write_text(json.dumps(groups))


def _active(loop: ScrapeLoop) -> list[str]:
    return sorted(h.instance for h in loop.targets())


def test_a_removed_target_goes_stale_at_once_and_its_up_with_it(tmp_path: Path) -> None:
    sd = tmp_path / "targets.json"
    _write(sd, [{"targets": ["10.0.0.1:9100", "10.0.0.2:9100"], "labels": {"env": "prod"}}])
    job = ScrapeJob(job="gpu", file_sd_configs=[{"files": [str(sd)]}], interval=15)
    loop, discovery, store, clock = _setup(job)
    discovery.refresh(loop.set_discovered)
    assert _active(loop) == ["10.0.0.1:9100", "10.0.0.2:9100"]
    loop.tick(T0)
    _write(sd, [{"targets": ["10.0.0.1:9100"], "labels": {"env": "prod"}}])
    clock.advance(5)
    discovery.refresh(loop.set_discovered)
    assert _active(loop) == ["10.0.0.1:9100"]
    gone = 'instance="10.0.0.2:9100",job="gpu"'
    # the removed target's series and its up: a staleness marker when it went (not at its next scrape)
    assert _points(store, f'up{{{gone}}}') == {f'up{{env="prod",{gone}}}': [(T0, "1.0"), (T0 + 5, "stale")]}
    assert list(_points(store, f'req_total{{{gone}}}').values()) == [[(T0, "1.0"), (T0 + 5, "stale")]]
    clock.advance(10)
    assert loop.tick(clock.now()) == 1  # only the one left is scraped
    kept = _points(store, 'up{instance="10.0.0.1:9100"}')
    assert list(kept.values()) == [[(T0, "1.0"), (T0 + 15, "1.0")]]


def test_an_unchanged_target_keeps_its_state_across_updates(tmp_path: Path) -> None:
    sd = tmp_path / "t.json"
    _write(sd, [{"targets": ["a:1"]}])
    loop, discovery, _, clock = _setup(ScrapeJob(job="j", file_sd_configs=[{"files": [str(sd)]}]))
    discovery.refresh(loop.set_discovered)
    loop.tick(T0)
    (before,) = loop.targets()
    _write(sd, [{"targets": ["a:1", "b:2"]}])
    clock.advance(2)  # the watch notices the change (size and mtime)
    discovery.refresh(loop.set_discovered)
    assert before in loop.targets() and before.last_scrape == T0 and len(loop.targets()) == 2


def test_a_scrape_in_flight_finishes_before_its_target_is_retired(tmp_path: Path) -> None:
    entered, release, order = threading.Event(), threading.Event(), []

    def slow(request: httpx.Request) -> httpx.Response:
        entered.set()
        release.wait(60)
        order.append("scrape ended")
        return _answer(request)

    job = ScrapeJob(job="j", static_configs=[{"targets": ["a:1"]}])
    loop, discovery, store, clock = _setup(job, httpx.MockTransport(slow))
    discovery.refresh(loop.set_discovered)
    scraping = threading.Thread(target=loop.tick, args=(T0,))
    scraping.start()
    assert entered.wait(60)
    clock.advance(3)

    def remove() -> None:
        loop.set_discovered("j", [])
        order.append("removed")

    removing = threading.Thread(target=remove)
    removing.start()
    removing.join(0.5)
    assert removing.is_alive()  # waits for the scrape in flight, holding no other target up
    release.set()
    scraping.join(60)
    removing.join(60)
    assert order == ["scrape ended", "removed"]
    assert list(_points(store, "up").values()) == [[(T0, "1.0"), (T0 + 3, "stale")]]
    assert loop.targets() == [] and loop.tick(T0 + 60) == 0


def test_threads_start_for_targets_that_appear_while_running(tmp_path: Path) -> None:
    seen = threading.Event()

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.host == "late":
            seen.set()
        return _answer(request)

    sd = tmp_path / "t.yml"
    sd.write_text("[]\n")
    job = ScrapeJob(job="j", file_sd_configs=[{"files": [str(sd)]}])
    clock, store = SimulatedClock(T0), MemoryStore()
    transport = httpx.MockTransport(answer)
    loop = ScrapeLoop([], store, clock=clock, transport=transport, jobs=[job],
                      discovery=Discovery([job], clock=clock, transport=transport))
    loop.start()
    try:
        loop.set_discovered("j", [{"__address__": "late:80"}])
        assert seen.wait(60)
    finally:
        loop.stop()


def test_file_sd_reads_yaml_and_globs_and_adds_meta_filepath(tmp_path: Path) -> None:
    (tmp_path / "a.yml").write_text("- targets: ['h1:1']\n  labels: {zone: a}\n")
    _write(tmp_path / "b.yml", [{"targets": ["h2"]}])  # JSON is YAML too; no port: :80 is added
    (tmp_path / "c.txt").write_text("not matched by the glob")
    job = ScrapeJob(job="j", file_sd_configs=[{"files": [str(tmp_path / "*.yml")]}], params={"m": ["x"]})
    loop, discovery, _, _ = _setup(job)
    discovery.refresh(loop.set_discovered)
    by = {h.instance: h for h in loop.targets()}
    assert sorted(by) == ["h1:1", "h2:80"]
    assert by["h1:1"].discovered["__meta_filepath"] == str(tmp_path / "a.yml")
    assert by["h1:1"].labels == {"instance": "h1:1", "job": "j", "zone": "a"}
    assert by["h2:80"].url == "http://h2:80/metrics?m=x"
    assert by["h2:80"].discovered["__param_m"] == "x"


def test_a_bad_file_keeps_the_last_good_targets_and_says_why(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    sd = tmp_path / "t.json"
    _write(sd, [{"targets": ["a:1"]}])
    loop, discovery, _, clock = _setup(ScrapeJob(job="j", file_sd_configs=[{"files": [str(sd)]}]))
    discovery.refresh(loop.set_discovered)
    sd.write_text('[{"targets": ["a:1", "b:2"]')  # half written
    clock.advance(2)
    discovery.refresh(loop.set_discovered)
    assert _active(loop) == ["a:1"]
    (st,) = discovery.status()
    assert st.failures == 1 and "t.json: not valid JSON" in st.error
    assert "its last targets are kept" in caplog.text and "not valid JSON" in caplog.text
    _write(sd, [{"targets": ["a:1", "b:2"]}])
    clock.advance(2)
    discovery.refresh(loop.set_discovered)
    assert _active(loop) == ["a:1", "b:2"] and discovery.status()[0].error == ""
    sd.unlink()  # a file that is gone takes its targets with it
    clock.advance(2)
    discovery.refresh(loop.set_discovered)
    assert _active(loop) == []


@pytest.mark.parametrize(("text", "why"), [
    ('{"targets": ["a:1"]}', "a list of target groups"),
    ('[{"targets": "a:1"}]', "'targets' must be a list"),
    ('[{"targets": ["a:1"], "labels": {"0bad": "x"}}]', "'0bad' is not a valid label name"),
    ('[{"targets": ["a:1"], "labels": {"x": 1}}]', "'labels' must map"),
])
def test_bad_groups_are_refused_with_the_reason(tmp_path: Path, text: str, why: str) -> None:
    sd = tmp_path / "t.json"
    sd.write_text(text)
    loop, discovery, _, _ = _setup(ScrapeJob(job="j", file_sd_configs=[{"files": [str(sd)]}]))
    discovery.refresh(loop.set_discovered)
    assert why in discovery.status()[0].error and loop.targets() == []


def test_yaml_groups_with_unknown_keys_are_refused(tmp_path: Path) -> None:
    sd = tmp_path / "t.yaml"
    sd.write_text("- targets: [a:1]\n  lables: {x: y}\n")  # Prometheus reads YAML strictly
    _, discovery, _, _ = _setup(ScrapeJob(job="j", file_sd_configs=[{"files": [str(sd)]}]))
    discovery.refresh(lambda job, found: None)
    assert "unknown field(s) lables" in discovery.status()[0].error


@pytest.fixture
def http_sd() -> Iterator[dict[str, Any]]:
    state: dict[str, Any] = {"body": "[]", "status": 200, "type": "application/json", "headers": []}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state["headers"].append(dict(self.headers))
            data = state["body"].encode()
            self.send_response(state["status"])
            self.send_header("Content-Type", state["type"])
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    th = threading.Thread(target=server.serve_forever, daemon=True)
    th.start()
    state["url"] = f"http://127.0.0.1:{server.server_address[1]}/sd"
    yield state
    server.shutdown()
    server.server_close()
    th.join(10)


def test_http_sd_fetches_on_its_interval_and_keeps_the_last_targets_on_failure(
        http_sd: dict[str, Any]) -> None:
    http_sd["body"] = json.dumps([{"targets": ["a:1"], "labels": {"pool": "x"}}])
    job = ScrapeJob(job="j", http_sd_configs=[HttpSDConfig(url=http_sd["url"], refresh_interval=30)])
    clock, store = SimulatedClock(T0), MemoryStore()
    discovery = Discovery([job], clock=clock)  # the real client: the SD endpoint is on loopback
    loop = ScrapeLoop([], store, clock=clock, transport=httpx.MockTransport(_answer), jobs=[job],
                      discovery=discovery)
    discovery.refresh(loop.set_discovered)
    (h,) = loop.targets()
    assert h.discovered["__meta_url"] == http_sd["url"] and h.labels["pool"] == "x"
    sent = http_sd["headers"][0]
    assert sent["Accept"] == "application/json" and sent["X-Prometheus-Refresh-Interval-Seconds"] == "30"
    http_sd["status"] = 503
    discovery.refresh(loop.set_discovered)
    assert len(http_sd["headers"]) == 1  # not due yet
    clock.advance(30)
    discovery.refresh(loop.set_discovered)
    assert "HTTP status 503" in discovery.status()[0].error and len(loop.targets()) == 1
    http_sd["status"], http_sd["type"] = 200, "text/plain"
    clock.advance(30)
    discovery.refresh(loop.set_discovered)
    assert "unsupported content type 'text/plain'" in discovery.status()[0].error
    http_sd["type"], http_sd["body"] = "application/json; charset=utf-8", "[]"
    clock.advance(30)
    discovery.refresh(loop.set_discovered)
    assert loop.targets() == [] and discovery.status()[0].error == ""


def test_relabel_configs_drop_discovered_targets_and_show_them_dropped(tmp_path: Path) -> None:
    job = ScrapeJob(job="j", static_configs=[{"targets": ["a:1", "b:2"], "labels": {"tier": "canary"}}],
                    relabel_configs=[{"source_labels": ["__address__"], "regex": "b:.*", "action": "drop"}])
    loop, discovery, _, _ = _setup(job)
    discovery.refresh(loop.set_discovered)
    assert _active(loop) == ["a:1"]
    (dropped,) = loop.dropped()
    assert dropped["__address__"] == "b:2" and dropped["tier"] == "canary" and dropped["job"] == "j"


def test_reload_carries_an_unchanged_jobs_targets(tmp_path: Path) -> None:
    job = ScrapeJob(job="j", static_configs=[{"targets": ["a:1"]}])
    loop, discovery, store, clock = _setup(job)
    discovery.refresh(loop.set_discovered)
    loop.tick(T0)
    loop.stop()
    new = ScrapeLoop([], store, clock=clock, transport=httpx.MockTransport(_answer), jobs=[job])
    assert new.adopt(loop, T0 + 1) == 1
    assert [h.last_scrape for h in new.targets()] == [T0]
    assert list(_points(store, "up").values()) == [[(T0, "1.0")]]  # not marked stale by the reload


@pytest.mark.parametrize(("job", "why"), [
    ({"job": "j", "url": "http://a:1/metrics"}, "a single URL goes under scrape.targets"),
    ({"job": "j", "file_sd_configs": [{"files": ["/x/*/t.json"]}]}, "not valid for file discovery"),
    ({"job": "j", "http_sd_configs": [{"url": "ftp://x"}]}, "an http:// or https:// URL"),
    ({"job": "j", "metrics_path": "metrics"}, "must start with '/'"),
])
def test_bad_jobs_are_refused_at_load(job: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        ScrapeJob(**job)
