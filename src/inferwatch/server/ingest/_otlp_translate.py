"""OpenTelemetry metrics → Prometheus samples, by the OTel "Prometheus and OpenMetrics Compatibility" rules.

Pure functions over the decoded model (``_otlp_decode``), as Prometheus 2.47+'s
OTLP receiver (``storage/remote/otlptranslator``) translates them:

* **names**: split at every character that is not an ASCII letter or digit and
  joined with ``_`` (``http.server.request.duration`` → ``http_server_request_duration``);
  the unit is appended unless already a word of the name (``ms`` →
  ``milliseconds``, ``s`` → ``seconds``, ``By`` → ``bytes`` …, ``X/s`` →
  ``X_per_second``, ``{request}`` annotations dropped); monotonic sums end in
  ``_total``, gauges of unit ``1`` in ``_ratio``; a leading digit gets ``_``;
* **labels**: point attributes, each character that is not an ASCII letter or
  digit made ``_``, a leading digit prefixed ``key_``, a leading ``_``
  prefixed ``key`` (Prometheus keeps ``__x``; the store reserves ``__``, so
  it becomes ``key__x``); two attributes that collide are joined with ``;``;
  resource ``service.namespace``/``service.name`` → ``job`` (``ns/name``),
  ``service.instance.id`` → ``instance``; the other resource attributes go
  onto one ``target_info`` series per resource (value 1);
* **kinds**: gauges as they are; sums cumulative or delta (delta accumulated
  per stream by ``DeltaState``), non-monotonic sums as gauges; explicit-bucket
  histograms → ``_bucket{le}`` (cumulative counts, ``+Inf`` = count),
  ``_sum``, ``_count``; summaries → ``{quantile}``, ``_sum``, ``_count``;
  exponential histograms refused per point (configure the SDK's explicit-bucket
  aggregation);
* **points refused** (counted in ``rejected``, named in ``errors``; the rest of
  the request is stored): no timestamp, a timestamp more than ``MAX_AHEAD_S``
  ahead of the server's clock (as scrapes), inconsistent histogram buckets,
  unspecified temporality, a name with no letter or digit.

One bridge beyond Prometheus: the OTel HTTP semantic convention's
``http.server.request.duration`` histogram (unit ``s``) is also written under
the SDK's names (``inferwatch_request_duration_seconds_*`` and
``inferwatch_requests_total``, with ``service`` = ``service.name``, ``route`` =
``http.route``, ``code`` = ``http.response.status_code``), so the default
service rules (P99 latency, error and 503 ratios) work on an OTel-instrumented
service unchanged. The GenAI conventions' histograms (``gen_ai.client.token.usage``,
``gen_ai.server.time_to_first_token`` ...) are written again under the SDK's
generation names the same way (``_otlp_genai``), so the default generation rules
watch an app instrumented with OpenLIT or OpenLLMetry.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from inferwatch.model import STALE_NAN, Labels, Sample
from inferwatch.server.ingest._otlp_decode import (
    EXP_HISTOGRAM,
    GAUGE,
    HISTOGRAM,
    SUM,
    SUMMARY,
    Metric,
    Point,
    ResourceMetrics,
)
from inferwatch.server.ingest._otlp_delta import DeltaRefused, DeltaState
from inferwatch.server.ingest._otlp_genai import GENAI_METRICS, genai_samples
from inferwatch.server.ingest._scrape_limits import MAX_AHEAD_S

__all__ = ["MAX_BUCKETS", "Translation", "label_name", "metric_name", "translate"]

MAX_BUCKETS = 4096  # explicit bounds per histogram point: bounds the delta state per stream
_CUMULATIVE, _DELTA = 2, 1
_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
_UNITS = {
    "d": "days", "h": "hours", "min": "minutes", "s": "seconds", "ms": "milliseconds", "us": "microseconds",
    "ns": "nanoseconds", "By": "bytes", "KiBy": "kibibytes", "MiBy": "mebibytes", "GiBy": "gibibytes",
    "TiBy": "tibibytes", "KBy": "kilobytes", "MBy": "megabytes", "GBy": "gigabytes", "TBy": "terabytes",
    "m": "meters", "V": "volts", "A": "amperes", "J": "joules", "W": "watts", "g": "grams",
    "Cel": "celsius", "Hz": "hertz", "1": "", "%": "percent",
}
_PER_UNITS = {"s": "second", "m": "minute", "h": "hour", "d": "day", "w": "week", "mo": "month", "y": "year"}
_IDENTIFYING = ("service.name", "service.namespace", "service.instance.id")
_MAX_ERRORS = 5
_SEMCONV_DURATION = ("http.server.request.duration", "s")


@dataclass
class Translation:
    """The samples of one request, and the data points refused with why."""

    samples: list[Sample] = field(default_factory=list)
    accepted: int = 0
    rejected: int = 0
    errors: list[str] = field(default_factory=list)

    def refuse(self, metric: str, why: str, points: int = 1) -> None:
        """Count ``points`` refused points of ``metric``; keep the first few distinct reasons."""
        self.rejected += points
        message = f"{metric!r:.120}: {why}"
        if len(self.errors) < _MAX_ERRORS and message not in self.errors:
            self.errors.append(message)

    @property
    def error_message(self) -> str:
        """The reasons as one line (the partial-success ``error_message``), or ``""``."""
        more = " (and more)" if self.rejected > len(self.errors) and len(self.errors) == _MAX_ERRORS else ""
        return "; ".join(self.errors) + more if self.errors else ""


def _words(text: str) -> list[str]:
    return [w for w in _SPLIT.split(text) if w]


def metric_name(name: str, unit: str, kind: str, monotonic: bool) -> str:
    """The Prometheus name of an OTel metric (see the module docstring).

    >>> metric_name("http.server.request.duration", "s", "histogram", False)
    'http_server_request_duration_seconds'
    >>> metric_name("inference_requests", "{request}", "sum", True)
    'inference_requests_total'
    """
    words = _words(name)
    main, _, per = unit.partition("/")
    main, per = main.strip(), per.strip()
    if main and "{" not in main and "}" not in main:
        prom = "_".join(_words(_UNITS.get(main, main)))
        if prom and prom not in words:
            words.append(prom)
    if per and "{" not in per and "}" not in per:
        prom = "_".join(_words(_PER_UNITS.get(per, per)))
        if prom and prom not in words:
            words += ["per", prom]
    if kind == SUM and monotonic:
        words = [w for w in words if w != "total"] + ["total"]
    if unit == "1" and kind == GAUGE:
        words = [w for w in words if w != "ratio"] + ["ratio"]
    out = "_".join(words)
    return "_" + out if out[:1].isdigit() else out


def label_name(key: str) -> str:
    """The Prometheus label name of an OTel attribute key.

    >>> label_name("http.response.status_code"), label_name("2xx"), label_name("_x")
    ('http_response_status_code', 'key_2xx', 'key_x')
    """
    if not key:
        return key
    out = _NOT_ALNUM.sub("_", key)
    if out[0].isdigit():
        return "key_" + out
    return "key" + out if out[0] == "_" else out


def _labels(attributes: Mapping[str, str], resource: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key in sorted(attributes):
        name, value = label_name(key), attributes[key]
        out[name] = f"{out[name]};{value}" if name in out else value
    job = resource.get("service.name")
    if job is not None:
        ns = resource.get("service.namespace")
        out["job"] = f"{ns}/{job}" if ns else job
    if "service.instance.id" in resource:
        out["instance"] = resource["service.instance.id"]
    return out


def _le(bound: float) -> str:
    return "+Inf" if bound == math.inf else str(np.format_float_positional(bound, trim="-"))


class _Context:
    """One request's translation: the output, the clock and the delta state."""

    def __init__(self, now: float, delta: DeltaState) -> None:
        self.out, self.now, self.delta = Translation(), now, delta
        self.bound_ns = int((now + MAX_AHEAD_S) * 1e9)

    def emit(self, name: str, labels: Mapping[str, str], t: float, v: float) -> None:
        self.out.samples.append(Sample(Labels({**labels, "__name__": name}), t, v))


