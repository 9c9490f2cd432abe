"""Issue 56 rows 2 and 3: the objects of series created in bulk leave the cyclic collector's sight
(gc.freeze), a garbage cycle frozen with them is collected by the next full collection, and a target's
first scrape runs with the collector paused."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from inferwatch.config import ScrapeTarget
from inferwatch.edge import encode_write_request
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.server import ScrapeLoop
from inferwatch.server.ingest import NewSeriesGc, RemoteWriteReceiver
from inferwatch.store import SQLiteStore, parse_selector

T0 = 1_700_000_000.0


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    yield
    gc.unfreeze()  # the rest of this worker's tests see a collector as they found it


class _Cycle:
    def __init__(self) -> None:
        self.me = self


class _Seconds:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_batch_of_many_new_series_freezes_and_a_frozen_cycle_is_collected_in_full_later() -> None:
    seconds = _Seconds()
    policy = NewSeriesGc(min_series=1_000, full_every=600.0, monotonic=seconds)
    gc.unfreeze()
    assert not policy.created(999) and gc.get_freeze_count() == 0  # too few to be worth it
    garbage = _Cycle()
    gone = weakref.ref(garbage)
    del garbage  # a cycle: only the cyclic collector frees it
    assert policy.created(1_000) and gc.get_freeze_count() > 0 and policy.freezes == 1
    gc.collect()
    assert gone() is not None  # frozen with the series' objects: out of the collector's sight
    seconds.now = 599.0
    assert policy.created(5_000) and policy.full_collections == 0 and gone() is not None
    seconds.now = 600.0  # the full collection is due: everything is handed back and collected once
    assert policy.created(5_000) and policy.full_collections == 1 and policy.freezes == 3
    assert gone() is None


def test_the_receiver_freezes_after_a_request_of_many_new_series_only(tmp_path: Path) -> None:
    policy = NewSeriesGc(min_series=1_000)
    store = SQLiteStore(tmp_path / "db")
    try:
        rx = RemoteWriteReceiver(store, SimulatedClock(T0 + 100), new_series_gc=policy)
        many = [Sample(Labels.of("bulk_total", job="j", instance=f"h{i}"), T0, float(i))
                for i in range(1_500)]
        rx.write(encode_write_request(many[:10]))
        assert policy.freezes == 0  # ten new series
        rx.write(encode_write_request(many))
        assert policy.freezes == 1  # 1,490 new ones (ten of them known already)
        rx.write(encode_write_request([Sample(s.labels, T0 + 10, 1.0) for s in many]))
        assert policy.freezes == 1  # known series only
        got = store.select(parse_selector("bulk_total"), T0, T0 + 60)
        assert len(got) == 1_500 and sum(s.v.shape[0] for s in got) == 3_000
    finally:
        store.close()


def test_a_first_scrape_runs_with_the_collector_paused_and_freezes_its_objects(tmp_path: Path) -> None:
    body = "".join(f'm{{i="{i}"}} {i}\n' for i in range(1_200)).encode()
    during: list[bool] = []

    def handler(request: httpx.Request) -> httpx.Response:
        during.append(gc.isenabled())  # inside the scrape: the body is fetched under the pause
        return httpx.Response(200, content=body, headers={"Content-Type": "text/plain; version=0.0.4"})

    policy = NewSeriesGc(min_series=1_000)
    clock = SimulatedClock(T0)
    store = SQLiteStore(tmp_path / "db", clock=clock)
    target = ScrapeTarget(job="j", url="http://t:1/metrics", interval=15.0)
    loop = ScrapeLoop([target], store, clock=clock, transport=httpx.MockTransport(handler),
                      new_series_gc=policy)
    try:
        gc.unfreeze()
        assert gc.isenabled()
        loop.scrape_once(T0)
        assert during == [False] and gc.isenabled()  # paused for the first scrape, back after it
        assert policy.freezes == 1 and gc.get_freeze_count() > 0  # 1,200 new series: frozen unwalked
        loop.scrape_once(T0 + 15)  # warm: the collector runs as usual, nothing more frozen
        assert during == [False, True] and policy.freezes == 1
        assert loop.targets()[0].health == "up" and store.stats.appended == 2 * (1_200 + 5)
    finally:
        loop.stop()
        store.close()


def test_a_pause_inside_a_pause_gives_the_collector_back_once_the_last_ends() -> None:
    policy = NewSeriesGc(min_series=10)
    with policy.making(lambda: 0):
        with policy.making(lambda: 20):
            assert not gc.isenabled()
        assert not gc.isenabled() and policy.freezes == 1  # the outer batch still runs
    assert gc.isenabled() and policy.freezes == 1  # the outer made too few to freeze
    with pytest.raises(RuntimeError), policy.making(lambda: 0):
        raise RuntimeError("a batch that fails")
    assert gc.isenabled()
