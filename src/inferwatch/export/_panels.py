"""The dashboards' content: which panels, which queries, which units (metric names from the catalog).

Every query filters on the ``$job`` and ``$instance`` variables and every rate
uses ``$__rate_interval``, so the panels follow the scrape interval.
"""

from __future__ import annotations

from dataclasses import dataclass

from inferwatch.model import metrics

__all__ = ["DASHBOARDS", "DashboardSpec", "PanelSpec", "Query"]

_SEL = 'job=~"$job",instance=~"$instance"'


@dataclass(frozen=True, slots=True)
class Query:
    """One PromQL target of a panel and its legend."""

    expr: str
    legend: str


@dataclass(frozen=True, slots=True)
class PanelSpec:
    """A time series (or table, or stat) panel; ``unit`` is Grafana's unit id."""

    title: str
    unit: str
    queries: tuple[Query, ...]
    description: str = ""
    kind: str = "timeseries"
    thresholds: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class DashboardSpec:
    """A dashboard: its uid, title and panels in reading order."""

    uid: str
    title: str
    panels: tuple[PanelSpec, ...]


def _s(name: str, *extra: str) -> str:
    return name + "{" + ",".join((_SEL, *extra)) + "}"


def _rate(name: str, *extra: str) -> str:
    return f"rate({_s(name, *extra)}[$__rate_interval])"


_REQ = metrics.REQUESTS_TOTAL.name
_DUR = metrics.REQUEST_DURATION.name


def _ratio(code: str) -> str:
    return f"sum by (service) ({_rate(_REQ, code)}) / sum by (service) ({_rate(_REQ)})"


SERVICE = DashboardSpec("inferwatch-service", "inferwatch / service", (
    PanelSpec("Requests per second", "reqps", (Query(f"sum by (service) ({_rate(_REQ)})", "{{service}}"),)),
    PanelSpec("Mean latency", "s", (Query(
        f"sum by (service) ({_rate(_DUR + '_sum')}) / sum by (service) ({_rate(_DUR + '_count')})",
        "{{service}}"),)),
    PanelSpec("P99 latency", "s", (Query(
        f"histogram_quantile(0.99, sum by (service, le) ({_rate(_DUR + '_bucket')}))", "{{service}}"),),
        thresholds=(0.5, 1.0)),
    PanelSpec("Error ratio (5xx)", "percentunit", (Query(_ratio('code=~"5.."'), "{{service}}"),),
              thresholds=(0.01,)),
    PanelSpec("HTTP 503 ratio", "percentunit", (Query(_ratio('code="503"'), "{{service}}"),),
              thresholds=(0.5,)),
    PanelSpec("In-flight requests", "short",
              (Query(f"sum by (service) ({_s(metrics.INFLIGHT_REQUESTS.name)})", "{{service}}"),)),
    PanelSpec("Targets up", "bool_on_off", (Query(_s(metrics.UP.name), "{{job}} {{instance}}"),)),
))

_USED, _FREE = _s(metrics.DCGM_FB_USED.name), _s(metrics.DCGM_FB_FREE.name)
_GPU_LEGEND = "{{Hostname}} gpu {{gpu}}"

INFRASTRUCTURE = DashboardSpec("inferwatch-infrastructure", "inferwatch / infrastructure", (
    PanelSpec("CPU utilisation", "percentunit", (Query(
        "1 - avg by (instance) (" + _rate(metrics.NODE_CPU_SECONDS_TOTAL.name, 'mode="idle"') + ")",
        "{{instance}}"),), thresholds=(0.8,)),
    PanelSpec("Host memory used", "percentunit", (Query(
        f"1 - {_s(metrics.NODE_MEMORY_MEMAVAILABLE.name)} / {_s(metrics.NODE_MEMORY_MEMTOTAL.name)}",
        "{{instance}}"),), thresholds=(0.8,)),
    PanelSpec("Load average (1m)", "short", (Query(_s(metrics.NODE_LOAD1.name), "{{instance}}"),)),
    PanelSpec("GPU memory used", "percentunit",
              (Query(f"{_USED} / ({_USED} + {_FREE})", _GPU_LEGEND),), thresholds=(0.8,)),
    PanelSpec("GPU utilisation", "percent", (Query(_s(metrics.DCGM_GPU_UTIL.name), _GPU_LEGEND),),
              thresholds=(80.0,)),
))

