"""``rules``: alert rules in YAML (the runtime rule model lives in ``inferwatch.rules``).

A rule names a *signal* (what to measure, with its own typed parameters), a
comparison and a threshold, the ``for`` and ``keep_firing_for`` durations of
Prometheus, labels and annotations. ``signal`` is either a bare name
(``signal: p99_latency``) or a mapping with ``type`` and the parameters::

    rules:
      rules:
        - name: RankerSlow
          dimension: service
          tier: P1
          signal: {type: p99_latency, quantile: 0.95, matchers: 'service="ranker"'}
          comparison: ">"
          threshold: 0.3
          for: 2m
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from inferwatch.model import Dimension, Tier, is_valid_label_name, is_valid_metric_name, parse_matchers
from inferwatch.settings._outlier import OutlierSpec
from inferwatch.settings._types import Duration, FrozenModel

__all__ = [
    "ENGINE_PACKS",
    "AbTestPValueSignal",
    "AnomalousRatioSignal",
    "CpuUtilizationSignal",
    "DynamicThreshold",
    "ErrorRatioSignal",
    "ExprSignal",
    "FeaturePsiSignal",
    "GpuMemoryRatioSignal",
    "LatencyQuantileSignal",
    "MetricSignal",
    "RuleOverride",
    "RuleSpec",
    "RulesConfig",
    "SignalSpec",
    "UnavailableRatioSignal",
    "UpSignal",
]

Comparison = Literal[">", ">=", "<", "<=", "==", "!="]
EnginePack = Literal["vllm", "triton", "tgi", "sglang", "trtllm"]
ENGINE_PACKS: tuple[str, ...] = ("vllm", "triton", "tgi", "sglang", "trtllm")


def _check_matchers(value: str) -> str:
    if value.strip():
        parse_matchers(value)
    return value.strip()


def _check_by(names: tuple[str, ...]) -> tuple[str, ...]:
    for n in names:
        if not is_valid_label_name(n):
            raise ValueError(f"invalid label name {n!r}")
    return names


class _Signal(FrozenModel):
    matchers: str = Field("", description='extra label matchers, e.g. service="ranker",code!="404"')

    @field_validator("matchers")
    @classmethod
    def _matchers(cls, v: str) -> str:
        return _check_matchers(v)


class _Windowed(_Signal):
    window: Duration = Field(60.0, gt=0, description="range of rate()")
    by: tuple[str, ...] = Field(("service",), description="labels kept by the aggregation")

    @field_validator("by")
    @classmethod
    def _by(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _check_by(v)


class GpuMemoryRatioSignal(_Signal):
    """DCGM framebuffer used / (used + free), per GPU."""

    type: Literal["gpu_memory_ratio"] = "gpu_memory_ratio"


class CpuUtilizationSignal(_Windowed):
    """1 - average idle rate of node_exporter's CPU seconds, per instance."""

    type: Literal["cpu_utilization"] = "cpu_utilization"
    by: tuple[str, ...] = ("instance",)


class LatencyQuantileSignal(_Windowed):
    """A quantile of the SDK's request-duration histogram (histogram_quantile)."""

    type: Literal["p99_latency"] = "p99_latency"
    quantile: float = Field(0.99, ge=0, le=1)


class ErrorRatioSignal(_Windowed):
    """Rate of requests whose code matches ``code`` over the rate of all requests."""

    type: Literal["error_ratio"] = "error_ratio"
    code: str = Field("5..", description="regex on the code label")


class UnavailableRatioSignal(_Windowed):
    """Rate of HTTP 503 responses over the rate of all requests (held while traffic has stopped)."""

    type: Literal["unavailable_ratio"] = "unavailable_ratio"
    code: str = Field("503", description="exact code")
    idle_hold: Duration = Field(
        1800.0, ge=0, description="while the service has no requests at all, keep the last ratio it had "
                                  "within this long (an outage that also stops traffic stays firing); 0: off")


class UpSignal(_Signal):
    """The scrape health series ``up``."""

    type: Literal["up"] = "up"


class FeaturePsiSignal(_Signal):
    """Per-feature PSI from the quality monitors, only where it exceeds its no-drift critical value."""

    type: Literal["feature_psi"] = "feature_psi"
    above_critical: bool = Field(
        True, description="require PSI > inferwatch_feature_psi_critical too (noise in a small window "
                          "cannot fire); false: the threshold alone")


class AnomalousRatioSignal(_Signal):
    """Fraction of anomalous samples from the quality monitors."""

    type: Literal["anomalous_ratio"] = "anomalous_ratio"


class AbTestPValueSignal(_Signal):
    """p-value of an A/B test from the business monitors."""

    type: Literal["abtest_p_value"] = "abtest_p_value"


