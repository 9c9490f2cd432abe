"""Numbers for people: Prometheus's ``humanize*`` template functions, printing what Go prints.

The behaviour follows Prometheus v2.42's ``template/template.go`` so that an exported
rule's annotation renders the same text in Prometheus as in inferwatch: four
significant digits (Go's ``%.4g``, which Python's ``%.4g`` matches for finite
numbers), SI prefixes in steps of 1000 (or 1024), durations split into days,
hours, minutes and seconds.

>>> humanize(1234567.0), humanize(0.0012), humanize1024(1536.0)
('1.235M', '1.2m', '1.5ki')
>>> humanize_percentage(0.0734375), humanize_duration(90.0), humanize_duration(0.25)
('7.344%', '1m 30s', '250ms')
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["HUMANIZERS", "go_g4", "humanize", "humanize1024", "humanize_duration", "humanize_percentage"]

_BIG = ("k", "M", "G", "T", "P", "E", "Z", "Y")
_SMALL = ("m", "u", "n", "p", "f", "a", "z", "y")
_BINARY = ("ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi")


def go_g4(v: float) -> str:
    """Go's ``fmt.Sprintf("%.4g", v)`` (``NaN``, ``+Inf`` and ``-Inf`` spelled as Go spells them)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return format(v, ".4g")


def _scale_down(v: float, prefixes: tuple[str, ...], step: float) -> tuple[float, str]:
    prefix = ""
    for p in prefixes:
        if abs(v) < step:
            break
        prefix, v = p, v / step
    return v, prefix


def _scale_up(v: float) -> tuple[float, str]:
    prefix = ""
    for p in _SMALL:
        if abs(v) >= 1:
            break
        prefix, v = p, v * 1000
    return v, prefix


def humanize(v: float) -> str:
    """``humanize``: SI prefixes, four significant digits (``1234567`` → ``1.235M``)."""
    if v == 0 or math.isnan(v) or math.isinf(v):
        return go_g4(v)
    v, prefix = _scale_down(v, _BIG, 1000) if abs(v) >= 1 else _scale_up(v)
    return go_g4(v) + prefix


def humanize1024(v: float) -> str:
    """``humanize1024``: binary prefixes (``1536`` → ``1.5ki``)."""
    if abs(v) <= 1 or math.isnan(v) or math.isinf(v):
        return go_g4(v)
    v, prefix = _scale_down(v, _BINARY, 1024)
    return go_g4(v) + prefix


def humanize_percentage(v: float) -> str:
    """``humanizePercentage``: a ratio as a percentage (``0.0734375`` → ``7.344%``)."""
    return go_g4(v * 100) + "%"


def humanize_duration(v: float) -> str:
    """``humanizeDuration``: seconds as ``1d 2h 3m 4s`` (``90`` → ``1m 30s``, ``0.25`` → ``250ms``)."""
    if math.isnan(v) or math.isinf(v):
        return go_g4(v)
    if v == 0:
        return go_g4(v) + "s"
    if abs(v) < 1:
        v, prefix = _scale_up(v)
        return f"{go_g4(v)}{prefix}s"
    sign = "-" if v < 0 else ""
    whole = int(abs(v))  # Go truncates with int64(v)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{sign}{days}d {hours}h {minutes}m {seconds}s"
    if hours:
        return f"{sign}{hours}h {minutes}m {seconds}s"
    if minutes:
        return f"{sign}{minutes}m {seconds}s"
    return f"{sign}{go_g4(abs(v))}s"


HUMANIZERS: dict[str, Callable[[float], str]] = {
    "humanize": humanize, "humanize1024": humanize1024,
    "humanizePercentage": humanize_percentage, "humanizeDuration": humanize_duration,
}
"""The template functions by their Prometheus names."""
