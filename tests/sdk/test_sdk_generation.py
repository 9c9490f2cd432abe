"""Generative serving: track_generation / record_generation on simulated time, GenAI buckets, bad input."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families

from inferwatch.model import SimulatedClock
from inferwatch.sdk import Monitor
from inferwatch.sdk._generation import GENERATION

SVC = {"service": "chat", "version": "v1"}
ROUTE = "/v1/chat/completions"
LABELS = {**SVC, "model": "llama-3-8b", "route": ROUTE}
TTFT = "inferwatch_generation_time_to_first_token_seconds"
TPOT = "inferwatch_generation_time_per_output_token_seconds"
DURATION = "inferwatch_generation_duration_seconds"
QUEUE = "inferwatch_generation_queue_duration_seconds"
SPEED = "inferwatch_generation_output_tokens_per_second"

# The OpenTelemetry GenAI semantic conventions' ExplicitBucketBoundaries (gen-ai-metrics.md).
SEMCONV_TTFT = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0]
SEMCONV_TPOT = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5]
SEMCONV_DURATION = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]


def value(m: Monitor, name: str, **extra: str) -> float | None:
    return m.get_sample_value(name, {**LABELS, **extra})


def stream(m: Monitor, clock: SimulatedClock, *, prefill: float, gap: float, tokens: int,
           queue: float = 0.0) -> None:
    with m.track_generation(route=ROUTE, model="llama-3-8b", input_tokens=40) as g:
        if queue:
            clock.advance(queue)
            g.dequeued()
        clock.advance(prefill)
        for _ in range(tokens):
            g.tokens(1)
            clock.advance(gap)


def test_track_generation_measures_ttft_tpot_duration_tokens_and_queue() -> None:
    clock = SimulatedClock(100.0)
    with Monitor("chat", version="v1", clock=clock) as m:
        stream(m, clock, queue=0.05, prefill=0.2, gap=0.03, tokens=11)
        # arrival 0, first token at 0.25, 11 tokens 0.03 apart, the block ends 0.03 after the last
        assert value(m, TTFT + "_sum") == pytest.approx(0.25, abs=1e-9)
        assert value(m, TPOT + "_sum") == pytest.approx(0.33 / 10, abs=1e-9)
        assert value(m, DURATION + "_sum") == pytest.approx(0.58, abs=1e-9)
        assert value(m, QUEUE + "_sum") == pytest.approx(0.05, abs=1e-9)
        assert value(m, SPEED + "_sum") == pytest.approx(11 / 0.58)
        assert value(m, "inferwatch_generation_input_tokens_total") == 40
        assert value(m, "inferwatch_generation_output_tokens_total") == 11
        assert value(m, "inferwatch_generation_requests_total", code="200") == 1
        assert value(m, TTFT + "_bucket", le="0.25") == 1 and value(m, TTFT + "_bucket", le="0.1") == 0


def test_buckets_are_the_genai_semantic_convention_boundaries() -> None:
    clock = SimulatedClock(0.0)
    with Monitor("chat", version="v1", clock=clock) as m:
        stream(m, clock, prefill=0.2, gap=0.03, tokens=3)
        families = {f.name: f for f in text_string_to_metric_families(m.metrics_text())}
    for name, bounds in ((TTFT, SEMCONV_TTFT), (TPOT, SEMCONV_TPOT), (DURATION, SEMCONV_DURATION)):
        les = [s.labels["le"] for s in families[name].samples if s.name == name + "_bucket"]
        assert les == [repr(b) for b in bounds] + ["+Inf"], name
    assert QUEUE not in families  # no queue time was reported: no empty queue histogram


def test_record_generation_one_shot_and_its_model_defaults_to_the_monitors() -> None:
    with Monitor("chat", "llama-3-8b", "v1") as m:
        m.record_generation(ROUTE, 200, ttft_s=0.4, duration_s=2.4, input_tokens=100, output_tokens=201,
                            queue_s=0.1)
        m.record_generation(ROUTE, 503, ttft_s=None, duration_s=0.01, input_tokens=100, output_tokens=0)
        assert value(m, TTFT + "_count") == 1  # the 503 has no first token and is not a success
        assert value(m, TPOT + "_sum") == pytest.approx(2.0 / 200)
        assert value(m, DURATION + "_count") == 2
        assert value(m, QUEUE + "_count") == 1
        assert value(m, "inferwatch_generation_requests_total", code="503") == 1
        assert value(m, "inferwatch_generation_input_tokens_total") == 200


GOOD = {"status": 200, "ttft_s": 0.1, "duration_s": 1.0, "input_tokens": 1, "output_tokens": 1}


@pytest.mark.parametrize(("bad", "why"), [
    ({"ttft_s": -1.0}, "ttft < 0"),
    ({"duration_s": float("nan")}, "NaN duration"),
    ({"input_tokens": "12"}, "str tokens"),
    ({"output_tokens": -3}, "tokens < 0"),
    ({"status": 99}, "status out of range"),
    ({"status": True}, "bool status"),
    ({"queue_s": float("inf")}, "inf queue"),
])
def test_invalid_generations_are_counted_never_raised(bad: dict[str, object], why: str) -> None:
    with Monitor("chat", "llama", "v1") as m:
        m.record_generation(ROUTE, **{**GOOD, **bad})  # type: ignore[arg-type]
        invalid = m.get_sample_value("inferwatch_sdk_invalid_total", {"service": "chat", "kind": GENERATION})
        assert invalid == 1, why
        assert m.get_sample_value(DURATION + "_count", {**LABELS, "model": "llama"}) is None, why


def test_exception_counts_500_and_an_abandoned_stream_499() -> None:
    clock = SimulatedClock(0.0)
    with Monitor("chat", version="v1", clock=clock) as m:
        with pytest.raises(RuntimeError), m.track_generation(route=ROUTE, model="llama-3-8b") as g:
            g.tokens(2)
            raise RuntimeError("engine died")

        def tokens():  # type: ignore[no-untyped-def]
            with m.track_generation(route=ROUTE, model="llama-3-8b") as g:
                while True:
                    g.tokens(1)
                    yield "tok"

        it = tokens()
        next(it), next(it)
        it.close()  # the client went away: GeneratorExit inside the block
        assert value(m, "inferwatch_generation_requests_total", code="500") == 1
        assert value(m, "inferwatch_generation_requests_total", code="499") == 1
        assert value(m, "inferwatch_generation_output_tokens_total") == 4
        assert value(m, TTFT + "_count") == 0  # failures carry no time to first token


def test_first_token_marks_without_counting_and_a_single_token_has_no_tpot() -> None:
    clock = SimulatedClock(0.0)
    with Monitor("chat", version="v1", clock=clock) as m:
        with m.track_generation(route=ROUTE, model="llama-3-8b") as g:
            clock.advance(0.3)
            g.first_token()
            clock.advance(0.1)
            g.first_token()  # later calls change nothing
            g.tokens(1)
        assert value(m, TTFT + "_sum") == pytest.approx(0.3)
        assert value(m, TPOT + "_count") == 0
        assert value(m, "inferwatch_generation_output_tokens_total") == 1


def test_no_generation_series_until_one_is_recorded() -> None:
    with Monitor("ranker", "ctr", "v3") as m:
        m.record_request("/predict", 200, 0.01)
        assert "inferwatch_generation" not in m.metrics_text()


def test_exposition_parses_as_prometheus_text_and_openmetrics() -> None:
    clock = SimulatedClock(0.0)
    with Monitor("chat", version="v1", clock=clock) as m:
        stream(m, clock, prefill=0.1, gap=0.02, tokens=5)
        text, om = m.metrics_text(), m.metrics_text(openmetrics=True)
    names = {f.name for f in text_string_to_metric_families(text)}
    assert {TTFT, TPOT, DURATION, SPEED, "inferwatch_generation_requests",
            "inferwatch_generation_output_tokens"} <= names
    om_names = {f.name for f in parse_openmetrics(om)}
    assert {TTFT, "inferwatch_generation_input_tokens"} <= om_names


@pytest.mark.tools
def test_promtool_check_metrics_passes(tmp_path: Path, require_tool: Callable[..., str]) -> None:
    promtool = require_tool("promtool")
    clock = SimulatedClock(0.0)
    with Monitor("chat", version="v1", clock=clock) as m:
        stream(m, clock, queue=0.01, prefill=0.1, gap=0.02, tokens=5)
        text = m.metrics_text()
    proc = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_concurrent_generations_add_up_exactly() -> None:
    # no lock per token or per response: each Generation is its own object, the queue append is atomic
    threads, each = 4, 250
    with Monitor("chat", "llama-3-8b", "v1") as m:
        start = threading.Barrier(threads)

        def worker() -> None:
            start.wait(10)
            for _ in range(each):
                with m.track_generation(route=ROUTE, input_tokens=3) as g:
                    for _ in range(5):
                        g.tokens(1)

        pool = [threading.Thread(target=worker) for _ in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join(30)
        assert value(m, "inferwatch_generation_requests_total", code="200") == threads * each
        assert value(m, "inferwatch_generation_output_tokens_total") == threads * each * 5
        assert value(m, "inferwatch_generation_input_tokens_total") == threads * each * 3
        assert value(m, TPOT + "_count") == threads * each
