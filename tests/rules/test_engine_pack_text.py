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

import functools
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


def _sglang(m: int, onset: int = 5) -> str:
    # the scheduler's gauges and the tokenizer's counters and histograms, as collector.py names them
    bad = max(0, m - onset)
    n = 10.0 * m
    fast = n - 10.0 * bad
    labels = 'model_name="Qwen/Qwen2.5-7B-Instruct"'
    sched = f'{labels},engine_type="unified",tp_rank="0",pp_rank="0",moe_ep_rank="0"'
    return "\n".join([
        "# HELP sglang:num_queue_reqs The number of requests in the waiting queue.",
        "# TYPE sglang:num_queue_reqs gauge",
        f"sglang:num_queue_reqs{{{sched}}} {20.0 if m >= onset else 1.0}",
        "# HELP sglang:token_usage The token usage.",
        "# TYPE sglang:token_usage gauge",
        f"sglang:token_usage{{{sched}}} {0.97 if m >= onset else 0.35}",
        "# HELP sglang:num_requests_total Number of requests processed.",
        "# TYPE sglang:num_requests_total counter",
        f"sglang:num_requests_total{{{labels}}} {n}",
        "# HELP sglang:num_aborted_requests_total Number of requests aborted.",
        "# TYPE sglang:num_aborted_requests_total counter",
        f"sglang:num_aborted_requests_total{{{labels}}} {5.0 * bad}",
        _histogram("sglang:time_to_first_token_seconds", labels, ["0.4", "2", "4"], [fast, fast, n], n),
        _histogram("sglang:inter_token_latency_seconds", labels, ["0.1", "0.4"], [fast, n], n),
    ]) + "\n"


def _trtllm(m: int, onset: int = 5) -> str:
    # Triton's endpoint with the TensorRT-LLM backend's gauges (tensorrtllm_backend README); from minute 5
    # the executor hangs: 8 requests active, the iteration counter frozen, 30 waiting, the KV cache full
    hung = m >= onset
    labels = 'model="tensorrt_llm",version="1"'
    reqs = {"active": 8 if hung else (m % 3), "max": 8, "scheduled": 8 if hung else 1, "context": 0,
            "waiting": 30 if hung else 0}
    blocks = {"fraction": 0.9, "tokens_per": 64, "used": 6100 if hung else 900, "free": 139 if hung else 5339,
              "max": 6239}
    req, kv = "nv_trt_llm_request_metrics", "nv_trt_llm_kv_cache_block_metrics"
    gen = "nv_trt_llm_general_metrics"
    lines = [f"# HELP {req} TRT LLM request metrics", f"# TYPE {req} gauge"]
    lines += [f'{req}{{{labels},request_type="{k}"}} {v}' for k, v in reqs.items()]
    lines += [f"# HELP {kv} TRT LLM KV cache block metrics", f"# TYPE {kv} gauge"]
    lines += [f'{kv}{{{labels},kv_cache_block_type="{k}"}} {v}' for k, v in blocks.items()]
    lines += [f"# HELP {gen} General TRT LLM metrics", f"# TYPE {gen} gauge",
              f'{gen}{{{labels},general_type="iteration_counter"}} {min(m, onset) * 600}',
              f'{gen}{{{labels},general_type="timestamp"}} {1700074049 + 60 * m}']
    return "\n".join(lines) + "\n"


def _firing(pack: str, job: str, body: Callable[[int], str], minute: int, quiet: int = 5) -> dict[str, str]:
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
        if m < quiet:
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


def test_sglang_pack_on_sglang_metric_text() -> None:
    assert _firing("sglang", "sglang", _sglang, 16) == {
        "SglangHighTimeToFirstToken": "P1", "SglangHighInterTokenLatency": "P1", "SglangQueueBacklog": "P2",
        "SglangKVCacheNearFull": "P2", "SglangAbortedRequests": "P2",
    }


def test_trtllm_pack_on_the_tensorrt_llm_backend_metric_text() -> None:
    assert _firing("trtllm", "triton-trtllm", _trtllm, 21) == {
        "TrtllmStalled": "P1", "TrtllmQueueBacklog": "P2", "TrtllmKVCacheNearFull": "P2",
        "TrtllmBatchFull": "P2",
    }


@pytest.mark.parametrize(("pack", "job", "body"), [
    ("sglang", "sglang", functools.partial(_sglang, onset=10**6)),
    ("trtllm", "triton-trtllm", functools.partial(_trtllm, onset=10**6)),
], ids=["sglang", "trtllm"])
def test_a_healthy_engine_is_quiet_for_an_hour(pack: str, job: str, body: Callable[[int], str]) -> None:
    assert _firing(pack, job, body, 60, quiet=61) == {}