GPU = DashboardSpec("inferwatch-gpu", "inferwatch / GPU", (
    PanelSpec("GPU utilisation", "percent", (Query(_s(metrics.DCGM_GPU_UTIL.name), _GPU_LEGEND),)),
    # GPU_UTIL only says a kernel ran (dcgm-exporter#341); GPM's ratios say how busy the SMs were
    PanelSpec("SM / tensor active (GPM, Hopper and later)", "percentunit", (
        Query(_s(metrics.DCGM_PROF_SM_ACTIVE.name), "sm " + _GPU_LEGEND),
        Query(_s(metrics.DCGM_PROF_PIPE_TENSOR_ACTIVE.name), "tensor " + _GPU_LEGEND))),
    PanelSpec("GPU memory used", "percentunit",
              (Query(f"{_USED} / ({_USED} + {_FREE})", _GPU_LEGEND),), thresholds=(0.8,)),
    PanelSpec("Framebuffer used", "decmbytes", (Query(_USED, _GPU_LEGEND),)),
    PanelSpec("PCIe throughput", "Bps", (
        Query(_s(metrics.DCGM_PCIE_TX.name), "tx " + _GPU_LEGEND),
        Query(_s(metrics.DCGM_PCIE_RX.name), "rx " + _GPU_LEGEND))),
    PanelSpec("PCIe link (current / max generation)", "short", (
        Query(_s(metrics.DCGM_PCIE_LINK_GEN.name), "gen " + _GPU_LEGEND),
        Query(_s(metrics.DCGM_PCIE_MAX_LINK_GEN.name), "max gen " + _GPU_LEGEND))),
    PanelSpec("PCIe link width (lanes)", "short", (
        Query(_s(metrics.DCGM_PCIE_LINK_WIDTH.name), "width " + _GPU_LEGEND),
        Query(_s(metrics.DCGM_PCIE_MAX_LINK_WIDTH.name), "max width " + _GPU_LEGEND))),
    PanelSpec("Temperature", "celsius", (Query(_s(metrics.DCGM_GPU_TEMP.name), _GPU_LEGEND),)),
    PanelSpec("Power draw", "watt", (Query(_s(metrics.DCGM_POWER_USAGE.name), _GPU_LEGEND),)),
    PanelSpec("SM clock", "rotmhz", (Query(_s(metrics.DCGM_SM_CLOCK.name), _GPU_LEGEND),)),
))

QUALITY = DashboardSpec("inferwatch-quality", "inferwatch / model quality and drift", (
    PanelSpec("Feature drift (PSI) per feature", "none", (Query(
        _s(metrics.FEATURE_PSI.name), "{{service}} {{feature}}"),),
        description="0.1 warning, 0.25 review, 0.5 rollback", thresholds=(0.1, 0.25, 0.5)),
    PanelSpec("PSI by chance (alpha 0.05)", "none", (Query(
        _s(metrics.FEATURE_PSI_CRITICAL.name), "{{service}} {{feature}}"),)),
    PanelSpec("Anomalous samples", "percentunit", (Query(
        _s(metrics.ANOMALOUS_SAMPLES_RATIO.name), "{{service}}"),), thresholds=(0.05,)),
    PanelSpec("Mean prediction confidence", "percentunit", (Query(
        _s(metrics.PREDICTION_CONFIDENCE_MEAN.name), "{{service}}"),)),
    PanelSpec("Low-confidence predictions", "percentunit", (Query(
        _s(metrics.LOW_CONFIDENCE_RATIO.name), "{{service}}"),)),
    PanelSpec("Confidence drift (PSI)", "none", (Query(
        _s(metrics.CONFIDENCE_PSI.name), "{{service}}"),), thresholds=(0.1, 0.25)),
))

BUSINESS = DashboardSpec("inferwatch-business", "inferwatch / business", (
    PanelSpec("Conversion rate", "percentunit", (Query(
        _s(metrics.CONVERSION_RATE.name), "{{experiment}} {{variant}}"),)),
    PanelSpec("A/B test p-value", "none", (
        Query(_s(metrics.ABTEST_P_VALUE.name), "fixed horizon {{experiment}}"),
        Query(_s(metrics.ABTEST_SEQUENTIAL_P_VALUE.name), "sequential {{experiment}}")),
        thresholds=(0.05,)),
    PanelSpec("A/B difference in conversion", "percentunit", (Query(
        _s(metrics.ABTEST_DIFFERENCE.name), "{{experiment}}"),)),
    PanelSpec("Outcomes per second", "ops", (Query(
        f"sum by (experiment, variant) ({_rate(metrics.EXPERIMENT_OUTCOMES_TOTAL.name)})",
        "{{experiment}} {{variant}}"),)),
))

_BY_MODEL = "{{service}} {{model}}"
_M = "sum by (service, model) "


def _q(q: float, name: str) -> str:
    return f"histogram_quantile({q}, sum by (service, model, le) ({_rate(name + '_bucket')}))"


def _per(a: str, b: str, by: str = "service, model") -> str:
    return f"sum by ({by}) ({_rate(a)}) / sum by ({by}) ({_rate(b)})"


