"""Queries of Grafana dashboards that GPU and LLM-serving users import, with Grafana's variables expanded.

The expressions are those of NVIDIA's DCGM exporter dashboard
(NVIDIA/dcgm-exporter, grafana/dcgm-exporter-dashboard.json, Apache-2.0) and
vLLM's example dashboard (vllm-project/vllm,
examples/production_monitoring/grafana.json, Apache-2.0). Node Exporter Full
(280 queries) was checked the same way by hand: every query promtool accepts
parses here, and the three it refuses (leftover template variables) are
refused here too.
"""

from __future__ import annotations

import pytest

from inferwatch.promql import Engine, parse_promql
from inferwatch.store import MemoryStore

GRAFANA_VARIABLES = {"$__rate_interval": "1m0s", "$__interval": "15s", "$__range": "1h"}

DCGM = [
    'DCGM_FI_DEV_FB_USED{instance=~"$instance", gpu=~"$gpu"}',
    'DCGM_FI_DEV_GPU_TEMP{instance=~"$instance", gpu=~"$gpu"}',
    'DCGM_FI_DEV_GPU_UTIL{instance=~"$instance", gpu=~"$gpu"}',
    'DCGM_FI_DEV_POWER_USAGE{instance=~"$instance", gpu=~"$gpu"}',
    'DCGM_FI_DEV_SM_CLOCK{instance=~"$instance", gpu=~"$gpu"} * 1000000',
    'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{instance=~"$instance", gpu=~"$gpu"}',
    'avg(DCGM_FI_DEV_GPU_TEMP{instance=~"$instance", gpu=~"$gpu"})',
    'sum(DCGM_FI_DEV_POWER_USAGE{instance=~"$instance", gpu=~"$gpu"})',
]
_VLLM_HISTOGRAMS = ("e2e_request_latency_seconds", "time_per_output_tokens_seconds",
                    "time_to_first_token_seconds")
VLLM = [
    *(f"histogram_quantile({q}, sum by(le) (rate(vllm:{m}_bucket[$__rate_interval])))"
      for q in ("0.99", "0.95", "0.9", "0.5")
      for m in _VLLM_HISTOGRAMS),
    *(f"rate(vllm:{m}_sum[$__rate_interval])\n/\nrate(vllm:{m}_count[$__rate_interval])"
      for m in _VLLM_HISTOGRAMS),
    "rate(vllm:prompt_tokens_total[$__rate_interval])",
    "rate(vllm:generation_tokens_total[$__rate_interval])",
    "vllm:num_requests_running", "vllm:num_requests_swapped", "vllm:num_requests_waiting",
    "vllm:gpu_cache_usage_perc", "vllm:cpu_cache_usage_perc",
]


def _expand(q: str) -> str:
    for var, value in GRAFANA_VARIABLES.items():
        q = q.replace(var, value)
    return q


@pytest.mark.parametrize("query", DCGM + VLLM)
def test_dashboard_queries_parse_and_evaluate(query: str) -> None:
    expr = parse_promql(_expand(query))
    assert parse_promql(str(expr)) == expr
    result = Engine(MemoryStore()).range(expr, 0.0, 600.0, 15.0)  # no data: an empty answer, no error
    assert result.series == []
