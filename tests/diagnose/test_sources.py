"""Where the playbook reads from: query_range over HTTP, the SQLite file; the CLI verb."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from inferwatch import StoreError
from inferwatch.cli import main
from inferwatch.diagnose import QueryRangeSource, diagnose_gpu
from inferwatch.model import Sample, SystemClock
from inferwatch.store import MemoryStore, SQLiteStore, parse_selector

from . import scenario as sc

END = 1_800_000.0


def _prometheus_api(store: MemoryStore) -> httpx.MockTransport:
    """A query_range endpoint answering selectors from ``store`` as Prometheus shapes them."""

    def handle(request: httpx.Request) -> httpx.Response:
        q = request.url.params
        series = store.select(parse_selector(q["query"]), float(q["start"]), float(q["end"]))
        result = [
            {"metric": dict(s.labels),
             "values": [[float(t), repr(float(v))] for t, v in zip(s.t, s.v, strict=True)]}
            for s in series
        ]
        data = {"resultType": "matrix", "result": result}
        return httpx.Response(200, json={"status": "success", "data": data})

    return httpx.MockTransport(handle)


def test_query_range_source_gives_the_same_verdict() -> None:
    store, _ = sc.record(sc.pcie_downgrade, end=END)
    src = QueryRangeSource("http://server:9464", transport=_prometheus_api(store))
    try:
        d = diagnose_gpu(src, now=END, since=1800, service="ranker")
    finally:
        src.close()
    assert d.top is not None and d.top.cause == "pcie"


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (httpx.Response(400, json={"status": "error", "error": "bad query"}), "HTTP 400"),  # rule: non-200
        (httpx.Response(200, text="<html>"), "not a Prometheus query_range answer"),  # rule: not JSON
    ],
)
def test_query_range_errors_are_store_errors(response: httpx.Response, message: str) -> None:
    src = QueryRangeSource("http://server:9464", transport=httpx.MockTransport(lambda r: response))
    with pytest.raises(StoreError, match=message):
        src.select(list(parse_selector("up")), 0, 1)


def _sqlite_dir(tmp_path: Path, change: sc.Change) -> Path:
    now = SystemClock().now()  # the CLI diagnoses the last 30 minutes of real time
    store, _ = sc.record(change, end=now)
    disk = SQLiteStore(tmp_path / "tsdb.sqlite")
    for name in store.label_values("__name__"):
        for s in store.select(list(parse_selector(name)), now - 3600, now + 1):
            disk.append(Sample(s.labels, float(t), float(v)) for t, v in zip(s.t, s.v, strict=True))
    disk.close()
    return tmp_path


def test_cli_json_from_the_data_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _sqlite_dir(tmp_path, sc.thermal)
    code = main(["diagnose", "gpu", "--data-dir", str(data), "--service", "ranker", "--no-live", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["status"] == "diagnosed" and out["causes"][0]["cause"] == "throttling"


def test_cli_text_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _sqlite_dir(tmp_path, sc.cpu_fallback)
    assert main(["diagnose", "gpu", "--data-dir", str(data), "--no-live"]) == 0
    out = capsys.readouterr().out
    assert "1. preprocessing fell back to the CPU" in out and "nsys profile --stats=true" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--since", "soon"], "--since 'soon'"),  # rule: durations as Prometheus writes them
        (["--url", "ftp://x"], "not an http(s) URL"),  # rule: only HTTP APIs
        (["--data-dir", "/nonexistent"], "no store at /nonexistent"),  # rule: say where it looked
    ],
)
def test_cli_bad_input_is_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "gpu", "--no-live", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
