"""promtool's input-series notation: ``up{job="a"}`` and values such as ``0+10x10 _x3 stale``.

From promql/parser's grammar (Prometheus 2.42): ``a+bxN`` and ``a-bxN`` give
``N+1`` values starting at ``a``; ``axN`` repeats ``a`` ``N+1`` times; ``_``
is one missing sample, ``_xN`` ``N`` missing samples; ``stale`` is a staleness
marker. The i-th value lies at ``i * interval``.
"""

from __future__ import annotations

import re

from inferwatch.model import STALE_NAN, Labels, MatchOp, is_valid_metric_name, parse_matchers

__all__ = ["expand_values", "parse_series"]

_NUM = r"(?:[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|Inf|inf|NaN|nan)"
_ITEM = re.compile(rf"^(?P<a>[+-]?{_NUM}|stale)(?:(?P<step>[+-]{_NUM})?x(?P<n>[0-9]+))?$")
_BLANK = re.compile(r"^_(?:x(?P<n>[0-9]+))?$")


def expand_values(text: str) -> list[float | None]:
    """The values of one series; ``None`` where a sample is missing.

    >>> expand_values("1+2x3 _ stale 5x1 _x2")[:5]
    [1.0, 3.0, 5.0, 7.0, None]
    """
    out: list[float | None] = []
    for tok in text.split():
        blank = _BLANK.match(tok)
        if blank:
            out.extend([None] * (int(blank["n"]) if blank["n"] else 1))
            continue
        m = _ITEM.match(tok)
        if not m:
            raise ValueError(f"bad series value {tok!r} (expected e.g. 1, 0+10x5, 5-1x3, _, _x2, stale)")
        a = STALE_NAN if m["a"] == "stale" else float(m["a"])
        if m["n"] is None:
            out.append(a)
            continue
        step = float(m["step"]) if m["step"] else 0.0
        if m["a"] == "stale" and step:
            raise ValueError(f"bad series value {tok!r}: stale cannot be stepped")
        for _ in range(int(m["n"]) + 1):
            out.append(a)
            a = a if m["a"] == "stale" else a + step
    return out


def parse_series(text: str) -> Labels:
    """``name{label="value", ...}`` as a label set."""
    s = text.strip()
    name, brace, rest = s.partition("{")
    name = name.strip()
    labels: dict[str, str] = {}
    if brace:
        if not rest.rstrip().endswith("}"):
            raise ValueError(f"bad series {text!r}: missing '}}'")
        for m in parse_matchers("{" + rest):
            if m.op is not MatchOp.EQ:
                raise ValueError(f"bad series {text!r}: labels use '=' only")
            labels[m.name] = m.value
    if name:
        labels["__name__"] = name
    if not is_valid_metric_name(labels.get("__name__", "")):
        raise ValueError(f"bad series {text!r}: needs a valid metric name")
    return Labels(labels)
