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

from collections.abc import Iterable, Mapping, Sequence

__all__ = ["alertmanager_fingerprint", "alertmanager_fingerprints"]

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


def alertmanager_fingerprints(label_sets: Sequence[Iterable[tuple[str, str]]]) -> list[str]:
    """:func:`alertmanager_fingerprint` of many sorted label sets at once (a storm's webhook body).

    The byte loop runs once over all of them as numpy columns (uint64 arithmetic wraps as
    Go's does), not once per set in Python.

    >>> sets = [(("a", "1"),), (("alertname", "Up"), ("job", "node"))]
    >>> alertmanager_fingerprints(sets) == [alertmanager_fingerprint(s) for s in sets]
    True
    """
    if len(label_sets) < 8:  # numpy's per-column cost outweighs a few sets
        return [alertmanager_fingerprint(s) for s in label_sets]
    import numpy as np  # here: the SDK imports this package and loads no numpy

    data = [b"".join(b"%s\xff%s\xff" % (k.encode(), v.encode()) for k, v in s) for s in label_sets]
    lens = np.fromiter(map(len, data), dtype=np.int64, count=len(data))
    width = int(lens.max())
    cols = np.frombuffer(b"".join(d.ljust(width, b"\0") for d in data), dtype=np.uint8)
    cols = cols.reshape(len(data), width).T.astype(np.uint64)
    h = np.full(len(data), _OFFSET, dtype=np.uint64)
    prime = np.uint64(_PRIME)
    shortest = int(lens.min())
    for j in range(shortest):
        h = (h ^ cols[j]) * prime
    for j in range(shortest, width):  # past a set's end its hash stays as it is
        h = np.where(lens > j, (h ^ cols[j]) * prime, h)
    return [f"{x:016x}" for x in h.tolist()]
