"""Every metric inferwatch emits, written down once, with its kind, labels and help.

Exposition, rules, exporters and dashboards refer to these specs, never to
string literals of their own. Names follow Prometheus conventions (base units,
``_total`` for counters, ``_seconds``, ``_ratio``, ``_bytes``); GPU metrics use
the DCGM exporter's names and host CPU uses node_exporter's, so existing
dashboards and rules work unchanged.

Sections are owned by the package that emits them; add a metric to its section
and to ``CATALOG`` at the bottom.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from inferwatch.model._samples import MetricKind

__all__ = ["CATALOG", "MetricSpec"]


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """A metric's name (as exposed), kind, label names and help text."""

    name: str
    kind: MetricKind
    help: str
    labels: tuple[str, ...] = ()
    unit: str = ""

    @property
    def family(self) -> str:
        """The family name as prometheus-client wants it (counters lose ``_total``)."""
        if self.kind is MetricKind.COUNTER and self.name.endswith("_total"):
            return self.name[: -len("_total")]
        return self.name


_C, _G, _H = MetricKind.COUNTER, MetricKind.GAUGE, MetricKind.HISTOGRAM
_SVC = ("service", "model", "version")

# --- sdk: service performance ------------------------------------------------
REQUESTS_TOTAL = MetricSpec(
    "inferwatch_requests_total", _C, "Inference requests handled, by route and HTTP status code.",
    (*_SVC, "route", "code"),
)
REQUEST_DURATION = MetricSpec(
    "inferwatch_request_duration_seconds", _H, "Inference request latency in seconds.",
    (*_SVC, "route"), "seconds",
)
INFLIGHT_REQUESTS = MetricSpec(
    "inferwatch_inflight_requests", _G, "Inference requests currently being handled.", _SVC,
)
SDK_DROPPED_TOTAL = MetricSpec(
    "inferwatch_sdk_dropped_total", _C,
    "Observations dropped because the recorder queue was full (never blocks the request).",
    ("service", "kind"),
)
SDK_QUEUE_CAPACITY = MetricSpec(
    "inferwatch_sdk_queue_capacity", _G, "Capacity of the SDK recorder queue.", ("service",),
)
SDK_INVALID_TOTAL = MetricSpec(
    "inferwatch_sdk_invalid_total", _C,
    "Observations rejected as invalid (non-numeric, negative or NaN duration, bad status code).",
    ("service", "kind"),
)

# --- quality: model quality --------------------------------------------------
FEATURE_PSI = MetricSpec(
    "inferwatch_feature_psi", _G,
    "Population stability index of a feature, current window against the reference profile.",
    ("service", "model", "feature"),
)
ANOMALOUS_SAMPLES_RATIO = MetricSpec(
    "inferwatch_anomalous_samples_ratio", _G,
    "Fraction of samples in the current window flagged anomalous against the reference.",
    ("service", "model"),
)
PREDICTION_CONFIDENCE = MetricSpec(
    "inferwatch_prediction_confidence", _H, "Distribution of the model's prediction confidence.",
    ("service", "model"),
)

# --- business: business impact -----------------------------------------------
CONVERSION_RATE = MetricSpec(
    "inferwatch_conversion_rate", _G, "Conversion rate of an experiment variant.",
    ("experiment", "variant"),
)
ABTEST_P_VALUE = MetricSpec(
    "inferwatch_abtest_p_value", _G, "p-value of the A/B test difference in conversion rate.",
    ("experiment",),
)

# --- collect: infrastructure (node_exporter and DCGM exporter names) ---------
NODE_CPU_SECONDS_TOTAL = MetricSpec(
    "node_cpu_seconds_total", _C, "Seconds the CPUs spent in each mode.", ("cpu", "mode"),
)
DCGM_GPU_UTIL = MetricSpec(
    "DCGM_FI_DEV_GPU_UTIL", _G, "GPU utilization (in %).",
    ("gpu", "UUID", "modelName", "Hostname"),
)
DCGM_FB_USED = MetricSpec(
    "DCGM_FI_DEV_FB_USED", _G, "Framebuffer memory used (in MiB).",
    ("gpu", "UUID", "modelName", "Hostname"),
)
DCGM_FB_FREE = MetricSpec(
    "DCGM_FI_DEV_FB_FREE", _G, "Framebuffer memory free (in MiB).",
    ("gpu", "UUID", "modelName", "Hostname"),
)

# --- server: scrape health ---------------------------------------------------
UP = MetricSpec("up", _G, "1 if the last scrape of the target succeeded, 0 if not.", ("job", "instance"))


def _index(*specs: MetricSpec) -> Mapping[str, MetricSpec]:
    out: dict[str, MetricSpec] = {}
    for spec in specs:
        if spec.name in out:
            raise AssertionError(f"metric {spec.name} listed twice")
        out[spec.name] = spec
    return out


CATALOG: Mapping[str, MetricSpec] = _index(
    REQUESTS_TOTAL, REQUEST_DURATION, INFLIGHT_REQUESTS, SDK_DROPPED_TOTAL, SDK_QUEUE_CAPACITY,
    SDK_INVALID_TOTAL,
    FEATURE_PSI, ANOMALOUS_SAMPLES_RATIO, PREDICTION_CONFIDENCE,
    CONVERSION_RATE, ABTEST_P_VALUE,
    NODE_CPU_SECONDS_TOTAL, DCGM_GPU_UTIL, DCGM_FB_USED, DCGM_FB_FREE,
    UP,
)
