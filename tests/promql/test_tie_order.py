"""Which of equal values comes first: Go's sort and heap, step for step, against Prometheus 2.42 itself."""

from __future__ import annotations

import json
import math
import random
import subprocess
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.promql.compliance import free_port, wait_ready

from inferwatch.model import Labels, Sample
from inferwatch.promql import Engine
from inferwatch.promql._gosort import go_sort, heap_pop, heap_push
from inferwatch.store import MemoryStore


@given(st.lists(st.integers(-5, 5), max_size=300))
def test_go_sort_sorts(xs: list[int]) -> None:
    # rule: whatever it does with ties, the result is ordered and a permutation of the input
    items = list(enumerate(xs))
    go_sort(items, lambda a, b: a[1] < b[1])
    assert [v for _, v in items] == sorted(xs)
    assert sorted(i for i, _ in items) == list(range(len(xs)))


@given(st.lists(st.integers(-5, 5), min_size=1, max_size=100))
def test_heap_pops_the_least(xs: list[int]) -> None:
    # rule: container/heap's invariant: Pop gives the smallest each time
    h: list[int] = []
    for x in xs:
        heap_push(h, x, lambda a, b: a < b)
    assert [heap_pop(h, lambda a, b: a < b) for _ in xs] == sorted(xs)


SETS = {  # ties everywhere, NaN among them, sizes on every path of Go's sort (insertion, ninther,
    # patterns broken, reversed)
    "few": [5.0, 5.0, 7.0, 5.0] * 4,
    "mid": [float(random.Random(1).choice([1, 2])) for _ in range(60)],
    "big": [random.Random(2 + i).choice([1.0, 2.0, 3.0, 4.0, math.nan]) for i in range(300)],
    "dec": [float(300 - i // 3) for i in range(120)],
}
QUERIES = [f"{f}({m})" for m in SETS for f in ("sort", "sort_desc")] + [
    f"{op}({k}, {m})" for m in SETS for op in ("topk", "bottomk") for k in (1, 2, 13, 17, 55)]


@pytest.mark.tools
@pytest.mark.slow
def test_tie_order_matches_prometheus(tmp_path: Path, require_tool: Callable[..., str]) -> None:
    prom, promtool = require_tool("prometheus"), require_tool("promtool")
    om = tmp_path / "data.om"
    lines = [f'{m}{{i="{i:03d}"}} {v!r} 1000' for m, vs in SETS.items() for i, v in enumerate(vs)]
    om.write_text("\n".join(sorted(lines, key=lambda ln: ln.split("{")[0])) + "\n# EOF\n")
    subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(om), str(tmp_path / "tsdb")],
                   check=True, capture_output=True, timeout=120)
    (tmp_path / "prometheus.yml").write_text("global: {scrape_interval: 1h}\n")
    port = free_port()
    proc = subprocess.Popen([prom, f"--config.file={tmp_path / 'prometheus.yml'}",
                             f"--storage.tsdb.path={tmp_path / 'tsdb'}", "--storage.tsdb.retention.time=100y",
                             f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(f"http://127.0.0.1:{port}/-/ready", proc)
        store = MemoryStore()
        store.append([Sample(Labels.of(m, i=f"{i:03d}"), 1000.0, v) for m, vs in SETS.items()
                      for i, v in enumerate(vs)])
        engine = Engine(store)
        wrong = []
        for q in QUERIES:
            body = httpx.get(f"http://127.0.0.1:{port}/api/v1/query", params={"query": q, "time": "1000"},
                             timeout=30).json()
            want = [r["metric"]["i"] for r in body["data"]["result"]]
            got = [ls["i"] for ls, _ in engine.instant(q, 1000.0).value]  # type: ignore[union-attr]
            if got != want:
                wrong.append(f"{q}:\n  prometheus {json.dumps(want)}\n  inferwatch {json.dumps(got)}")
        assert not wrong, "\n".join(wrong)
    finally:
        proc.terminate()
        proc.wait(20)
