"""The server's filling in of format-3 edge series (server/ingest/_edge_fill.py), table-driven."""

from __future__ import annotations

import itertools
import math

from inferwatch.model import Labels, Sample
from inferwatch.server.ingest._edge_fill import MAX_FILL_PER_BATCH, Filler

G, C = Labels.of("g", device="d"), Labels.of("c_total", device="d")


def _fill(f: Filler, batch: list[tuple[Labels, float, float]], step: float = 15.0,
          gap: float = 300.0) -> list[tuple[str, float, float]]:
    got = f.fill([Sample(ls, t, v) for ls, t, v in batch], lambda ls: ls == C, step, gap, "d")
    return sorted((s.labels.name, s.t, s.v) for s in got)


def test_gauges_hold_counters_follow_their_line_and_resets_are_not_joined() -> None:
    f = Filler()
    _fill(f, [(G, 0, 5.0), (C, 0, 100.0)])
    assert _fill(f, [(G, 60, 7.0), (C, 60, 160.0)]) == [
        ("c_total", 15, 115.0), ("c_total", 30, 130.0), ("c_total", 45, 145.0), ("c_total", 60, 160.0),
        ("g", 15, 5.0), ("g", 30, 5.0), ("g", 45, 5.0), ("g", 60, 7.0)]
    assert _fill(f, [(C, 90, 3.0)]) == [("c_total", 90, 3.0), ("g", 75, 7.0), ("g", 90, 7.0)]  # a reset


def test_nothing_across_a_gap_past_the_heartbeat_max_and_gone_gauges_stop_being_held() -> None:
    f = Filler()
    _fill(f, [(G, 0, 5.0)])
    assert _fill(f, [(G, 1000, 6.0)], gap=300.0) == [("g", 1000, 6.0)]  # the device was off
    _fill(f, [(G, 1015, math.nan)])
    assert _fill(f, [(C, 1060, 1.0)]) == [("c_total", 1060, 1.0)]  # NaN is not held
    f2 = Filler()
    _fill(f2, [(G, 0, 5.0), (C, 0, 1.0)])
    assert len(_fill(f2, [(C, 330, 2.0)])) == 2 * (330 // 15)  # c_total: its line; g: held to 330
    assert _fill(f2, [(C, 1000, 3.0)]) == [("c_total", 1000, 3.0)]  # g went away: no longer held


def test_a_wrong_step_costs_little() -> None:
    f = Filler()
    many = [Labels.of("g", i=str(i)) for i in range(200)]
    f.fill([Sample(ls, 0.0, 1.0) for ls in many], lambda _: False, 0.001, 1800.0)
    got = f.fill([Sample(ls, 1800.0, 2.0) for ls in many], lambda _: False, 0.001, 1800.0)
    assert len(got) <= MAX_FILL_PER_BATCH + 2 * 2000 + len(many)  # not 200 x 1.8 million
    assert all(b.t - a.t >= 1.0 - 1e-9 for a, b in itertools.pairwise(got) if a.labels == b.labels)
