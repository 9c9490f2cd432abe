"""Group commit of edge uploads: concurrent uploads written together, each answered once committed."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from inferwatch._exceptions import InputError, StoreError
from inferwatch.config import parse_config
from inferwatch.edge import Batch, encode_batch
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.server import build_components
from inferwatch.server.ingest._edge_commit import GroupCommit
from inferwatch.server.ingest._edge_ingest import EdgeIngest

T0 = 1_700_000_000.0


def _concurrently(n: int, submit: object) -> list[BaseException | None]:
    """``submit(k)`` from ``n`` threads released together; what each raised (None: returned)."""
    out: list[BaseException | None] = [None] * n
    go = threading.Barrier(n)

    def one(k: int) -> None:
        go.wait()
        try:
            submit(k)  # type: ignore[operator]
        except BaseException as exc:
            out[k] = exc

    threads = [threading.Thread(target=one, args=(k,)) for k in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    return out


def test_uploads_queued_behind_a_write_go_in_one_group_and_none_returns_before_its_group_is_written() -> None:
    written: list[list[int]] = []
    first_in, release = threading.Event(), threading.Event()

    def write(items: list[int]) -> None:
        if not written:  # hold the first write until the others queued behind it
            first_in.set()
            assert release.wait(60)
        written.append(list(items))

    gc: GroupCommit[int] = GroupCommit(write)
    done: list[int] = []
    lead = threading.Thread(target=lambda: (gc.submit(0), done.append(0)))
    lead.start()
    assert first_in.wait(60)
    others = [threading.Thread(target=lambda k=k: (gc.submit(k), done.append(k))) for k in range(1, 9)]
    for th in others:
        th.start()
    deadline = time.monotonic() + 60
    while len(gc._queue) < 8 and time.monotonic() < deadline:  # all eight waiting behind the held write
        threading.Event().wait(0.01)
    assert done == []
    release.set()
    for th in [lead, *others]:
        th.join(60)
    assert written[0] == [0] and sorted(written[1]) == list(range(1, 9)) and len(written) == 2
    assert sorted(done) == list(range(9)) and (gc.groups, gc.items) == (2, 9)


def test_a_group_with_one_bad_batch_refuses_only_it_and_a_store_error_answers_every_upload() -> None:
    groups: list[list[int]] = []

    def write(items: list[int]) -> None:
        groups.append(items)
        if 3 in items:
            raise InputError("batch 3: over the series limit")

    gc: GroupCommit[int] = GroupCommit(write)
    got = _concurrently(6, gc.submit)
    assert [type(e).__name__ if e else None for e in got] == [None, None, None, "InputError", None, None]
    assert sum(g.count(3) for g in groups) >= 1 and {k for g in groups for k in g} == set(range(6))

    def broken(items: list[int]) -> None:
        raise StoreError("disk full")

    gc = GroupCommit(broken)
    assert all(isinstance(e, StoreError) for e in _concurrently(4, gc.submit))
    assert gc._queue == [] and not gc._writing  # nobody left waiting, the next upload writes again


def test_a_fleet_uploading_at_once_is_stored_whole_counted_once_and_kept_on_restart(tmp_path: Path) -> None:
    names = [f"cam-{i:02d}" for i in range(24)]
    tokens = ", ".join(f"{n}: tok-{n}" for n in names)
    cfg = parse_config(f"server: {{data_dir: '{tmp_path}'}}\nstorage: {{type: memory}}\n"
                       f"edge: {{devices: {{{tokens}}}}}\n")
    clock = SimulatedClock(T0)
    comps = build_components(cfg, clock=clock)
    ingest = EdgeIngest(cfg.edge, comps.store, clock, tmp_path)

    def upload(k: int, seq: int = 1) -> object:
        name = names[k % len(names)]
        pts = tuple(Sample(Labels.of("temp", zone=str(z)), T0 - 30 + seq, 40.0 + z) for z in range(5))
        return ingest.ingest(f"Bearer tok-{name}", encode_batch(Batch(name, f"s:{seq}", pts, 120.0)))

    assert _concurrently(len(names), upload) == [None] * len(names)
    assert ingest._commits.items == len(names) and not ingest._writing
    again = [upload(k) for k in range(3)]  # the agent retried: stored once
    assert [r["status"] for r in again] == ["duplicate"] * 3  # type: ignore[index]
    st = ingest.devices["cam-00"]
    assert (st.samples, st.batches, st.duplicates) == (5, 1, 1)
    stored = comps.store.series([])
    assert sum(1 for s in stored if s.get("__name__") == "temp") == 5 * len(names)
    ingest.close()
    back = EdgeIngest(cfg.edge, comps.store, clock, tmp_path)  # the counts and ids were committed
    assert (back.devices["cam-01"].samples, back.devices["cam-01"].batches) == (5, 1)
    assert back.ingest("Bearer tok-cam-01", encode_batch(Batch("cam-01", "s:1", (), 120.0)))["status"] \
        == "duplicate"
    back.close()
    comps.close()


def test_the_same_batch_sent_again_while_its_first_upload_waits_is_told_to_retry(tmp_path: Path) -> None:
    cfg = parse_config(f"server: {{data_dir: '{tmp_path}'}}\nstorage: {{type: memory}}\n"
                       "edge: {devices: {cam: tok}}\n")
    clock = SimulatedClock(T0)
    comps = build_components(cfg, clock=clock)
    ingest = EdgeIngest(cfg.edge, comps.store, clock, None)
    ingest._writing.add(("cam", "s:1"))
    body = encode_batch(Batch("cam", "s:1", (Sample(Labels.of("temp"), T0, 1.0),), 120.0))
    with pytest.raises(Exception, match="being stored") as err:
        ingest.ingest("Bearer tok", body)
    assert getattr(err.value, "status", None) == 429
    ingest._writing.clear()
    assert ingest.ingest("Bearer tok", body)["status"] == "success"
    ingest.close()
    comps.close()