def translate(resources: list[ResourceMetrics], *, now: float, delta: DeltaState) -> Translation:
    """Samples for ``resources`` at server time ``now``; delta points go through ``delta``."""
    ctx = _Context(now, delta)
    for rm in resources:
        latest = 0.0
        for metric in rm.metrics:
            latest = max(latest, _metric(ctx, metric, rm.resource))
        _target_info(ctx, rm.resource, latest)
    return ctx.out


def _metric(ctx: _Context, m: Metric, resource: Mapping[str, str]) -> float:
    """Translate one metric's points; return the latest timestamp stored (0 when none)."""
    if not m.points:
        return 0.0
    if m.kind == EXP_HISTOGRAM:
        ctx.out.refuse(m.name, "exponential histograms are not supported: use explicit-bucket histograms "
                               "(the SDK's default aggregation)", len(m.points))
        return 0.0
    name = metric_name(m.name, m.unit, m.kind, m.monotonic)
    if not name:
        ctx.out.refuse(m.name, "the metric name has no ASCII letter or digit", len(m.points))
        return 0.0
    if m.kind in (SUM, HISTOGRAM) and m.temporality not in (_CUMULATIVE, _DELTA):
        ctx.out.refuse(m.name, f"aggregation temporality {m.temporality} is neither delta nor cumulative",
                       len(m.points))
        return 0.0
    write = _WRITERS[m.kind]
    latest = 0.0
    for p in m.points:
        why = _time_error(ctx, p)
        if why:
            ctx.out.refuse(m.name, why)
            continue
        labels = _labels(p.attributes, resource)
        start = len(ctx.out.samples)
        try:
            write(ctx, m, name, labels, p)
        except DeltaRefused as exc:
            ctx.out.refuse(m.name, str(exc))
            continue
        if (m.name, m.unit) == _SEMCONV_DURATION and m.kind == HISTOGRAM:
            _bridge(ctx, name, p.attributes, resource)
        if m.kind == HISTOGRAM and m.name in GENAI_METRICS:
            ctx.out.samples += genai_samples(m.name, ctx.out.samples[start:], p.attributes, resource)
        ctx.out.accepted += 1
        latest = max(latest, _seconds(p))
    return latest


