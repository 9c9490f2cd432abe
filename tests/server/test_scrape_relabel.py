"""relabel_configs and metric_relabel_configs on scrape targets, as Prometheus 2.42 applies them."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from inferwatch.config import ScrapeTarget
from inferwatch.model import SimulatedClock
from inferwatch.server import ScrapeLoop
from inferwatch.store import MemoryStore, parse_selector

from ._proc import serve, wait_query, wait_scraped
from .conftest import FakeTarget

BODY = '# TYPE req_total counter\nreq_total{code="200"} 7\nreq_total{code="500"} 1\ngo_gc_total 3\n'
KEEP_ONE = [{"source_labels": ["__address__"], "regex": "127.0.0.1:1", "action": "keep"}]
METRIC_RULES = [
    {"source_labels": ["__name__"], "regex": "go_.*", "action": "drop"},
    {"source_labels": ["code"], "regex": "(5).*", "target_label": "class", "replacement": "${1}xx"},
]


def _names(store: MemoryStore, sel: str) -> set[str]:
    return {str(s.labels) for s in store.select(parse_selector(sel), 0, 1e12)}


def test_target_relabelling_sets_labels_and_drops_targets(target: FakeTarget) -> None:
    target.body = BODY
    rules = [{"source_labels": ["__address__"], "regex": "127\\.0\\.0\\.1:(\\d+)", "target_label": "port"},
             {"target_label": "instance", "replacement": "replica-a"}]
    kept = ScrapeTarget(job="svc", url=target.url, relabel_configs=rules)
    gone = ScrapeTarget(
        job="other", url="http://127.0.0.1:2/metrics", relabel_configs=KEEP_ONE)
    store = MemoryStore()
    loop = ScrapeLoop([kept, gone], store, clock=SimulatedClock(1000.0))
    loop.scrape_once(1000.0)
    (h,) = loop.targets()
    port = target.url.split(":")[2].split("/")[0]
    assert h.labels == {"instance": "replica-a", "job": "svc", "port": port}
    assert h.discovered["__address__"] == f"127.0.0.1:{port}"
    assert h.discovered["__metrics_path__"] == "/metrics"
    assert h.health == "up"
    assert f'up{{instance="replica-a",job="svc",port="{port}"}}' in _names(store, "up")
    (d,) = loop.dropped()
    assert d["__address__"] == "127.0.0.1:2" and d["job"] == "other" and d["__scheme__"] == "http"


def test_metric_relabelling_before_storage(target: FakeTarget) -> None:
    target.body = BODY
    cfg = ScrapeTarget(job="svc", url=target.url, metric_relabel_configs=METRIC_RULES)
    store = MemoryStore()
    ScrapeLoop([cfg], store, clock=SimulatedClock(1000.0)).scrape_once(1000.0)
    assert _names(store, "go_gc_total") == set()
    names = _names(store, "req_total")
    assert any('class="5xx",code="500"' in n for n in names) and len(names) == 2
    assert not any("class" in n for n in names if 'code="200"' in n)
    (pre,) = store.select(parse_selector("scrape_samples_scraped"), 0, 1e12)
    (post,) = store.select(parse_selector("scrape_samples_post_metric_relabeling"), 0, 1e12)
    assert (pre.v.tolist(), post.v.tolist()) == ([3.0], [2.0])


def test_a_bad_rule_is_refused_at_load_naming_it() -> None:
    with pytest.raises(ValidationError) as err:
        ScrapeTarget(job="svc", url="http://127.0.0.1:1/m",
                     relabel_configs=[{"action": "keep"}, {"action": "hashmod", "target_label": "x"}])
    want = "relabel_configs[1] (hashmod): relabel configuration for hashmod requires non-zero modulus"
    assert want in str(err.value)


def test_serve_shows_discovered_and_dropped_targets(target: FakeTarget, tmp_path: Path) -> None:
    target.body = BODY
    cfg = f"""storage: {{type: memory}}
server: {{data_dir: '{tmp_path / "data"}'}}
scrape:
  targets:
    - job: svc
      url: {target.url}
      interval: 1s
      metric_relabel_configs:
        - {{source_labels: [__name__], regex: "go_.*", action: drop}}
      relabel_configs:
        - {{source_labels: [__scheme__], target_label: scheme}}
    - job: gone
      url: http://127.0.0.1:2/metrics
      relabel_configs:
        - {{source_labels: [job], regex: gone, action: drop}}
"""
    with serve(cfg, tmp_path) as s, httpx.Client(base_url=s.url, timeout=30) as c:
        (active,) = wait_scraped(c)
        assert active["labels"] == {"instance": target.url.split("/")[2], "job": "svc", "scheme": "http"}
        assert active["discoveredLabels"] == {
            "__address__": target.url.split("/")[2], "__metrics_path__": "/metrics", "__scheme__": "http",
            "__scrape_interval__": "1s", "__scrape_timeout__": "1s", "job": "svc"}
        assert wait_query(c, 'req_total{scheme="http"}')
        assert c.get("/api/v1/query", params={"query": "go_gc_total"}).json()["data"]["result"] == []
        data = c.get("/api/v1/targets", params={"state": "dropped"}).json()["data"]
        assert data["activeTargets"] == []
        (dropped,) = data["droppedTargets"]
        assert dropped["discoveredLabels"]["job"] == "gone"
        assert dropped["discoveredLabels"]["__address__"] == "127.0.0.1:2"
