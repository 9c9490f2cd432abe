"""The unit of a rule's value, as the rule's own texts state it.

A rule that writes its value with ``humanizePercentage`` says the value is a ratio
(0.25 is 25 %), with ``humanizeDuration`` that it is in seconds, with
``humanize1024`` that it is in bytes. Cards show the value in that unit, so a
rule needs no second place to declare it (and a Prometheus rule file, which has
no unit field, keeps working unchanged).

>>> value_unit({"description": "{{ $value | humanizePercentage }} of requests answer 503."})
'ratio'
>>> value_unit({"summary": "P99 is {{ humanizeDuration $value }}"}), value_unit({"summary": "{{ $value }}"})
('s', '')
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["VALUE_UNITS", "value_unit"]

VALUE_UNITS = {"humanizePercentage": "ratio", "humanizeDuration": "s", "humanize1024": "bytes"}
"""The template function a rule formats ``$value`` with, and the unit that says the value is in."""
_USE = re.compile(r"\$value\s*\|\s*(\w+)|\b(\w+)\s+\$value\b")


def value_unit(annotations: Mapping[str, str]) -> str:
    """``ratio``, ``s`` or ``bytes`` when an annotation formats ``$value`` as one, else ``""``."""
    for text in annotations.values():
        for m in _USE.finditer(text):
            unit = VALUE_UNITS.get(m[1] or m[2])
            if unit:
                return unit
    return ""
