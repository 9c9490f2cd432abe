"""The differential PromQL compliance harness: inferwatch against a real Prometheus 2.42.

The same synthetic samples (the PromLabs demo service's metric names, three
instances scraped every 5 s for 75 minutes) are backfilled into Prometheus
(``promtool tsdb create-blocks-from openmetrics``, then ``prometheus`` on that
directory) and written into inferwatch's SQLite store (then ``inferwatch
serve``). Every query of the PromQL Compliance Tester's set, with its
template variants expanded as the tester expands them, goes to both HTTP APIs
as a ``query_range`` over the last 10 minutes at a 10 s step, and the answers
are compared with the tester's rules (``comparer.go``: matrices sorted,
values equal within a fraction of 1e-5, NaN equal to NaN; ``should_fail``
queries must fail on both).

Run it by hand: ``python -m tests.promql.compliance [--verbose]``; it prints
``P / N passed``.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import yaml

from inferwatch.model import Labels, Sample
from inferwatch.store import MemoryStore, SQLiteStore, Store

ROOT = Path(__file__).resolve().parents[2]
# ../shared/data beside the project root; a git worktree one level further down finds it too.
QUERY_FILES = [p / "shared" / "data" / "promql" / "promql-test-queries.yml" for p in ROOT.parents[:2]]
BASE = 1_700_000_000  # a fixed start, so the data and the answers are the same on every run
SCRAPE = 5
DURATION = 75 * 60
END = BASE + DURATION - 2 * 60
START = END - 10 * 60
STEP = 10
INSTANCES = [f"demo.promlabs.com:{p}" for p in (10000, 10001, 10002)]

# The tester's template arguments (testcases/expand.go).
VARIANTS: dict[str, list[str]] = {
    "range": ["1s", "15s", "1m", "5m", "15m", "1h"],
    "offset": ["1m", "5m", "10m"],
    "simpleAggrOp": ["sum", "avg", "max", "min", "count", "stddev", "stdvar"],
    "simpleTimeAggrOp": ["sum", "avg", "max", "min", "count", "stddev", "stdvar", "absent", "last"],
    "topBottomOp": ["topk", "bottomk"],
    "quantile": ["-0.5", "0.1", "0.5", "0.75", "0.95", "0.90", "0.99", "1", "1.5"],
    "arithBinOp": ["+", "-", "*", "/", "%", "^"],
    "compBinOp": ["==", "!=", "<", ">", "<=", ">="],
    "binOp": ["+", "-", "*", "/", "%", "^", "==", "!=", "<", ">", "<=", ">="],
    "simpleMathFunc": ["abs", "ceil", "floor", "exp", "sqrt", "ln", "log2", "log10", "round"],
    "extrapolatedRateFunc": ["delta", "rate", "increase"],
    "clampFunc": ["clamp_min", "clamp_max"],
    "instantRateFunc": ["idelta", "irate"],
    "dateFunc": ["day_of_month", "day_of_week", "days_in_month", "hour", "minute", "month", "year"],
    "smoothingFactor": ["0.1", "0.5", "0.8"],
    "trendFactor": ["0.1", "0.5", "0.8"],
}


# inferwatch's own additions, run the same way and scored separately: the 2.42 features the
# tester's set leaves out (@, subqueries, holt_winters, group_right, set operators on labels, ...).
EXTRA_QUERIES = [
    "demo_memory_usage_bytes @ 1700003000", "rate(demo_cpu_usage_seconds_total[5m] @ end())",
    "demo_memory_usage_bytes @ start() offset 1m", "sum_over_time(demo_num_cpus[10m:1m] @ 1700003500)",
    "holt_winters(demo_disk_usage_bytes[10m], 0.5, 0.5)", "present_over_time(demo_intermittent_metric[1m])",
    "absent_over_time(demo_intermittent_metric[1m])", "last_over_time(demo_memory_usage_bytes[1m])",
    "quantile_over_time(0.9, demo_memory_usage_bytes[5m])",
    "day_of_year(demo_batch_last_success_timestamp_seconds)",
    "demo_num_cpus * on(instance) group_right demo_memory_usage_bytes",
    "demo_memory_usage_bytes and on(instance) demo_num_cpus > 5", "demo_num_cpus or demo_disk_total_bytes",
    "demo_memory_usage_bytes unless ignoring(type) demo_num_cpus",
    "demo_memory_usage_bytes > on(instance) group_left demo_num_cpus * 1e7",
    'count by (le) (demo_api_request_duration_seconds_bucket{le=~"0.0.*"})',
    "group by (instance) (demo_memory_usage_bytes)", "topk(2, rate(demo_cpu_usage_seconds_total[1m]))",
    "quantile by (instance) (0.3, demo_memory_usage_bytes)",
    "stddev without (type) (demo_memory_usage_bytes)",
    'label_join(demo_num_cpus, "x", ":", "job", "instance")', "sort_desc(demo_memory_usage_bytes)",
    "sgn(deriv(demo_disk_usage_bytes[5m]))", "demo_num_cpus atan2 demo_num_cpus",
    "round(demo_memory_usage_bytes, 1000)", "deg(vector(pi())) + rad(vector(180))",
    "sin(demo_num_cpus) + on() group_left cosh(vector(1))",
    "scalar(sum(demo_num_cpus)) * demo_num_cpus", "timestamp(demo_num_cpus offset 1m)",
    "max_over_time(deriv(rate(demo_cpu_usage_seconds_total[1m])[5m:])[10m:30s])",
    "histogram_quantile(0.99, sum by (le, instance) (rate(demo_api_request_duration_seconds_bucket[5m])))",
    "increase(demo_cpu_usage_seconds_total[1h])", "resets(demo_cpu_usage_seconds_total[1h])",
    "irate(demo_cpu_usage_seconds_total[1m] offset -1m)", "changes(demo_memory_usage_bytes[5m])",
    "-demo_num_cpus % 3", "demo_num_cpus ^ -1", "0 / 0", "-1 / 0 * demo_num_cpus",
    "count_values without (instance) ('v', demo_num_cpus)", "absent(demo_num_cpus{job=\"nope\", a=\"b\"})",
    "demo_num_cpus + on() group_left vector(1)", "minute(vector(time()))",
]
# Extra queries Prometheus refuses: inferwatch must refuse them too.
EXTRA_FAILING = [
    "atan2(demo_num_cpus, 3)", "deg(pi())", "vector(1) + on() group_left demo_num_cpus",
    "demo_num_cpus + ignoring(instance) demo_num_cpus",
    'label_replace(demo_num_cpus, "instance", "", "", "")',
    "holt_winters(demo_disk_usage_bytes[10m], 1, 0.5)", "x[5m] offset 1m [1m]", "sum(x) by (a) by (b)",
]


@dataclass(frozen=True)
class Case:
    """One expanded query."""

    query: str
    should_fail: bool = False


def query_file() -> Path | None:
    """The tester's query set, if the shared data is there."""
    return next((p for p in QUERY_FILES if p.is_file()), None)


