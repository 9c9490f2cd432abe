"""Prometheus duration strings: ``1h30m``, ``5m``, ``15s``, ``250ms``, ``1w``, ``1y``."""

from __future__ import annotations

import re

__all__ = ["format_duration", "parse_duration"]

_UNITS = {"y": 365 * 86400.0, "w": 7 * 86400.0, "d": 86400.0, "h": 3600.0, "m": 60.0,
          "s": 1.0, "ms": 0.001}
_ORDER = ["y", "w", "d", "h", "m", "s", "ms"]
_PART = re.compile(r"(\d+)(ms|y|w|d|h|m|s)")


def parse_duration(text: str) -> float:
    """Parse a Prometheus duration into seconds; raise ``ValueError`` naming the text.

    >>> parse_duration("1h30m"), parse_duration("250ms"), parse_duration("0s")
    (5400.0, 0.25, 0.0)
    """
    s = text.strip()
    if not s:
        raise ValueError("empty duration")
    pos, total, last = 0, 0.0, -1
    for m in _PART.finditer(s):
        unit_rank = _ORDER.index(m.group(2))
        if m.start() != pos or unit_rank <= last:
            break
        total += int(m.group(1)) * _UNITS[m.group(2)]
        pos, last = m.end(), unit_rank
    if pos != len(s):
        raise ValueError(f"not a duration: {text!r} (expected e.g. 15s, 5m, 1h30m)")
    return total


def format_duration(seconds: float) -> str:
    """Format seconds as the shortest Prometheus duration.

    >>> format_duration(5400), format_duration(0.25), format_duration(0)
    ('1h30m', '250ms', '0s')
    """
    ms = round(seconds * 1000)
    if ms == 0:
        return "0s"
    out = []
    for unit in _ORDER:
        size = round(_UNITS[unit] * 1000)
        n, ms = divmod(ms, size)
        if n:
            out.append(f"{n}{unit}")
    return "".join(out)
