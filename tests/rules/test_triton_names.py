"""The Triton engine pack reads the metric names Triton publishes (its user guide, "Metrics",
r24.04 and later: the counters of inference requests, their latencies, GPU utilisation), and the
dashboard's queue-and-compute panel reads the same names beside the runtime run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import inferwatch.server.web as web
from inferwatch.rules import engine_rule_specs

# Triton's documented names (docs/user_guide/metrics.md of triton-inference-server/server): counts,
# latency counters (microseconds, cumulative, per model), their experimental summaries, GPU, CPU,
# response cache. Written out here so a typo in the pack fails a test instead of emptying an alert.
TRITON_METRICS = {
    "nv_inference_request_success", "nv_inference_request_failure", "nv_inference_count",
    "nv_inference_exec_count", "nv_inference_request_duration_us", "nv_inference_queue_duration_us",
    "nv_inference_compute_input_duration_us", "nv_inference_compute_infer_duration_us",
    "nv_inference_compute_output_duration_us", "nv_inference_request_summary_us",
    "nv_inference_queue_summary_us", "nv_inference_compute_input_summary_us",
    "nv_inference_compute_infer_summary_us", "nv_inference_compute_output_summary_us",
    "nv_gpu_power_usage", "nv_gpu_power_limit", "nv_energy_consumption", "nv_gpu_utilization",
    "nv_gpu_memory_total_bytes", "nv_gpu_memory_used_bytes", "nv_cpu_utilization",
    "nv_cpu_memory_total_bytes", "nv_cpu_memory_used_bytes", "nv_cache_num_hits_per_model",
    "nv_cache_num_misses_per_model", "nv_cache_hit_duration_per_model", "nv_cache_miss_duration_per_model",
}
NV = re.compile(r"\bnv_[a-z_]+")


def test_every_triton_metric_the_pack_reads_is_one_triton_publishes() -> None:
    used = {name for spec in engine_rule_specs(["triton"]) for name in NV.findall(repr(spec.signal))}
    assert used, "the pack reads no nv_ metric"
    assert used <= TRITON_METRICS, sorted(used - TRITON_METRICS)
    # queue versus compute: both latency counters, each per successful request
    assert {"nv_inference_queue_duration_us", "nv_inference_compute_infer_duration_us"} <= used


def test_the_dashboard_reads_triton_queue_and_compute_beside_the_runtime_run() -> None:
    spec = json.loads((Path(web.__file__).parent / "dashboard" / "overview.json").read_text())
    titles = [p["title"] for s in spec for p in s["panels"]]
    panel = next((p for s in spec for p in s["panels"] if p["title"].startswith("Queue and compute")), None)
    assert panel is not None, titles
    exprs = " ".join(q["expr"] for q in panel["queries"])
    names = set(NV.findall(exprs))
    assert names <= TRITON_METRICS and "nv_inference_queue_duration_us" in names
    assert "inferwatch_runtime_run_duration_seconds_sum" in exprs
