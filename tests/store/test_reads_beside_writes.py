"""Issue 46: a rule round's reads of the head never wait for the SQLite file (a scrape's write of
200,000 samples, a compaction); reads that reach the disk do, as appends do, one at a time."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from inferwatch.model import Labels, SimulatedClock, parse_matchers
from inferwatch.store import SQLiteStore

T0 = 1_000_000.0


def _in_thread(fn: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    got: list[object] = []
    th = threading.Thread(target=lambda: got.append(fn()), daemon=True)
    th.start()
    return th, got


def test_head_reads_go_on_while_the_file_is_busy(tmp_path: Path) -> None:
    # rule: the file's lock (held by an append's disk write, a compaction, retention) is not the
    # memory's: instant and range reads of the head answer while it is held; a read before the head
    # and an append wait for it, and answer once it is free
    clock = SimulatedClock(T0 + 7200)
    st = SQLiteStore(tmp_path / "t.sqlite", clock=clock, head_window=3600)
    labels = [Labels.of("g", k=str(i)) for i in range(300)]
    for k in range(3):
        st.append_columns(labels, np.full(300, T0 + 7000 + 15 * k), np.full(300, float(k)))
    m = tuple(parse_matchers('{__name__="g"}'))
    end = T0 + 7100
    with st._file:  # what an append holds across its SQLite write
        for read in (lambda: st.select_latest_columns(m, end - 300, end),
                     lambda: st.select(m, end - 300, end),
                     lambda: st.select_columns(m, end - 300, end), lambda: st.series(m)):
            th, got = _in_thread(read)
            th.join(60)
            assert not th.is_alive() and got and got[0] is not None
        disk, old = _in_thread(lambda: st.select(m, T0, end))
        write, _ = _in_thread(lambda: st.append_columns(labels, np.full(300, end), np.full(300, 9.0)))
        disk.join(0.2)
        write.join(0.2)
        assert disk.is_alive() and write.is_alive()  # they wait for the file
    disk.join(60)
    write.join(60)
    assert not disk.is_alive() and not write.is_alive()
    assert len(old[0]) == 300  # type: ignore[arg-type]
    latest = st.select_latest_columns(m, end - 300, end)
    assert latest is not None and set(latest.v.tolist()) == {9.0}
