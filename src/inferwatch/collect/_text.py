"""Samples to the Prometheus text format, without prometheus-client (the exporter's lean path).

The bytes are those prometheus-client's ``generate_latest`` writes for :class:`SampleCollector`
(``tests/collect/test_text.py`` compares them), so a scrape reads the same either way; the
exporter's process then needs neither prometheus-client nor ``http.server`` (~14 MiB resident).
"""

from __future__ import annotations

import math

from inferwatch.model import CATALOG, MetricKind, MetricSpec, Sample

__all__ = ["CONTENT_TYPE", "render"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_TYPE = {MetricKind.COUNTER: "counter", MetricKind.GAUGE: "gauge"}


def render(samples: list[Sample]) -> bytes:
    """Families in first-seen order, HELP and TYPE from the catalog, labels sorted by name.

    >>> from inferwatch.collect import sample
    >>> from inferwatch.model import metrics
    >>> print(render([sample(metrics.NODE_LOAD1, 0.0, 0.5)]).decode(), end="")
    # HELP node_load1 1m load average.
    # TYPE node_load1 gauge
    node_load1 0.5
    """
    groups: dict[str, list[Sample]] = {}
    for s in samples:
        groups.setdefault(s.labels.name, []).append(s)
    out: list[str] = []
    for name, members in groups.items():
        spec = CATALOG.get(name) or MetricSpec(name, MetricKind.UNTYPED, f"{name} (not in the catalog)")
        kind = _TYPE.get(spec.kind, "untyped")
        fam = spec.family + "_total" if kind == "counter" else spec.name
        doc = spec.help.replace("\\", r"\\").replace("\n", r"\n")
        out.append(f"# HELP {fam} {doc}\n")
        out.append(f"# TYPE {fam} {kind}\n")
        keys = sorted(spec.labels)
        for s in members:
            labels = ",".join(f'{k}="{_escape(s.labels.get(k, ""))}"' for k in keys)
            out.append(f"{fam}{{{labels}}} {_go_float(s.v)}\n" if labels else f"{fam} {_go_float(s.v)}\n")
    return "".join(out).encode()


def _escape(value: str) -> str:
    if "\\" in value or "\n" in value or '"' in value:
        return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")
    return value


def _go_float(v: float) -> str:
    """A float as Go's strconv writes it (``+Inf``, ``NaN``, exponents from 1e+07 up)."""
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if math.isnan(v):
        return "NaN"
    s = repr(float(v))
    dot = s.find(".")
    if v > 0 and dot > 6:
        return f"{s[0]}.{s[1:dot]}{s[dot + 1:]}".rstrip("0.") + f"e+{dot - 1:02d}"
    return s
