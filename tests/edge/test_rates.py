"""Counters' ``rate()`` at the server against the raw trace (edge/_rates.py), and the deadband that keeps it.

Oracles: the server's own filler (``server/ingest/_edge_fill``) for the rebuilt series and the
PromQL engine's ``extrapolated_rate`` for the rate; then device stories the deadband must keep
within 10 % of one increment per window: the idle CPU counter of issue #52 (375 % off before),
a sparse bursty error counter, a counter that resets.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from inferwatch.edge import Deadband, DeadbandSettings
from inferwatch.edge._rates import increment_of, rate_error, rebuild, window_rate
from inferwatch.model import Labels, MetricKind, Sample
from inferwatch.promql._kernels import extrapolated_rate
from inferwatch.server.ingest._edge_fill import Filler

C = Labels.of("c_total")
KINDS = {"c_total": MetricKind.COUNTER}


def test_the_window_rate_is_the_promql_engines() -> None:
    rng = random.Random(3)
    for _ in range(200):
        n = rng.randint(2, 25)
        ts = sorted(rng.uniform(0, 300) for _ in range(n))
        vs = list(itertools.accumulate(rng.choice([0, 0, 1, 5, -50]) for _ in range(n)))
        vs = [max(v, 0.0) for v in vs]
        increase = sum(b - a if b >= a else b for a, b in itertools.pairwise(vs))
        want = extrapolated_rate(np.array([round(t * 1000) for t in ts]), np.array(vs), 0, 300_000, 300.0)
        got = window_rate(round(ts[0] * 1000) / 1000, round(ts[-1] * 1000) / 1000, vs[0], increase, n - 1,
                          0.0, 300.0)
        assert want is not None and got == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_the_rebuilt_counter_is_what_the_server_fills_in() -> None:
    rng = random.Random(5)
    sent, t, v = [], 0.0, 0.0
    for _ in range(60):
        t += rng.choice([15.0, 15.0, 26.0, 30.0, 45.0, 120.0, 2500.0])
        v = v + rng.randint(0, 40) if rng.random() > 0.1 else rng.randint(0, 5)  # resets too
        sent.append(Sample(C, t, float(v)))
    f = Filler()
    server = sorted((s.t, s.v) for s in f.fill(sent, lambda ls: True, 15.0, 1800.0))
    got = rebuild(sent, 15.0, 1800.0)
    assert len(got) == len(server) > len(sent)
    assert list(itertools.chain(*got)) == pytest.approx(list(itertools.chain(*server)))


def _replay(points: list[tuple[float, float]], settings: DeadbandSettings | None = None) -> float:
    db = Deadband(settings or DeadbandSettings(heartbeat_max=1800.0), kinds=dict(KINDS))
    raw = [Sample(C, t, v) for t, v in points]
    sent = [x for s in raw for x in db.offer_all([s])]
    return rate_error(raw, sent, 15.0, 1800.0, 300.0).error


def _walk(rates: list[tuple[int, float]], quantum: float, seed: int) -> list[tuple[float, float]]:
    """A counter read every 15 s: (steps, mean increase a step) stretches, in ``quantum`` units."""
    rng, v, out = random.Random(seed), 1000.0, []
    steps = itertools.chain.from_iterable(itertools.repeat(r, n) for n, r in rates)
    for i, r in enumerate(steps):
        v += round(rng.expovariate(1.0 / r) / quantum) * quantum if r else 0.0
        out.append((i * 15.0 + rng.uniform(-0.01, 0.01), v))
    return out


# the story, the counter (steps, mean increase a step), its quantum
STORIES = [
    ("an idle CPU counter after a burst (issue #52: 375 % off)", [(20, 0.01), (4, 3.0), (60, 0.005)], 0.01),
    ("an error counter moving once every few minutes", [(15, 0.0), (1, 1.0), (25, 0.0), (1, 2.0), (30, 0.0)],
     1.0),
    ("a busy request counter with a lull", [(40, 300.0), (20, 2.0), (40, 300.0)], 1.0),
    ("bursts of requests between quiet spells",
     [(10, 0.0), (3, 400.0), (12, 0.0), (2, 900.0), (20, 0.0)], 1.0),
]


@pytest.mark.parametrize("story,rates,quantum", STORIES, ids=[s[0] for s in STORIES])
def test_every_5_minute_rate_is_within_10_percent_of_one_increment(story: str, rates: list[tuple[int, float]],
                                                                    quantum: float) -> None:
    for seed in range(5):
        points = _walk(rates, quantum, seed)
        assert increment_of(points) > 0
        assert _replay(points) <= 0.1, (story, seed)


def test_a_counter_that_resets_keeps_its_rate() -> None:
    points = _walk([(30, 50.0)], 1.0, 1) + [(t + 450.0, v - 1000.0) for t, v in _walk([(40, 50.0)], 1.0, 2)]
    assert any(b < a for (_, a), (_, b) in itertools.pairwise(points))
    assert _replay(points) <= 0.1


def test_a_smeared_reconstruction_is_caught() -> None:
    # the old deadband's failure: an idle counter's burst drawn as one line over ten minutes
    points = _walk([(20, 0.0), (2, 50.0), (20, 0.0)], 1.0, 0)
    raw = [Sample(C, t, v) for t, v in points]
    smeared = [raw[0], raw[-1]]
    assert rate_error(raw, smeared, 15.0, 1800.0, 300.0).error > 1.0
    assert rate_error(raw, raw, 15.0, 1800.0, 300.0).error == pytest.approx(0.0, abs=1e-9)
