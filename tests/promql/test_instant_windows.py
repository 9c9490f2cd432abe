"""A window function over a wide selection at one step (a rule's ``rate(x[5m])`` over thousands of series)
is computed for every series at once, and answers exactly what the per-series path does.

Three answers at each time: the SQLite store (one columnar batch: the batch path), the same store seen
through ``select`` only (one object per series, still wide: the range path's windows at one step), and
the reference, the per-series kernels, reached by selecting a tenth of the series at a time (under the
evaluator's wide bound). Counters with resets, staleness markers, NaN and ±Inf, gaps, series that stop.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np
import pytest

from inferwatch.model import STALE_NAN, Labels, SimulatedClock
from inferwatch.promql import Engine
from inferwatch.store import SQLiteStore

T0 = 1_000_000.0
N = 400  # over the evaluator's wide bound (256)
PARTS = 10
FUNCS = ["rate", "increase", "delta", "irate", "idelta", "count_over_time", "present_over_time",
         "last_over_time", "sum_over_time", "avg_over_time", "max_over_time", "min_over_time"]


class SelectOnly:
    """The store as a view with ``select`` only: one object per series."""

    def __init__(self, store: SQLiteStore) -> None:
        self.select, self.series, self.label_values = store.select, store.series, store.label_values


def _bits(x: float) -> object:
    return "nan" if math.isnan(x) else struct.pack("<d", x)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SQLiteStore:
    st = SQLiteStore(Path(tmp_path_factory.mktemp("win")) / "t.sqlite", clock=SimulatedClock(T0 + 600))
    rng = np.random.default_rng(56)
    labels = [Labels.of("c", part=str(i % PARTS), key=f"k{i}") for i in range(N)]
    level = rng.uniform(0, 100, N)
    odd = [math.nan, math.inf, -math.inf, STALE_NAN]
    for k in range(0, 600, 15):
        level += rng.exponential(5, N)
        level[rng.random(N) < 0.03] = 0.0  # counter resets
        vals = level.copy()
        hit = rng.random(N) < 0.03
        vals[hit] = rng.choice(odd, int(hit.sum()))
        keep = rng.random(N) > (0.5 if k >= 400 else 0.05)  # gaps; many series thin out later
        kept = [ls for ls, ok in zip(labels, keep, strict=True) if ok]
        at = T0 + k + (0.5 if k % 60 == 45 else 0.0)  # on 15 s (samples on window edges), some not
        st.append_columns(kept, np.full(len(kept), at), vals[keep])
    return st


def _by_parts(store: SQLiteStore, func: str, sel: str, t: float) -> dict[Labels, object]:
    out: dict[Labels, object] = {}
    for p in range(PARTS):
        narrow = sel.replace("c", f'c{{part="{p}"}}', 1)
        got = Engine(store).instant(f"{func}({narrow})", t).value
        assert isinstance(got, list)
        out.update((ls, _bits(x)) for ls, x in got)
    return out


@pytest.mark.parametrize("func", FUNCS)
def test_wide_windows_answer_as_the_per_series_kernels(store: SQLiteStore, func: str) -> None:
    for sel in ("c[1m]", "c[5m]", "c[2m] offset 3m", "c[1m] @ 1000300"):
        for t in (T0 + 10.0, T0 + 130.0, T0 + 450.0, T0 + 599.0, T0 + 900.0):
            expr = f"{func}({sel})"
            batch = Engine(store).instant(expr, t).value
            objects = Engine(SelectOnly(store)).instant(expr, t).value  # type: ignore[arg-type]
            assert isinstance(batch, list) and isinstance(objects, list)
            assert [(ls, _bits(x)) for ls, x in batch] == [(ls, _bits(x)) for ls, x in objects], (expr, t)
            assert {ls: _bits(x) for ls, x in batch} == _by_parts(store, func, sel, t), (expr, t)


def test_a_name_clash_after_dropping_it_is_still_an_error(store: SQLiteStore) -> None:
    # rule: `rate` drops the metric name; two metrics with the same other labels clash, as series by series
    clash = SQLiteStore(store.path.parent / "clash.sqlite", clock=SimulatedClock(T0 + 600))
    for k in range(0, 120, 15):
        ls = [Labels.of(name, key=f"k{i}") for name in ("a", "b") for i in range(200)]
        clash.append_columns(ls, np.full(len(ls), T0 + k), np.full(len(ls), float(k)))
    with pytest.raises(Exception, match="same labelset"):
        Engine(clash).instant('rate({__name__=~"a|b"}[1m])', T0 + 110)
    clash.close()
