"""The load generator tells when the service first answered (the demo's story starts there)."""

from __future__ import annotations

import threading

import httpx
import numpy as np

from inferwatch.demo import FeatureGenerator, LoadGenerator

BOUND_S = 30.0


def test_wait_answered_holds_until_a_first_request_has_its_outcome() -> None:
    # rule: a cold or slow service does not eat the story's first phase: run_demo starts the story
    # only once a request came back (bounded), so the first phase's requests are really served
    release = threading.Event()

    def handler(request: httpx.Request) -> httpx.Response:
        release.wait(BOUND_S)
        return httpx.Response(200, json={"score": 0.5})

    load = LoadGenerator("http://demo.invalid/predict", FeatureGenerator(np.random.default_rng(1)),
                         rate=50, threads=2, transport=httpx.MockTransport(handler))
    load.start()
    try:
        assert not load.wait_answered(0.05)  # every request is held by the service: nothing back yet
        release.set()
        assert load.wait_answered(BOUND_S)
        assert load.outcomes().get("200", 0) >= 1
    finally:
        release.set()
        load.stop()
