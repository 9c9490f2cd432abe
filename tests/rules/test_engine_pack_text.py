"""Engine packs on each engine's metric text, as its documentation shows it, scraped and evaluated.

A fake target renders the engine's ``/metrics`` body (``# HELP``/``# TYPE``,
its metric names and labels) minute by minute; the body goes through the
server's exposition parser with the target's ``job``/``instance`` into a
store, and the pack's rules are evaluated on simulated time. From minute 5
the engine degrades; at minute 16 (21 for the 10m `for` of TritonGPUSaturated)
the expected alerts fire with their tiers,
and before minute 5 none does.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inferwatch.config import parse_config
from inferwatch.formats._exposition import ExpositionParser
from inferwatch.model import SimulatedClock
from inferwatch.rules import AlertState, load_rules
from inferwatch.rules._evaluator import Evaluator
from inferwatch.store import MemoryStore
from inferwatch.store._memory import append_columns


def _histogram(name: str, labels: str, bounds: list[str], counts: list[float], total: float) -> str:
    lines = [f"# HELP {name} Histogram.", f"# TYPE {name} histogram"]
    for le, c in zip([*bounds, "+Inf"], [*counts, total], strict=True):
        lines.append(f'{name}_bucket{{{labels},le="{le}"}} {c}')
    lines += [f"{name}_sum{{{labels}}} {total * 0.5}", f"{name}_count{{{labels}}} {total}"]
    return "\n".join(lines)


def _vllm(kv_name: str, itl_name: str) -> Callable[[int], str]:
    def body(m: int) -> str:
        bad = max(0, m - 5)  # minutes since the engine degraded
        n = 10.0 * m
        labels = 'engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"'
        fast = n - 10.0 * bad
        return "\n".join([
            "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
            "# TYPE vllm:num_requests_waiting gauge",
            f"vllm:num_requests_waiting{{{labels}}} {20.0 if m >= 5 else 0.0}",
            f"# HELP {kv_name} KV-cache usage. 1 means 100 percent usage.",
            f"# TYPE {kv_name} gauge",
            f"{kv_name}{{{labels}}} {0.97 if m >= 5 else 0.3}",
            _histogram("vllm:time_to_first_token_seconds", labels, ["0.5", "2.5", "5.0"], [fast, fast, n], n),
            _histogram(itl_name, labels, ["0.1", "0.5"], [fast, n], n),
            "# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.",
            "# TYPE vllm:num_preemptions_total counter",
            f"vllm:num_preemptions_total{{{labels}}} {60.0 * bad}",
        ]) + "\n"
    return body


def _triton(m: int) -> str:
    bad = max(0, m - 5)
    ok = 100.0 * m
    labels = 'model="resnet50",version="1"'
    return "\n".join([
        "# HELP nv_inference_request_success Number of successful inference requests, all batch sizes",
        "# TYPE nv_inference_request_success counter",
        f"nv_inference_request_success{{{labels}}} {ok}",
        "# HELP nv_inference_request_failure Number of failed inference requests, all batch sizes",
        "# TYPE nv_inference_request_failure counter",
        f'nv_inference_request_failure{{{labels},reason="BACKEND"}} {20.0 * bad}',
        "# HELP nv_inference_queue_duration_us Cumulative inference queuing duration in microseconds",
        "# TYPE nv_inference_queue_duration_us counter",
        f"nv_inference_queue_duration_us{{{labels}}} {ok * 1000.0 + bad * 100 * 5e6}",
        "# HELP nv_inference_compute_infer_duration_us Cumulative compute inference duration in microseconds",
        "# TYPE nv_inference_compute_infer_duration_us counter",
        f"nv_inference_compute_infer_duration_us{{{labels}}} {ok * 1e5 + bad * 100 * 5e6}",
        "# HELP nv_gpu_utilization GPU utilization rate [0.0 - 1.0)",
        "# TYPE nv_gpu_utilization gauge",
        f'nv_gpu_utilization{{gpu_uuid="GPU-7f3a0c1e"}} {0.99 if m >= 5 else 0.4}',
    ]) + "\n"


def _tgi(m: int) -> str:
    bad = max(0, m - 5)
    n = 10.0 * m
    fast = n - 10.0 * bad
    return "\n".join([
        "# TYPE tgi_queue_size gauge",
        f"tgi_queue_size {20.0 if m >= 5 else 0.0}",
        "# TYPE tgi_batch_current_size gauge",
        f"tgi_batch_current_size {8.0}",
        _histogram("tgi_request_duration", 'method="POST"', ["10", "60"], [fast, n], n)
        .replace('{method="POST",', "{").replace('{method="POST"}', ""),
        _histogram("tgi_request_mean_time_per_token_duration", 'method="POST"', ["0.1", "0.5"], [fast, n], n)
        .replace('{method="POST",', "{").replace('{method="POST"}', ""),
    ]) + "\n"


def _firing(pack: str, job: str, body: Callable[[int], str], minute: int) -> dict[str, str]:
    rules = load_rules(parse_config(f"rules:\n  default_pack: false\n  packs: [{pack}]\n"))
    store = MemoryStore()
    clock = SimulatedClock(0.0)
    ev = Evaluator(rules, store, clock=clock)
    parser = ExpositionParser({"job": job, "instance": "host-0:8000"})
    out: dict[str, str] = {}
    for m in range(minute + 1):
        scrape = parser.parse(body(m), m * 60.0)
        assert len(scrape) > 0
        append_columns(store, scrape.labels, scrape.t, scrape.v)
        clock.set(m * 60.0)
        ev.evaluate(m * 60.0)
        out = {a.labels["alertname"]: a.labels["tier"]
               for inst in ev.instances().values() for a in inst.values() if a.state is AlertState.FIRING}
        if m < 5:
            assert out == {}, f"minute {m}"
    store.close()
    return out


@pytest.mark.parametrize(("kv", "itl"), [
    ("vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds"),
    ("vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds"),  # before the renames
], ids=["current-names", "former-names"])
def test_vllm_pack_on_vllm_metric_text(kv: str, itl: str) -> None:
    assert _firing("vllm", "vllm", _vllm(kv, itl), 16) == {
        "VllmQueueBacklog": "P2", "VllmKVCacheNearFull": "P2", "VllmPreemptions": "P2",
        "VllmHighTimeToFirstToken": "P1", "VllmHighInterTokenLatency": "P1",
    }


def test_triton_pack_on_triton_metric_text() -> None:
    assert _firing("triton", "triton", _triton, 21) == {
        "TritonInferenceFailures": "P1", "TritonHighComputeLatency": "P1",
        "TritonHighQueueTime": "P2", "TritonGPUSaturated": "P2",
    }


def test_tgi_pack_on_tgi_metric_text() -> None:
    assert _firing("tgi", "tgi", _tgi, 16) == {
        "TgiQueueBacklog": "P2", "TgiHighRequestLatency": "P1", "TgiHighTimePerToken": "P1",
    }
