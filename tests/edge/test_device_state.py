"""Issue 40 #6: a device's statistics survive a restart of the server (kept in ``edge.sqlite``)."""

from __future__ import annotations

from pathlib import Path

from inferwatch.config import parse_config
from inferwatch.edge import AgentStats, Batch, encode_batch
from inferwatch.model import Labels, Sample, SimulatedClock, parse_matchers
from inferwatch.server.ingest._edge_ingest import EDGE_STATE_FILE, EdgeIngest
from inferwatch.store import MemoryStore

T0 = 1_700_000_000.0


def _upload(ingest: EdgeIngest, clock: SimulatedClock, n: int) -> None:
    t = clock.now()
    samples = (Sample(Labels.of("temp"), t, 40.0 + n), Sample(Labels.of("fps"), t, 25.0))
    batch = Batch("cam-1", f"s:{n}", samples, 120.0, AgentStats(backlog=3))
    ingest.ingest("Bearer tok1", encode_batch(batch))


def test_device_statistics_continue_after_a_restart(tmp_path: Path) -> None:
    cfg = parse_config("edge: {devices: {cam-1: tok1}}\n").edge
    clock = SimulatedClock(T0)
    first = EdgeIngest(cfg, MemoryStore(), clock, tmp_path)
    for n in range(3):
        _upload(first, clock, n)
        clock.advance(60)
    _upload(first, clock, 2)  # a retried batch: a duplicate
    before = dict(vars(first.devices["cam-1"]))
    first.close()
    assert (tmp_path / EDGE_STATE_FILE).exists()

    store = MemoryStore()
    second = EdgeIngest(cfg, store, clock, tmp_path)
    assert vars(second.devices["cam-1"]) == before
    assert (before["samples"], before["batches"], before["duplicates"], before["backlog"]) == (6, 3, 1, 3)
    clock.advance(60)
    _upload(second, clock, 3)
    after = second.devices["cam-1"]
    assert (after.samples, after.batches, after.last_contact) == (8, 4, clock.now())
    # the ingested-samples counter goes on from 6, not from 0 (no counter reset for rate())
    total = parse_matchers('{__name__="inferwatch_edge_ingested_samples_total"}')
    (series,) = store.select(total, T0, T0 + 1e4)
    assert series.v.tolist() == [8.0]
    second.close()


def test_without_a_data_dir_nothing_is_kept(tmp_path: Path) -> None:
    cfg = parse_config("edge: {devices: {cam-1: tok1}}\n").edge
    clock = SimulatedClock(T0)
    ingest = EdgeIngest(cfg, MemoryStore(), clock, None)
    _upload(ingest, clock, 0)
    ingest.close()
    assert EdgeIngest(cfg, MemoryStore(), clock, None).devices == {}
    assert not (tmp_path / EDGE_STATE_FILE).exists()
