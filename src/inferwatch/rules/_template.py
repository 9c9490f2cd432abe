"""Annotation and label templates, written the way Prometheus writes them.

Supported actions: ``{{ $labels.NAME }}`` (``{{ .Labels.NAME }}``),
``{{ $value }}`` (``{{ .Value }}``) and the value rounded by a Go format,
``{{ $value | printf "%.3g" }}`` (or ``{{ printf "%.2f" $value }}``): verbs
``f``, ``e`` and ``g`` with a precision, which Go and Python print alike. A
rule's ``{{ $threshold }}`` is replaced by its threshold when the rule loads
(``with_threshold``), so a pack rule's summary stays true after an override
and the exported text is plain Prometheus. ``$value`` prints as Go's ``%v`` prints a
float64 (shortest digits; exponent form below 1e-4 and from 1e+06 on, as
Go's ``%g`` with shortest precision does), so an exported rule
renders the same text in Prometheus. A missing label renders empty
(Prometheus expands with ``missingkey=zero``). Other actions are refused when
the rule loads, so a template never fails at evaluation time.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal

__all__ = ["TemplateError", "check_template", "expand_template", "format_go_float", "with_threshold"]

_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.DOTALL)
_LABEL = re.compile(r"^(?:\$labels|\.Labels)\.([a-zA-Z_][a-zA-Z0-9_]*)$")
_VALUE = re.compile(r"^(?:\$value|\.Value)$")
_FORMAT = r'"(%[-+ #0]?\d{0,2}\.\d{1,2}[efgEG])"'
_PRINTF = re.compile(rf"^(?:(?:\$value|\.Value)\s*\|\s*printf\s+{_FORMAT}"
                     rf"|printf\s+{_FORMAT}\s+(?:\$value|\.Value))$")
_THRESHOLD = re.compile(r"\{\{-?\s*\$threshold\s*-?\}\}")


class TemplateError(ValueError):
    """A template uses an action inferwatch does not render."""


def format_go_float(v: float) -> str:
    """``fmt.Sprint(v)`` for a Go float64.

    >>> [format_go_float(x) for x in (0.5, 21.0, 1e6, 123456.0, 1e-5, 0.0001, float('inf'))]
    ['0.5', '21', '1e+06', '123456', '1e-05', '0.0001', '+Inf']
    """
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == 0:
        return "-0" if math.copysign(1.0, v) < 0 else "0"
    sign, digits, exp = Decimal(repr(v)).normalize().as_tuple()
    assert isinstance(exp, int)
    ds = "".join(map(str, digits))
    dp = len(ds) + exp  # position of the decimal point
    x = dp - 1
    neg = "-" if sign else ""
    if x < -4 or x >= 6:  # strconv's %g with shortest precision uses eprec = 6
        mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        return f"{neg}{mant}e{'-' if x < 0 else '+'}{abs(x):02d}"
    if dp <= 0:
        return f"{neg}0.{'0' * -dp}{ds}"
    if dp >= len(ds):
        return f"{neg}{ds}{'0' * (dp - len(ds))}"
    return f"{neg}{ds[:dp]}.{ds[dp:]}"


def check_template(text: str) -> None:
    """Raise :class:`TemplateError` naming the first unsupported action in ``text``."""
    for m in _ACTION.finditer(text):
        if not (_LABEL.match(m.group(1)) or _VALUE.match(m.group(1)) or _PRINTF.match(m.group(1))):
            raise TemplateError(
                f"unsupported template action {m.group(0)!r} in {text!r} "
                '(use {{ $labels.NAME }}, {{ $value }} or {{ $value | printf "%.3g" }})'
            )


def with_threshold(text: str, threshold: float | None) -> str:
    """``text`` with ``{{ $threshold }}`` replaced by the rule's threshold (``dynamic`` when it has none).

    >>> with_threshold("P99 latency is over {{ $threshold }}s", 2.0)
    'P99 latency is over 2s'
    """
    shown = "dynamic" if threshold is None else format_go_float(threshold)
    return _THRESHOLD.sub(shown, text)


def expand_template(text: str, labels: Mapping[str, str], value: float) -> str:
    """Render ``text`` for one alert."""
    if "{{" not in text:
        return text

    def sub(m: re.Match[str]) -> str:
        lab = _LABEL.match(m.group(1))
        if lab:
            return labels.get(lab.group(1), "")
        fmt = _PRINTF.match(m.group(1))
        if fmt:
            return _printf(fmt.group(1) or fmt.group(2), value)
        return format_go_float(value)

    return _ACTION.sub(sub, text)


def _printf(fmt: str, value: float) -> str:
    """Go's ``fmt.Sprintf`` for the verbs allowed (``%.3g`` of 2.1277 is ``2.13`` in both)."""
    if math.isnan(value) or math.isinf(value):
        return format_go_float(value)  # Go prints NaN and +Inf under every float verb
    return fmt % value  # both write an exponent with at least two digits
