"""A small parser of the Prometheus text format (0.0.4) for the agent's scrapes and pushes.

The agent cannot use the server's parser (the server sits above ``edge`` in
the package table), and needs less: names, labels, values, optional
timestamps and ``# TYPE`` (so counters are handled as counters).

>>> samples, kinds = parse_text('# TYPE a_total counter\\na_total{x="1"} 3 1500\\nb 2.5\\n', now=10.0)
>>> [(str(s.labels), s.t, s.v) for s in samples], kinds["a_total"].value
([('a_total{x="1"}', 1.5, 3.0), ('b', 10.0, 2.5)], 'counter')
"""

from __future__ import annotations

import math
import re

from inferwatch._exceptions import InputError
from inferwatch.model import Labels, MetricKind, Sample, is_valid_label_name, is_valid_metric_name

__all__ = ["parse_line", "parse_text"]

_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|(?=}))')
_VALUES = {"NaN": math.nan, "+Inf": math.inf, "Inf": math.inf, "-Inf": -math.inf}
_KINDS = {k.value: k for k in MetricKind}


def _unescape(v: str) -> str:
    return v.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")


def _labels(text: str, lineno: int) -> tuple[dict[str, str], str]:
    out: dict[str, str] = {}
    pos = 0
    while True:
        if text[pos:].lstrip().startswith("}"):
            return out, text[text.index("}", pos) + 1:]
        m = _LABEL.match(text, pos)
        if not m:
            raise InputError(f"line {lineno}: malformed labels near {text[pos:pos + 40]!r}")
        out[m.group(1)] = _unescape(m.group(2))
        pos = m.end()


def _number(text: str, lineno: int) -> float:
    if text in _VALUES:
        return _VALUES[text]
    try:
        return float(text)
    except ValueError:
        raise InputError(f"line {lineno}: {text!r:.40} is not a number") from None


def parse_line(line: str, lineno: int, *, now: float, seconds: bool = False) -> tuple[Sample, bool]:
    """One sample line (stripped): the sample and whether it had a timestamp (ms; ``seconds``: s)."""
    brace = line.find("{")
    if brace >= 0:
        name = line[:brace].strip()
        labels, rest = _labels(line[brace + 1:], lineno)
    else:
        name, _, rest = line.partition(" ")
        labels = {}
    if not is_valid_metric_name(name) or not all(is_valid_label_name(k) for k in labels):
        raise InputError(f"line {lineno}: invalid metric or label name in {line[:80]!r}")
    fields = rest.split()
    if len(fields) not in (1, 2):
        raise InputError(f"line {lineno}: expected a value and an optional timestamp in {line[:80]!r}")
    stamped = len(fields) == 2
    t = _number(fields[1], lineno) / (1.0 if seconds else 1000.0) if stamped else now
    return Sample(Labels({**labels, "__name__": name}), t, _number(fields[0], lineno)), stamped


def parse_text(text: str, *, now: float) -> tuple[list[Sample], dict[str, MetricKind]]:
    """Samples (stamped ``now`` unless the line has a timestamp) and the ``# TYPE`` of each family."""
    samples: list[Sample] = []
    kinds: dict[str, MetricKind] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            parts = line.split()
            if len(parts) >= 4 and parts[1] == "TYPE" and parts[3] in _KINDS:
                kinds[parts[2]] = _KINDS[parts[3]]
            continue
        s, _ = parse_line(line, lineno, now=now)
        samples.append(s)
    for family, kind in list(kinds.items()):
        if kind is MetricKind.COUNTER and not family.endswith("_total"):
            kinds[family + "_total"] = kind
    return samples, kinds
