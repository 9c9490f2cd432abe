"""Annotation and label templates, written the way Prometheus writes them.

Supported actions: ``{{ $labels.NAME }}`` (``{{ .Labels.NAME }}``),
``{{ $value }}`` (``{{ .Value }}``) and the value rounded by a Go format,
``{{ $value | printf "%.3g" }}`` (or ``{{ printf "%.2f" $value }}``): verbs
``f``, ``e`` and ``g`` with a precision, which Go and Python print alike; and
Prometheus's functions for people, ``humanize``, ``humanize1024``,
``humanizePercentage`` and ``humanizeDuration`` (``{{ $value | humanizePercentage }}``
or ``{{ humanize $value }}``), which print what Prometheus prints. A rule's
``{{ $threshold }}`` (or ``{{ $threshold | humanize }}``) is replaced by its
threshold when the rule loads (``with_threshold``), so a pack rule's summary stays true after an override
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

from inferwatch.rules._humanize import HUMANIZERS

__all__ = ["OUTLIER_VARIABLES", "TemplateError", "check_template", "expand_template", "format_go_float",
           "go_printf", "with_threshold"]

_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.DOTALL)
_LABEL = re.compile(r"^(?:\$labels|\.Labels)\.([a-zA-Z_][a-zA-Z0-9_]*)$")
_NUM = r"(\$value|\.Value|\$median|\$spread)"
_VALUE = re.compile(rf"^{_NUM}$")
_PEERS = re.compile(r"^\$peers$")
_FORMAT = r'"(%[-+ #0]?\d{0,2}\.\d{1,2}[efgEG])"'
_PRINTF = re.compile(rf"^(?:{_NUM}\s*\|\s*printf\s+{_FORMAT}"
                     rf"|printf\s+{_FORMAT}\s+{_NUM})$")
_FUNC = "(" + "|".join(HUMANIZERS) + ")"
_HUMAN = re.compile(rf"^(?:{_NUM}\s*\|\s*{_FUNC}|{_FUNC}\s+{_NUM})$")
OUTLIER_VARIABLES = ("$median", "$spread", "$peers")
_THRESHOLD = re.compile(
    rf"\{{\{{-?\s*(?:\$threshold|\$threshold\s*\|\s*{_FUNC}|{_FUNC}\s+\$threshold)\s*-?\}}\}}")


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


def check_template(text: str, *, outlier: bool = False) -> None:
    """Raise :class:`TemplateError` naming the first unsupported action in ``text``.

    ``outlier``: the rule is an outlier rule, whose templates may also use
    ``$median``, ``$spread`` (numbers, like ``$value``) and ``$peers`` (text).
    """
    for m in _ACTION.finditer(text):
        action = m.group(1)
        if not (_LABEL.match(action) or _VALUE.match(action) or _PRINTF.match(action)
                or _HUMAN.match(action) or _PEERS.match(action)):
            raise TemplateError(
                f"unsupported template action {m.group(0)!r} in {text!r} "
                '(use {{ $labels.NAME }}, {{ $value }}, {{ $value | printf "%.3g" }} '
                f'or {{{{ $value | FUNC }}}} with FUNC one of {", ".join(HUMANIZERS)})'
            )
        if not outlier and any(v in action for v in OUTLIER_VARIABLES):
            raise TemplateError(f"{m.group(0)!r} in {text!r}: $median, $spread and $peers "
                                "exist in outlier rules only")


def with_threshold(text: str, threshold: float | None) -> str:
    """``text`` with ``{{ $threshold }}`` replaced by the rule's threshold (``dynamic`` when it has none).

    >>> with_threshold("P99 latency is over {{ $threshold }}s", 2.0)
    'P99 latency is over 2s'
    """
    def sub(m: re.Match[str]) -> str:
        if threshold is None:
            return "dynamic"
        func = m.group(1) or m.group(2)
        return HUMANIZERS[func](threshold) if func else format_go_float(threshold)

    return _THRESHOLD.sub(sub, text)


def expand_template(text: str, labels: Mapping[str, str], value: float,
                    extra: Mapping[str, float | str] | None = None) -> str:
    """Render ``text`` for one alert (``extra``: an outlier's ``median``, ``spread`` and ``peers``)."""
    if "{{" not in text:
        return text
    known: dict[str, float | str] = {"$value": value, ".Value": value,
                                     **{f"${k}": v for k, v in (extra or {}).items()}}

    def sub(m: re.Match[str]) -> str:
        action = m.group(1)
        lab = _LABEL.match(action)
        if lab:
            return labels.get(lab.group(1), "")
        if _PEERS.match(action):
            return str(known.get("$peers", ""))
        human = _HUMAN.match(action)
        if human:
            v = known.get(human.group(1) or human.group(4), math.nan)
            return HUMANIZERS[human.group(2) or human.group(3)](float(v))
        fmt = _PRINTF.match(action)
        if fmt:
            v = known.get(fmt.group(1) or fmt.group(4), math.nan)
            return go_printf(fmt.group(2) or fmt.group(3), float(v))
        v = known.get(action, math.nan)
        return format_go_float(float(v))

    return _ACTION.sub(sub, text)


def go_printf(fmt: str, value: float) -> str:
    """Go's ``fmt.Sprintf`` for the verbs allowed (``%.3g`` of 2.1277 is ``2.13`` in both)."""
    if math.isnan(value) or math.isinf(value):
        return format_go_float(value)  # Go prints NaN and +Inf under every float verb
    return fmt % value  # both write an exponent with at least two digits
