"""Named signals: each is a PromQL expression, so native == PromQL by construction.

``signal_promql(spec)`` writes the expression text for a signal config; the
evaluator parses and evaluates that same text natively, and the exporter
writes it into Prometheus rule files unchanged.
"""

from __future__ import annotations

from functools import singledispatch

from inferwatch.model import format_duration, metrics
from inferwatch.settings import (
    AbTestPValueSignal,
    AnomalousRatioSignal,
    CpuUtilizationSignal,
    ErrorRatioSignal,
    ExprSignal,
    FeaturePsiSignal,
    GpuMemoryRatioSignal,
    LatencyQuantileSignal,
    MetricSignal,
    UnavailableRatioSignal,
    UpSignal,
)

__all__ = ["signal_promql"]


def _sel(name: str, extra: str, *matchers: str) -> str:
    inner = ",".join(m for m in (*matchers, extra) if m)
    return f"{name}{{{inner}}}" if inner else name


def _by(labels: tuple[str, ...]) -> str:
    return ", ".join(labels)


@singledispatch
def signal_promql(spec: object) -> str:
    """The PromQL text of a signal config."""
    raise TypeError(f"no PromQL form for signal {type(spec).__name__}")


@signal_promql.register
def _(spec: GpuMemoryRatioSignal) -> str:
    used = _sel(metrics.DCGM_FB_USED.name, spec.matchers)
    free = _sel(metrics.DCGM_FB_FREE.name, spec.matchers)
    return f"{used} / ({used} + {free})"


@signal_promql.register
def _(spec: CpuUtilizationSignal) -> str:
    idle = _sel(metrics.NODE_CPU_SECONDS_TOTAL.name, spec.matchers, 'mode="idle"')
    return f"1 - avg by ({_by(spec.by)}) (rate({idle}[{format_duration(spec.window)}]))"


@signal_promql.register
def _(spec: LatencyQuantileSignal) -> str:
    bucket = _sel(metrics.REQUEST_DURATION.name + "_bucket", spec.matchers)
    by = _by((*spec.by, "le"))
    return (f"histogram_quantile({spec.quantile!r}, sum by ({by}) "
            f"(rate({bucket}[{format_duration(spec.window)}])))")


def _ratio(code_matcher: str, spec: ErrorRatioSignal | UnavailableRatioSignal, window: float = 0.0) -> str:
    w = format_duration(window or spec.window)
    name = metrics.REQUESTS_TOTAL.name
    part = _sel(name, spec.matchers, code_matcher)
    whole = _sel(name, spec.matchers)
    by = _by(spec.by)
    return f"sum by ({by}) (rate({part}[{w}])) / sum by ({by}) (rate({whole}[{w}]))"


@signal_promql.register
def _(spec: ErrorRatioSignal) -> str:
    return _ratio(f'code=~"{spec.code}"', spec)


@signal_promql.register
def _(spec: UnavailableRatioSignal) -> str:
    code = f'code="{spec.code}"'
    ratio = _ratio(code, spec)
    if not spec.idle_hold:
        return ratio
    # No requests make the ratio 0/0 = NaN, and the alert would resolve without a word when an
    # outage also stops the traffic: while the service has none, the ratio of the last stretch
    # that had traffic (within idle_hold; NaN filtered out by ">= 0") stands in for it. That
    # stretch is a tile of twice the window (the subquery's step equals its rate window, so the
    # tiles cover the time without gaps): an outage long enough to fire fills the tile in which
    # the traffic stopped. Coarser tiles cost fewer evaluations (a subquery evaluates its inner
    # expression at every step).
    w, by = format_duration(spec.window), _by(spec.by)
    tile = 2 * spec.window
    whole = f"sum by ({by}) (rate({_sel(metrics.REQUESTS_TOTAL.name, spec.matchers)}[{w}]))"
    hold = f"[{format_duration(spec.idle_hold)}:{format_duration(tile)}]"
    last = f"last_over_time((({_ratio(code, spec, tile)}) >= 0){hold})"
    return f"({ratio}) >= 0 or ({last} and on ({by}) {whole} == 0)"


@signal_promql.register
def _(spec: UpSignal) -> str:
    return _sel(metrics.UP.name, spec.matchers)


@signal_promql.register
def _(spec: FeaturePsiSignal) -> str:
    psi = _sel(metrics.FEATURE_PSI.name, spec.matchers)
    if not spec.above_critical:
        return psi
    # a filtering comparison keeps the PSI as the value, so "> threshold" applies to it next
    return f"{psi} > {_sel(metrics.FEATURE_PSI_CRITICAL.name, spec.matchers)}"


@signal_promql.register
def _(spec: AnomalousRatioSignal) -> str:
    return _sel(metrics.ANOMALOUS_SAMPLES_RATIO.name, spec.matchers)


@signal_promql.register
def _(spec: AbTestPValueSignal) -> str:
    return _sel(metrics.ABTEST_P_VALUE.name, spec.matchers)


@signal_promql.register
def _(spec: MetricSignal) -> str:
    return _sel(spec.metric, spec.matchers)


@signal_promql.register
def _(spec: ExprSignal) -> str:
    return spec.expr
