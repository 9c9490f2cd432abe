"""Embedding drift end to end: an SDK Monitor exports it, a real `inferwatch serve` scrapes it and
the default pack's EmbeddingDrift rule goes pending on it (it needs 10 minutes to fire)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from tests.server._proc import serve, wait_query, wait_scraped

from inferwatch.model import SimulatedClock
from inferwatch.quality import EmbeddingDriftAggregator
from inferwatch.sdk import Monitor

pytestmark = pytest.mark.slow


def _rule_state(client: httpx.Client, within_s: float = 60.0) -> str:
    """EmbeddingDrift's state once the evaluator has seen the series ("inactive" if it never did).

    Bounded by time, not by a count of polls: a loaded CI runner answers many fast polls before
    the server's one-second evaluation comes round.
    """
    state = "inactive"
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        groups = client.get("/api/v1/rules").json()["data"]["groups"]
        state = next(r["state"] for g in groups for r in g["rules"] if r["name"] == "EmbeddingDrift")
        if state != "inactive":
            return str(state)
        client.get("/-/healthy")  # a round trip: the evaluation thread runs meanwhile
    return str(state)


def test_serve_scrapes_embedding_drift_and_the_rule_goes_pending(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    clock = SimulatedClock(0.0)
    agg = EmbeddingDriftAggregator({"query": rng.normal(size=(500, 32))}, service="search", model="m",
                                   window=60.0, sample_size=500, permutations=100)
    with Monitor("search", "m", clock=clock, aggregators=[agg]) as mon:
        for v in rng.normal(0.5, 1.0, size=(400, 32)):
            mon.observe_embedding("query", v)
        assert mon.flush(60.0)
        clock.advance(61.0)  # the drifted window closes
        # the closed window's tests run on its first collection: here, not inside the server's
        # first scrape (1 s timeout), which a loaded runner can take longer than
        assert any(f.name == "inferwatch_embedding_drift_auc" and f.samples for f in agg.collect(clock.now()))
        target = mon.serve_metrics()
        try:
            config = (f"server: {{data_dir: '{tmp_path / 'data'}', evaluation_interval: 1s}}\n"
                      f"scrape: {{targets: [{{job: search, url: '{target.url}', interval: 1s}}]}}\n")
            with serve(config, tmp_path) as served, httpx.Client(base_url=served.url, timeout=10) as client:
                wait_scraped(client)
                result = wait_query(client, "inferwatch_embedding_drift_auc")
                assert result[0]["metric"]["embedding"] == "query"
                assert float(result[0]["value"][1]) > 0.9
                assert _rule_state(client) == "pending"
        finally:
            target.close()