def expand_cases(path: Path | None = None) -> list[Case]:
    """The tester's query set with every template variant expanded (in the tester's order)."""
    src = path or query_file()
    if src is None:
        raise FileNotFoundError(f"the compliance query set is not at {QUERY_FILES[0]}")
    doc = yaml.safe_load(src.read_text())
    out: list[Case] = []
    for tc in doc["test_cases"]:
        args = tc.get("variant_args") or []
        for combo in itertools.product(*(VARIANTS[a] for a in args)):
            q = tc["query"]
            for name, val in zip(args, combo, strict=True):
                q = q.replace("{{." + name + "}}", val)
            out.append(Case(q, bool(tc.get("should_fail", False))))
    return out


def demo_series() -> Iterator[tuple[Labels, np.ndarray]]:
    """The demo service's series: labels and one value per scrape (``DURATION / SCRAPE`` of them)."""
    n = DURATION // SCRAPE
    rng = np.random.default_rng(20230201)
    ticks = np.arange(n, dtype=np.float64)
    buckets = ["0.0001", "0.00015", "0.0002", "0.0003", "0.0005", "0.001", "0.005", "0.01", "0.05", "+Inf"]
    for i, inst in enumerate(INSTANCES):
        base = {"job": "demo", "instance": inst}
        yield Labels({"__name__": "demo_num_cpus", **base}), np.full(n, 4.0 + 2 * i)
        for j, typ in enumerate(("buffers", "cached", "free", "used")):
            wave = 1e8 * (1 + 0.3 * np.sin(ticks / (40 + 7 * j) + i))
            yield Labels({"__name__": "demo_memory_usage_bytes", **base, "type": typ}), np.round(
                wave + rng.normal(0, 1e6, n))
        for j, mode in enumerate(("idle", "system", "user")):
            incr = np.abs(rng.normal(0.5 + j, 0.2, n)) * SCRAPE / 5
            cum = np.cumsum(incr)
            if i == 1 and mode == "user":  # a counter reset (a process restart) halfway
                cum[n // 2:] -= cum[n // 2 - 1] - 0.3
            yield Labels({"__name__": "demo_cpu_usage_seconds_total", **base, "mode": mode}), cum
        disk = 5e10 + 1e6 * ticks * (1 + i) + rng.normal(0, 2e5, n)
        yield Labels({"__name__": "demo_disk_usage_bytes", **base}), np.round(disk)
        yield Labels({"__name__": "demo_disk_total_bytes", **base}), np.full(n, 1e11)
        last = BASE + SCRAPE * (ticks // (12 + 6 * i)) * (12 + 6 * i)
        yield Labels({"__name__": "demo_batch_last_success_timestamp_seconds", **base}), last
        yield from _histogram(base, buckets, n, rng)
    yield Labels({"__name__": "demo_intermittent_metric", "job": "demo", "instance": INSTANCES[0]}), np.where(
        (ticks // 90) % 2 == 0, 1.0, np.nan) + 0.0


def _histogram(base: dict[str, str], buckets: list[str], n: int,
               rng: np.random.Generator) -> Iterator[tuple[Labels, np.ndarray]]:
    for method, path, status in itertools.product(("GET", "POST"), ("/api/foo", "/api/bar"), ("200", "500")):
        lab = {**base, "method": method, "path": path, "status": status}
        scale = 0.0003 if status == "200" else 0.002
        obs = rng.poisson(3 if status == "200" else 1, size=(n,))
        durations = [rng.exponential(scale, size=k) for k in obs.tolist()]
        counts = np.zeros((n, len(buckets)))
        for k, d in enumerate(durations):
            for b, le in enumerate(buckets):
                counts[k, b] = float(np.sum(d <= float(le)))
        cum = np.cumsum(counts, axis=0)
        for b, le in enumerate(buckets):
            yield Labels({"__name__": "demo_api_request_duration_seconds_bucket", **lab, "le": le}), cum[:, b]
        yield Labels({"__name__": "demo_api_request_duration_seconds_count", **lab}), cum[:, -1]
        sums = np.cumsum([float(d.sum()) for d in durations])
        yield Labels({"__name__": "demo_api_request_duration_seconds_sum", **lab}), sums


def _times(n: int) -> np.ndarray:
    return BASE + SCRAPE * np.arange(n)


def write_openmetrics(path: Path) -> None:
    """The samples as an OpenMetrics file for ``promtool tsdb create-blocks-from openmetrics``."""
    with path.open("w") as f:
        for labels, values in demo_series():
            inner = ",".join(f'{k}="{v}"' for k, v in labels.items_tuple if k != "__name__")
            head = f"{labels.name}{{{inner}}}"
            for t, v in zip(_times(len(values)).tolist(), values.tolist(), strict=True):
                if not math.isnan(v):
                    f.write(f"{head} {v!r} {t}\n")
        f.write("# EOF\n")


def append_demo(store: Store) -> None:
    """Append the demo samples (no NaN gaps) to ``store``, a series at a time."""
    for labels, values in demo_series():
        ts = _times(len(values)).tolist()
        store.append([Sample(labels, float(t), float(v)) for t, v in zip(ts, values.tolist(), strict=True)
                      if not math.isnan(v)])


def demo_store() -> MemoryStore:
    """The demo samples in an in-memory store."""
    store = MemoryStore()
    append_demo(store)
    return store


def write_inferwatch(db: Path) -> None:
    """The same samples in inferwatch's SQLite store."""
    store = SQLiteStore(db, retention=1e11)
    try:
        append_demo(store)
    finally:
        store.close()


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    """Poll ``url`` until it answers 200 (bounded); fail when the process exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} not ready after {timeout} s")


@contextmanager
def running_pair(workdir: Path) -> Iterator[tuple[str, str]]:
    """Start Prometheus and inferwatch on the same data; yield their base URLs; stop both."""
    prom_bin, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if not prom_bin or not promtool:
        raise FileNotFoundError("prometheus and promtool are needed")
    om, tsdb, iw = workdir / "data.om", workdir / "prom", workdir / "iw"
    iw.mkdir()
    write_openmetrics(om)
    subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(om), str(tsdb)],
                   check=True, capture_output=True, timeout=300)
    write_inferwatch(iw / "tsdb.sqlite")
    (workdir / "prometheus.yml").write_text("global: {scrape_interval: 5s}\n")
    pp, ip = free_port(), free_port()
    (workdir / "inferwatch.yml").write_text(
        f"server: {{listen: '127.0.0.1:{ip}', data_dir: '{iw}'}}\nstorage: {{retention: 36500d}}\n")
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(subprocess.Popen(
            [prom_bin, f"--config.file={workdir / 'prometheus.yml'}", f"--storage.tsdb.path={tsdb}",
             f"--web.listen-address=127.0.0.1:{pp}", "--storage.tsdb.retention.time=100y"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        procs.append(subprocess.Popen(
            [str(Path(sys.executable).parent / "inferwatch"), "serve", "--config",
             str(workdir / "inferwatch.yml")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "INFERWATCH_DATA_DIR": str(iw)}))
        wait_ready(f"http://127.0.0.1:{pp}/-/ready", procs[0])
        wait_ready(f"http://127.0.0.1:{ip}/-/ready", procs[1])
        yield f"http://127.0.0.1:{pp}", f"http://127.0.0.1:{ip}"
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)


def query_range(client: httpx.Client, base: str, query: str) -> tuple[Any, str]:
    """``(matrix, "")`` or ``(None, error)`` for a query_range POST."""
    r = client.post(f"{base}/api/v1/query_range",
                    data={"query": query, "start": str(START), "end": str(END), "step": str(STEP)})
    body = r.json()
    if body.get("status") != "success":
        return None, f"{r.status_code} {body.get('errorType')}: {body.get('error')}"
    return body["data"], ""


def _close(a: str, b: str) -> bool:
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if x == y:
        return True
    return abs(x - y) <= 1e-5 * min(abs(x), abs(y))


def compare(ref: Any, got: Any) -> str:
    """The tester's comparison of two query_range answers: ``""`` when equal, else what differs."""
    if ref["resultType"] != got["resultType"]:
        return f"result type {got['resultType']} != {ref['resultType']}"

    def index(data: Any) -> dict[tuple[tuple[str, str], ...], list[list[Any]]]:
        return {tuple(sorted(s["metric"].items())): s["values"] for s in data["result"]}

    r, g = index(ref), index(got)
    if r.keys() != g.keys():
        missing, extra = sorted(r.keys() - g.keys()), sorted(g.keys() - r.keys())
        return f"series differ: missing {missing[:2]} extra {extra[:2]} ({len(missing)}/{len(extra)})"
    for key, rv in r.items():
        gv = g[key]
        if [float(p[0]) for p in rv] != [float(p[0]) for p in gv]:
            return f"timestamps differ for {dict(key)}: {len(rv)} vs {len(gv)} points"
        for p, q in zip(rv, gv, strict=True):
            if not _close(p[1], q[1]):
                return f"value differs for {dict(key)} at {p[0]}: {q[1]} != {p[1]}"
    return ""


def run_case(client: httpx.Client, prom: str, iw: str, case: Case) -> tuple[str, bool]:
    """``("", has_data)`` when inferwatch answers ``case`` as Prometheus does, else the reason."""
    ref, ref_err = query_range(client, prom, case.query)
    got, got_err = query_range(client, iw, case.query)
    if case.should_fail:
        if not ref_err:
            return "reference succeeded on a query meant to fail", False
        if not got_err:
            return "unexpected success", False
        # the same HTTP status and error type (the messages of parse errors are compared by the unit tests)
        return ("" if got_err.split(":")[0] == ref_err.split(":")[0] else f"{got_err} != {ref_err}"), False
    if ref_err:
        return f"reference failed: {ref_err}", False
    if got_err:
        return f"unexpected failure: {got_err}", bool(ref["result"])
    return compare(ref, got), bool(ref["result"])


# The other endpoints, asked of both servers: "exact" answers must be equal, "shape" answers must have
# the same keys and JSON types (values such as start times and paths differ by nature).
API_CHECKS: list[tuple[str, str, dict[str, str]]] = [
    ("exact", "/api/v1/series", {"match[]": "demo_num_cpus", "start": str(START), "end": str(END)}),
    ("exact", "/api/v1/series", {"match[]": '{__name__=~"demo_memory.*", type="free"}'}),
    ("exact", "/api/v1/labels", {}),
    ("exact", "/api/v1/labels", {"match[]": "demo_cpu_usage_seconds_total"}),
    ("exact", "/api/v1/label/instance/values", {}),
    ("exact", "/api/v1/label/__name__/values", {}),
    ("exact", "/api/v1/query", {"query": "sort(demo_num_cpus)", "time": str(END)}),
    ("exact", "/api/v1/query", {"query": "demo_num_cpus[20s]", "time": str(END)}),
    ("exact", "/api/v1/query", {"query": "time() / 2", "time": str(END) + ".5"}),
    ("exact", "/api/v1/query", {"query": '"a string"', "time": str(END)}),
    ("exact", "/api/v1/query", {"query": "sum(", "time": str(END)}),
    ("exact", "/api/v1/query", {"query": "1 > 2"}),
    ("exact", "/api/v1/query", {"query": "rate(demo_num_cpus)"}),
    ("exact", "/api/v1/query", {"query": 'x{a="b}'}),
    ("exact", "/api/v1/query", {"query": "foo(x)"}),
    ("exact", "/api/v1/query", {"query": "sum(x) by (a) by (b)"}),
    ("exact", "/api/v1/query", {"query": "demo_num_cpus + ignoring(instance) demo_num_cpus",
                                "time": str(END)}),
    ("exact", "/api/v1/query_range", {"query": "x", "start": "10", "end": "5", "step": "1"}),
    ("exact", "/api/v1/query_range", {"query": "x", "start": "0", "end": "100000", "step": "1"}),
    ("exact", "/api/v1/format_query", {"query": "sum(rate(x[5m]))by(job)/on(job)group_left y offset 1m"}),
    ("exact", "/api/v1/format_query", {"query": 'x{a="1",b=~"2"}[5m:] @ 100 - -1 ^ 2 > bool 3'}),
    ("exact", "/api/v1/metadata", {}),
    ("shape", "/api/v1/status/buildinfo", {}),
    ("shape", "/api/v1/status/runtimeinfo", {}),
    ("shape", "/api/v1/status/tsdb", {}),
    ("shape", "/api/v1/targets", {}),
]


def shape(x: Any) -> Any:
    """The JSON shape of ``x``: dict keys and the types of leaves (first list element only)."""
    if isinstance(x, dict):
        return {k: shape(v) for k, v in x.items()}
    if isinstance(x, list):
        return [shape(x[0])] if x else []
    return "number" if isinstance(x, int | float) and not isinstance(x, bool) else type(x).__name__


def _drop_empty_lists(a: Any, b: Any) -> tuple[Any, Any]:
    """Shapes with the keys whose list is empty on either side removed (nothing to compare there)."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = set(a) | set(b)
        out_a, out_b = {}, {}
        for k in keys:
            if a.get(k) == [] or b.get(k) == []:
                continue
            out_a[k], out_b[k] = _drop_empty_lists(a.get(k), b.get(k))
        return out_a, out_b
    return a, b


def _without_own_series(answer: Any) -> Any:
    """``answer`` less the series ``serve`` records of itself (``inferwatch_storage_*``, every round).

    Prometheus stores nothing of its own unless it scrapes itself; the data compared is the
    demo targets' (``demo_*``), so names and metadata of the server's own series are left out.
    """
    data = answer.get("data") if isinstance(answer, dict) else None
    if isinstance(data, list) and all(isinstance(x, str) for x in data):
        return {**answer, "data": [x for x in data if not x.startswith("inferwatch_")]}
    if isinstance(data, dict) and data and all(isinstance(v, list) for v in data.values()):
        return {**answer, "data": {k: v for k, v in data.items() if not k.startswith("inferwatch_")}}
    return answer


def check_api(client: httpx.Client, prom: str, iw: str) -> list[str]:
    """The :data:`API_CHECKS` whose answers differ, with what differs."""
    out: list[str] = []
    for kind, path, params in API_CHECKS:
        answers = []
        for base in (prom, iw):
            asked = params
            if base == iw and path == "/api/v1/labels" and not params:
                # the label names of the data compared: serve's own series (its storage, rule-round,
                # notification-queue, heartbeat and HA series) bring names the demo's lack
                asked = {"match[]": '{__name__=~".+",__name__!~"inferwatch_.*"}'}
            r = client.post(f"{base}{path}", data=asked) if path.endswith("query") else client.get(
                f"{base}{path}", params=asked)
            answers.append((r.status_code, r.json()))
        (rs, ref), (gs, got) = answers
        got = _without_own_series(got)
        if kind == "shape":
            ref, got = shape(ref), shape(got)
            ref, got = _drop_empty_lists(ref, got)
        if rs != gs or ref != got:
            out.append(f"{path} {params}: {gs} {json.dumps(got)[:300]} != {rs} {json.dumps(ref)[:300]}")
    return out


@dataclass(frozen=True)
class Report:
    """What a run found: the tester's set and inferwatch's extra queries."""

    passed: int
    total: int
    failures: list[tuple[Case, str]]
    extra_passed: int
    extra_total: int
    extra_failures: list[tuple[Case, str]]
    api_failures: list[str]


def run(verbose: bool = False, workdir: Path | None = None) -> Report:
    """Run the tester's set and the extras against both servers; print ``P / N passed``."""
    cases = expand_cases()
    extras = [Case(q) for q in EXTRA_QUERIES] + [Case(q, should_fail=True) for q in EXTRA_FAILING]
    with (tempfile.TemporaryDirectory() as tmp, running_pair(workdir or Path(tmp)) as (prom, iw),
          httpx.Client(timeout=60.0) as client, ThreadPoolExecutor(2) as pool):
        answers = list(pool.map(lambda c: run_case(client, prom, iw, c), cases + extras))
        api = check_api(client, prom, iw)
    failures = [(c, why) for c, (why, _) in zip(cases + extras, answers, strict=True) if why]
    if verbose:
        for c, why in failures:
            print(f"FAIL {c.query}\n     {why}")
    main = [f for f in failures if f[0] in set(cases)]
    extra = [f for f in failures if f not in main]
    with_data = sum(1 for _, has in answers[:len(cases)] if has)
    for line in api:
        print(f"API  {line}")
    print(f"other endpoints: {len(API_CHECKS) - len(api)} / {len(API_CHECKS)} answer as Prometheus does")
    print(f"extra queries: {len(extras) - len(extra)} / {len(extras)} passed")
    print(f"{len(cases) - len(main)} / {len(cases)} passed "
          f"({with_data} of the queries answer non-empty data)")
    return Report(len(cases) - len(main), len(cases), main, len(extras) - len(extra), len(extras), extra, api)


if __name__ == "__main__":
    run(verbose="--verbose" in sys.argv or "-v" in sys.argv)
