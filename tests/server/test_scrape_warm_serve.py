"""Issue 56 row 2, warm scrapes in ``inferwatch serve``: a target that repeats its series with new values
is read as columns (``formats._warm``) into the SQLite store; the values, the ``scrape_*`` series and
staleness are what the line parser gives.

One serve: 500 series with HELP/TYPE lines scraped every second; each body the test serves is waited
for by its values in the store, then one series leaves the body and goes stale at once.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from ._proc import serve
from .conftest import FakeTarget

pytestmark = pytest.mark.slow

SERIES = 500


def _body(k: int, drop: bool = False) -> str:
    lines = ["# HELP req_total Requests.", "# TYPE req_total counter"]
    lines += [f'req_total{{shard="{i}",code="200"}} {k * 1000 + i}' for i in range(SERIES - drop)]
    return "\n".join(lines) + "\n"


def _query(c: httpx.Client, q: str) -> list[dict[str, object]]:
    return list(c.get("/api/v1/query", params={"query": q}).json()["data"]["result"])


def _until(c: httpx.Client, q: str, want: object, within_s: float = 60.0) -> None:
    end, got = time.monotonic() + within_s, None
    while time.monotonic() < end:
        got = [r["value"][1] for r in _query(c, q)]  # type: ignore[index]
        if got == want:
            return
        c.get("/-/healthy")  # a round trip: the scrape thread runs meanwhile
    raise AssertionError(f"{q!r}: {got!r}, not {want!r} within {within_s:g} s")


def test_serve_stores_warm_scrapes_as_the_line_parser_reads_them(tmp_path: Path, target: FakeTarget) -> None:
    target.body = _body(1)
    config = (f"server: {{data_dir: '{tmp_path / 'data'}'}}\n"
              f"scrape:\n  targets:\n    - {{job: warm, url: '{target.url}', interval: 1s, timeout: 1s}}\n")
    last = f'req_total{{shard="{SERIES - 1}"}}'
    with serve(config, tmp_path) as s, httpx.Client(base_url=s.url, timeout=10) as c:
        for k in (1, 2, 3):  # the first scrape, then warm ones: every value of each body arrives
            target.body = _body(k)
            _until(c, f"sum(req_total) - {k * 1000 * SERIES}", [str(SERIES * (SERIES - 1) // 2)])
            _until(c, last, [str(k * 1000 + SERIES - 1)])
        seen = target.requests
        _until(c, 'scrape_samples_scraped{job="warm"}', [str(SERIES)])
        _until(c, 'scrape_series_added{job="warm"}', ["0"])  # a warm scrape adds none
        target.body = _body(4, drop=True)  # the last series leaves: stale at that scrape
        _until(c, last, [])
        _until(c, "count(req_total)", [str(SERIES - 1)])
        assert target.requests > seen
        assert _query(c, 'up{job="warm"}')[0]["value"][1] == "1"  # type: ignore[index]
