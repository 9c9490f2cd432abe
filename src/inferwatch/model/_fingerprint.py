"""The fingerprint Alertmanager and Prometheus give a label set (``model.LabelSet.Fingerprint``).

FNV-1a 64 over the label pairs sorted by name, each name and value followed by
the separator byte 0xff, written as 16 hex digits: the same alert has the same
fingerprint in inferwatch's webhook and API as in Alertmanager's.

>>> alertmanager_fingerprint({})
'cbf29ce484222325'
>>> int(alertmanager_fingerprint({"name": "garland, briggs", "fear": "love is not enough"}), 16)
5799056148416392346
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["alertmanager_fingerprint"]

_OFFSET = 14695981039346656037
_PRIME = 1099511628211
_MASK = (1 << 64) - 1


def alertmanager_fingerprint(labels: Mapping[str, str] | Iterable[tuple[str, str]]) -> str:
    """16 lower-case hex digits, as Alertmanager's ``fingerprint`` field (Go's ``%016x``)."""
    pairs = labels.items() if isinstance(labels, Mapping) else labels
    data = b"".join(b"%s\xff%s\xff" % (name.encode(), value.encode()) for name, value in sorted(pairs))
    h, prime, mask = _OFFSET, _PRIME, _MASK  # locals: this loop is the whole cost
    for byte in data:
        h = ((h ^ byte) * prime) & mask
    return f"{h:016x}"