class MetricSignal(_Signal):
    """Any stored metric's latest value."""

    type: Literal["metric"] = "metric"
    metric: str

    @field_validator("metric")
    @classmethod
    def _metric(cls, v: str) -> str:
        if not is_valid_metric_name(v):
            raise ValueError(f"invalid metric name {v!r}")
        return v


class ExprSignal(FrozenModel):
    """A PromQL expression in the subset inferwatch evaluates natively (docs/rules.md)."""

    type: Literal["expr"] = "expr"
    expr: str = Field(min_length=1)


SignalSpec = Annotated[
    GpuMemoryRatioSignal | CpuUtilizationSignal | LatencyQuantileSignal | ErrorRatioSignal
    | UnavailableRatioSignal | UpSignal | FeaturePsiSignal | AnomalousRatioSignal
    | AbTestPValueSignal | MetricSignal | ExprSignal,
    Field(discriminator="type"),
]


def _signal_shorthand(value: Any) -> Any:
    return {"type": value} if isinstance(value, str) else value


class DynamicThreshold(FrozenModel):
    """A learned band instead of a fixed threshold (the baseline package provides it)."""

    band: float = Field(6.0, gt=0, description="band half-width, in the provider's scale units")
    direction: Literal["above", "below", "both"] = "above"
    min_history: Duration = Field(172800.0, ge=0, description="history needed before a band exists")
    fallback: float | None = Field(
        None, allow_inf_nan=False, description="fixed threshold used while no band exists")
    windows: tuple[int, ...] | None = Field(
        None, description="also alert when the mean residual of the last N samples leaves its "
        "band, per N (sustained shifts); None: baseline.seasonal.windows"
    )
    level_points: int | None = Field(
        None, ge=3, le=1024, description="samples in the median level; None: baseline.seasonal's"
    )
    long_range: bool | None = Field(
        None, description="also alert on a new low or high beyond the series' past weeks "
        "(false for series expected to outgrow their past); None: on when "
        "baseline.seasonal.range_horizon is set"
    )
    recurrence: int | None = Field(
        None, ge=0, le=16, description="hold alerts that repeat the series' earlier excursions "
        "(see baseline.recurrence; 0 is off); None: baseline.recurrence"
    )
    novelty: bool | None = Field(
        None, description="also alert on a pattern new to the series (the novelty detector, "
        "baseline.novelty); None: baseline.novelty.enabled"
    )

    @field_validator("windows")
    @classmethod
    def _windows(cls, v: tuple[int, ...] | None) -> tuple[int, ...] | None:
        if v is not None and any(not 2 <= w <= 1024 for w in v):
            raise ValueError(f"windows must each be 2..1024 samples, got {list(v)}")
        return v


class RuleSpec(FrozenModel):
    """One alert rule."""

    name: str = Field(min_length=1, description="the alertname")
    dimension: Dimension
    tier: Tier
    signal: Annotated[SignalSpec | None, BeforeValidator(_signal_shorthand)] = None
    comparison: Comparison = ">"
    threshold: float | Literal["dynamic"] | None = None
    outlier: OutlierSpec | None = Field(
        None, description="compare members with their peers instead of a threshold (docs/outliers.md)")
    dynamic: DynamicThreshold | None = None
    for_: Duration = Field(0.0, alias="for", description="how long the condition must hold")
    keep_firing_for: Duration = Field(0.0, description="how long to keep firing once it clears")
    resolve_threshold: float | None = Field(
        None, description="hysteresis: an active alert resolves only once the signal passes this "
        "(below the threshold for '>', above it for '<')")
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)

    model_config = FrozenModel.model_config | {"populate_by_name": True}

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not is_valid_metric_name(v):
            raise ValueError(f"rule name {v!r} must be a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)")
        return v

    @field_validator("threshold")
    @classmethod
    def _finite(cls, v: float | str) -> float | str:
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError("threshold must be a finite number (or 'dynamic')")
        return v

    @field_validator("labels", "annotations")
    @classmethod
    def _label_names(cls, v: dict[str, str]) -> dict[str, str]:
        for k in v:
            if not is_valid_label_name(k):
                raise ValueError(f"invalid label name {k!r}")
        return v

    @model_validator(mode="before")
    @classmethod
    def _expr_threshold(cls, data: Any) -> Any:
        _threshold_in_expr(data)
        return data

    @model_validator(mode="after")
    def _kind(self) -> RuleSpec:
        if self.outlier is not None:
            extra = [k for k in ("signal", "threshold", "dynamic", "resolve_threshold")
                     if getattr(self, k) is not None]
            if extra:
                raise ValueError(f"an outlier rule takes no {', '.join(extra)} (it compares "
                                 "outlier.expr's members with their peers)")
        elif self.signal is None or self.threshold is None:
            raise ValueError("a rule needs signal and threshold (or outlier: for a peer comparison)")
        return self

    @model_validator(mode="after")
    def _hysteresis(self) -> RuleSpec:
        r = self.resolve_threshold
        if r is None:
            return self
        if self.threshold is None or self.threshold == "dynamic" or not math.isfinite(r):
            raise ValueError("resolve_threshold needs a numeric threshold and must be finite")
        t = float(self.threshold)
        if (self.comparison in (">", ">=") and r > t) or (self.comparison in ("<", "<=") and r < t):
            raise ValueError(f"resolve_threshold {r:g} must be on the clear side of threshold {t:g} "
                             f"(comparison {self.comparison!r})")
        if self.comparison in ("==", "!="):
            raise ValueError("resolve_threshold needs an ordering comparison (>, >=, <, <=)")
        return self

    @model_validator(mode="after")
    def _dynamic(self) -> RuleSpec:
        if self.threshold != "dynamic" and self.dynamic is not None and self.outlier is None:
            raise ValueError("'dynamic' settings need threshold: dynamic")
        reserved = {"alertname", "tier", "severity", "dimension"} & set(self.labels)
        if reserved:
            raise ValueError(f"labels {sorted(reserved)} are set by inferwatch from name/tier/dimension")
        return self