def _time_error(ctx: _Context, p: Point) -> str:
    if p.time_ns <= 0:
        return "data point without time_unix_nano"
    if p.time_ns > ctx.bound_ns:
        return (f"data point stamped {p.time_ns / 1e9 - ctx.now:.0f}s in the future: out of bounds "
                f"(more than {MAX_AHEAD_S:g}s ahead of the server's clock)")
    return ""


def _seconds(p: Point) -> float:
    return (p.time_ns // 1_000_000) / 1000.0  # millisecond precision, as Prometheus stores


def _number(ctx: _Context, m: Metric, name: str, labels: dict[str, str], p: Point) -> None:
    value = p.value
    if p.stale:
        value = STALE_NAN
    elif m.kind == SUM and m.temporality == _DELTA:
        value = ctx.delta.add_sum((name, Labels(labels)), p.start_ns, p.time_ns, p.value, ctx.now)
    ctx.emit(name, labels, _seconds(p), value)


def _histogram(ctx: _Context, m: Metric, name: str, labels: dict[str, str], p: Point) -> None:
    why = _bucket_error(p)
    if why:
        raise DeltaRefused(why)
    count, total, buckets = float(p.count), p.sum, list(p.buckets)
    if m.temporality == _DELTA and not p.stale:
        count, delta_total, buckets = ctx.delta.add_histogram(
            (name, Labels(labels)), p.start_ns, p.time_ns, p.count, p.sum or 0.0, p.bounds, p.buckets,
            ctx.now)
        total = delta_total if p.sum is not None else None
    t = _seconds(p)
    value: Callable[[float], float] = (lambda _: STALE_NAN) if p.stale else float
    if total is not None:
        ctx.emit(name + "_sum", labels, t, value(total))
    ctx.emit(name + "_count", labels, t, value(count))
    running = 0
    for bound, n in zip(p.bounds, buckets, strict=False):
        running += n
        ctx.emit(name + "_bucket", {**labels, "le": _le(bound)}, t, value(running))
    ctx.emit(name + "_bucket", {**labels, "le": "+Inf"}, t, value(count))


def _bucket_error(p: Point) -> str:
    if len(p.bounds) > MAX_BUCKETS:
        return f"{len(p.bounds)} bucket bounds, over the limit of {MAX_BUCKETS}"
    if p.buckets and len(p.buckets) != len(p.bounds) + 1:
        return f"{len(p.buckets)} bucket counts for {len(p.bounds)} bounds (want bounds + 1)"
    pairs = zip(p.bounds, p.bounds[1:], strict=False)
    if any(math.isnan(b) for b in p.bounds) or any(a >= b for a, b in pairs):
        return "explicit bounds must be increasing numbers"
    if p.buckets and sum(p.buckets) != p.count:
        return f"bucket counts add up to {sum(p.buckets)}, not to the count {p.count}"
    return ""


def _summary(ctx: _Context, m: Metric, name: str, labels: dict[str, str], p: Point) -> None:
    t = _seconds(p)
    stale = p.stale
    ctx.emit(name + "_sum", labels, t, STALE_NAN if stale else float(p.sum or 0.0))
    ctx.emit(name + "_count", labels, t, STALE_NAN if stale else float(p.count))
    for q, v in p.quantiles:
        ctx.emit(name, {**labels, "quantile": _le(q)}, t, STALE_NAN if stale else v)


_WRITERS = {GAUGE: _number, SUM: _number, HISTOGRAM: _histogram, SUMMARY: _summary}


def _bridge(ctx: _Context, name: str, attributes: Mapping[str, str], resource: Mapping[str, str]) -> None:
    """Copy the samples just written for ``http.server.request.duration`` under the SDK's names."""
    extra = {"service": resource.get("service.name", ""), "route": attributes.get("http.route", ""),
             "code": attributes.get("http.response.status_code", "")}
    written = []
    for s in reversed(ctx.out.samples):
        if not s.labels.name.startswith(name + "_"):
            break
        written.append(s)
    for s in reversed(written):
        suffix = s.labels.name[len(name):]
        labels = {**{k: v for k, v in s.labels.items() if k != "__name__"}, **extra}
        ctx.emit("inferwatch_request_duration_seconds" + suffix, labels, s.t, s.v)
        if suffix == "_count":
            ctx.emit("inferwatch_requests_total", labels, s.t, s.v)


def _target_info(ctx: _Context, resource: Mapping[str, str], latest: float) -> None:
    others = {k: v for k, v in resource.items() if k not in _IDENTIFYING}
    if not others or latest <= 0:
        return
    labels = _labels(others, resource)
    if "job" in labels or "instance" in labels:
        ctx.emit("target_info", labels, latest, 1.0)
