"""Issue 21 #9: a full disk says "disk full" once, keeps reads working, and recovers.

The store's file is capped (SQLite's ``max_page_count``, the ``max_bytes``
argument), so writes past the cap fail exactly as on a full disk (SQLITE_FULL).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from inferwatch._exceptions import StoreError
from inferwatch.config import ScrapeTarget
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.server import ScrapeLoop
from inferwatch.store import SQLiteStore, parse_selector

from .conftest import FakeTarget


def _fill(store: SQLiteStore, t: float) -> None:
    for k in range(1000):
        store.append([Sample(Labels.of("filler", i=str(k), j=str(n)), t, 1.0) for n in range(200)])


def test_a_full_disk_is_named_and_reads_go_on(tmp_path: Path) -> None:
    clock = SimulatedClock(1000.0)
    store = SQLiteStore(tmp_path / "tsdb.sqlite", clock=clock, max_bytes=512 * 1024)
    store.append([Sample(Labels.of("kept"), 1000.0, 7.0)])
    with pytest.raises(StoreError) as err:
        _fill(store, 1000.0)
    assert "disk full" in str(err.value) and "no transaction is active" not in str(err.value)
    (kept,) = store.select(parse_selector("kept"), 0, 2000)  # reads keep working
    assert kept.v.tolist() == [7.0]
    store.close()


def test_the_scrape_loop_says_it_once_and_recovers(
        tmp_path: Path, target: FakeTarget, caplog: pytest.LogCaptureFixture) -> None:
    clock = SimulatedClock(1000.0)
    store = SQLiteStore(tmp_path / "tsdb.sqlite", clock=clock, max_bytes=512 * 1024)
    with pytest.raises(StoreError):
        _fill(store, 900.0)
    loop = ScrapeLoop([ScrapeTarget(job="svc", url=target.url)], store, clock=clock)
    target.body = "".join(f'big{{k="{k}"}} 1\n' for k in range(300))
    with caplog.at_level(logging.WARNING):
        for t in (1000.0, 1015.0, 1030.0):
            loop.scrape_once(t)
        (h,) = loop.targets()
        assert h.health == "down" and "disk full" in h.last_error
        said = [r for r in caplog.records if "disk full" in r.getMessage()]
        assert len(said) == 1 and said[0].exc_info is None  # once, and no traceback
        store.delete_before(950.0)  # space comes back (retention, an operator)
        target.body = "small 1\n"
        loop.scrape_once(1045.0)
    loop.stop()
    assert loop.targets()[0].health == "up"
    assert any("accepts scraped samples again" in r.getMessage() for r in caplog.records)
    store.close()