class RuleOverride(FrozenModel):
    """Changes to a pack rule, by name: ``rules.overrides: {SevereLatency: {for: 10m, threshold: 2}}``.

    Unset fields keep the rule's own; ``labels`` and ``annotations`` are merged
    into the rule's. A summary written with ``{{ $threshold }}`` follows the new threshold.
    """

    threshold: float | None = Field(None, allow_inf_nan=False, description="a new fixed threshold")
    comparison: Comparison | None = None
    for_: Duration | None = Field(None, alias="for", description="a new for duration")
    keep_firing_for: Duration | None = None
    resolve_threshold: float | None = Field(None, allow_inf_nan=False,
                                            description="hysteresis (see RuleSpec)")
    tier: Tier | None = None
    labels: dict[str, str] = Field(default_factory=dict, description="labels added to the rule's or replaced")
    annotations: dict[str, str] = Field(default_factory=dict, description="annotations added or replaced")

    model_config = FrozenModel.model_config | {"populate_by_name": True}


_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_COMPARED = re.compile(rf"^(?P<left>.*?)\s*(?P<op>>=|<=|==|!=|>|<)\s*(?P<right>{_NUMBER})\s*$", re.DOTALL)


def _threshold_in_expr(data: Any) -> None:
    """A clear error for ``expr: ... > 2.5`` without ``threshold:`` (the pack compares for you)."""
    if not isinstance(data, dict) or "threshold" in data:
        return
    signal = data.get("signal")
    expr = signal.get("expr") if isinstance(signal, dict) and signal.get("type") == "expr" else None
    m = _COMPARED.match(expr) if isinstance(expr, str) else None
    if m:
        raise ValueError(
            f"the threshold is written inside the expression ({m.group('op')} {m.group('right')}): "
            f"write expr: {m.group('left')!r} with comparison: {m.group('op')!r} and "
            f"threshold: {m.group('right')} (inferwatch adds the comparison, and shows the value)")


class RulesConfig(FrozenModel):
    """Rule settings: the default pack, the engine packs and the user's rules."""

    default_pack: bool = Field(True, description="load the default rule pack")
    disable: tuple[str, ...] = Field((), description="names of default or engine pack rules to leave out")
    packs: tuple[EnginePack, ...] = Field(
        (), description="engine rule packs to load: vllm, triton, tgi, sglang, trtllm "
        "(rules on the engine's own metrics)"
    )
    rules: tuple[RuleSpec, ...] = Field((), description="your rules (a same-named one replaces the default)")
    overrides: dict[str, RuleOverride] = Field(
        default_factory=dict, description="changes to loaded rules by name (for, threshold, tier, labels, "
        "annotations), without copying the whole rule")
    slo_replaces_static: bool = Field(
        False, description="a service with an availability (latency) SLO drops the default pack's "
        "error-rate (latency) rules: its burn-rate alerts page instead (docs/slo.md)")

    @field_validator("packs", mode="before")
    @classmethod
    def _packs(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = [v]
        if isinstance(v, list | tuple):
            unknown = [p for p in v if p not in ENGINE_PACKS]
            if unknown:
                raise ValueError(f"unknown rule pack {unknown[0]!r}: choose from {', '.join(ENGINE_PACKS)}")
        return v

    @model_validator(mode="after")
    def _unique(self) -> RulesConfig:
        seen: set[str] = set()
        for r in self.rules:
            if r.name in seen:
                raise ValueError(f"rule {r.name!r} defined twice")
            seen.add(r.name)
        return self