LLM = DashboardSpec("inferwatch-llm", "inferwatch / generative (LLM)", (
    PanelSpec("Time to first token P50 / P99", "s", (
        Query(_q(0.5, metrics.GENERATION_TTFT.name), "P50 " + _BY_MODEL),
        Query(_q(0.99, metrics.GENERATION_TTFT.name), "P99 " + _BY_MODEL)), thresholds=(2.5,)),
    PanelSpec("Time per output token P50 / P99", "s", (
        Query(_q(0.5, metrics.GENERATION_TPOT.name), "P50 " + _BY_MODEL),
        Query(_q(0.99, metrics.GENERATION_TPOT.name), "P99 " + _BY_MODEL)), thresholds=(0.2,)),
    PanelSpec("Output tokens per second", "short", (Query(
        f"sum by (service, model) ({_rate(metrics.GENERATION_OUTPUT_TOKENS_TOTAL.name)})", _BY_MODEL),)),
    PanelSpec("Queue time P99", "s", (Query(_q(0.99, metrics.GENERATION_QUEUE.name), _BY_MODEL),),
              thresholds=(1.0,)),
    PanelSpec("In flight, running and waiting", "short", (
        Query(f"sum by (service) ({_s(metrics.INFLIGHT_REQUESTS.name)})", "in flight {{service}}"),
        Query(f"{_M}({_s(metrics.ENGINE_REQUESTS_RUNNING.name)})", "running " + _BY_MODEL),
        Query(f"{_M}({_s(metrics.ENGINE_REQUESTS_WAITING.name)})", "waiting " + _BY_MODEL))),
    PanelSpec("Goodput (within TTFT and TPOT targets)", "percentunit", (Query(
        _per(metrics.GENERATION_GOOD_REQUESTS_TOTAL.name, metrics.GENERATION_REQUESTS_TOTAL.name),
        _BY_MODEL),)),
    PanelSpec("Finish reasons", "reqps", (Query(
        f"sum by (service, finish_reason) ({_rate(metrics.GENERATION_FINISH_REASONS_TOTAL.name)})",
        "{{service}} {{finish_reason}}"),)),
    PanelSpec("Tokens per request P50 / P99", "short", (
        Query(_q(0.5, metrics.GENERATION_REQUEST_INPUT_TOKENS.name), "input P50 " + _BY_MODEL),
        Query(_q(0.99, metrics.GENERATION_REQUEST_INPUT_TOKENS.name), "input P99 " + _BY_MODEL),
        Query(_q(0.5, metrics.GENERATION_REQUEST_OUTPUT_TOKENS.name), "output P50 " + _BY_MODEL),
        Query(_q(0.99, metrics.GENERATION_REQUEST_OUTPUT_TOKENS.name), "output P99 " + _BY_MODEL))),
    PanelSpec("KV-cache usage and prefix-cache hit ratio", "percentunit", (
        Query(f"max by (service, model) ({_s(metrics.ENGINE_KV_CACHE_USAGE.name)})", "KV cache " + _BY_MODEL),
        Query(_per(metrics.ENGINE_PREFIX_CACHE_HITS_TOTAL.name,
                   metrics.ENGINE_PREFIX_CACHE_QUERIES_TOTAL.name), "prefix hits " + _BY_MODEL))),
    PanelSpec("Preemptions per second", "ops", (Query(
        f"sum by (service, model) ({_rate(metrics.ENGINE_PREEMPTIONS_TOTAL.name)})", _BY_MODEL),)),
    PanelSpec("Cost per request by tenant", "short", (Query(
        f"sum by (tenant, currency) ({_rate(metrics.GENERATION_COST_TOTAL.name)}) / on (tenant) group_left "
        f"sum by (tenant) ({_rate(metrics.GENERATION_TENANT_REQUESTS_TOTAL.name)})",
        "{{tenant}} {{currency}}"),)),
))

ALERTS = DashboardSpec("inferwatch-alerts", "inferwatch / alerts by tier", (
    PanelSpec("Firing alerts by tier", "short", (Query(
        'count by (tier) (ALERTS{alertstate="firing"})', "{{tier}}"),)),
    PanelSpec("Pending alerts by tier", "short", (Query(
        'count by (tier) (ALERTS{alertstate="pending"})', "{{tier}}"),)),
    PanelSpec("Firing alerts", "short", (Query(
        'ALERTS{alertstate="firing"}', "{{tier}} {{alertname}} {{service}}"),), kind="table"),
))

DASHBOARDS: tuple[DashboardSpec, ...] = (SERVICE, LLM, INFRASTRUCTURE, GPU, QUALITY, BUSINESS, ALERTS)
