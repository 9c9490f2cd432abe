"""Fixed-capacity ring buffers and the robust statistics computed over them."""

from __future__ import annotations

import base64
import bisect
import math
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["Ring", "robust_sigma", "robust_sigma_and_tail"]

_MAD_TO_SIGMA = 1.4826  # MAD of a normal distribution is 0.6745 sigma
_MEAN_AD_TO_SIGMA = 1.2533  # mean absolute deviation of a normal is 0.7979 sigma


class Ring:
    """The last ``capacity`` floats pushed, in O(1) per push and bounded memory.

    >>> r = Ring(3); [r.push(x) for x in (1.0, 2.0, 3.0, 4.0)] and None; sorted(r.values().tolist())
    [2.0, 3.0, 4.0]
    """

    __slots__ = ("_buf", "_count", "_head", "_sorted")

    def __init__(self, capacity: int, *, ordered: bool = False) -> None:
        """``ordered`` keeps a sorted copy too, so ``median()`` is a lookup, not a partition.

        Worth it for a ring whose median is read every push (the level): a
        bisect insert and remove per push, against numpy's ~20 µs call overhead.
        """
        if capacity < 1:
            raise ValueError(f"ring capacity must be positive, got {capacity}")
        self._buf = np.zeros(capacity, dtype=np.float64)
        self._head = 0
        self._count = 0
        self._sorted: list[float] | None = [] if ordered else None

    @property
    def capacity(self) -> int:
        """Most values kept."""
        return int(self._buf.shape[0])

    def __len__(self) -> int:
        return self._count

    def push(self, value: float) -> None:
        """Append ``value``, dropping the oldest when full."""
        if self._sorted is not None:
            if self._count == self._buf.shape[0]:
                del self._sorted[bisect.bisect_left(self._sorted, float(self._buf[self._head]))]
            bisect.insort(self._sorted, float(value))
        self._buf[self._head] = value
        self._head = (self._head + 1) % self._buf.shape[0]
        if self._count < self._buf.shape[0]:
            self._count += 1

    def values(self) -> npt.NDArray[np.float64]:
        """The kept values (storage order, not push order: fine for order-free statistics)."""
        return self._buf[: self._count] if self._count < self._buf.shape[0] else self._buf

    def last(self) -> float:
        """The value pushed last (NaN when empty)."""
        return float(self._buf[self._head - 1]) if self._count else math.nan

    def median(self) -> float:
        """Median of the kept values (NaN when empty)."""
        if not self._count:
            return math.nan
        if self._sorted is not None:
            mid = self._count // 2
            if self._count % 2:
                return self._sorted[mid]
            return (self._sorted[mid - 1] + self._sorted[mid]) / 2  # as numpy: mean of the two
        return float(np.median(self.values()))

    def to_state(self) -> dict[str, Any]:
        """JSON-ready state; ``Ring.from_state`` restores the values exactly.

        Only the kept values, oldest first, as base64 of little-endian float64: a
        third of the size of a JSON float list and no unused capacity, so saving
        many baselines stays cheap.
        """
        if self._count < self._buf.shape[0]:
            kept = self._buf[: self._count]
        else:
            kept = np.concatenate([self._buf[self._head :], self._buf[: self._head]])
        return {"cap": self.capacity, "f8": base64.b64encode(kept.astype("<f8").tobytes()).decode()}

    @classmethod
    def from_state(cls, state: dict[str, Any], *, ordered: bool = False) -> Ring:
        """Rebuild a ring saved by ``to_state`` (or by the older ``buf``/``head``/``count`` form)."""
        if "f8" in state:
            kept = np.frombuffer(base64.b64decode(state["f8"], validate=True), dtype="<f8")
            ring = cls(int(state["cap"]), ordered=ordered)
            n = kept.shape[0]
            if n > ring.capacity:
                raise ValueError("ring state out of range")
            ring._buf[:n] = kept
            ring._head, ring._count = n % ring.capacity, n
        else:
            buf = np.asarray(state["buf"], dtype=np.float64)
            ring = cls(int(buf.shape[0]), ordered=ordered)
            ring._buf[:] = buf
            ring._head, ring._count = int(state["head"]), int(state["count"])
            if not (0 <= ring._head < buf.shape[0] and 0 <= ring._count <= buf.shape[0]):
                raise ValueError("ring state out of range")
        if ring._sorted is not None:
            ring._sorted = sorted(ring.values().tolist())
        return ring


def robust_sigma(residuals: npt.NDArray[np.float64]) -> float:
    """Normal-consistent scale: 1.4826·MAD, or 1.2533·mean |dev| when over half are equal.

    >>> round(robust_sigma(np.array([0.0, 1.0, 2.0, 3.0, 100.0])), 4)
    1.4826
    """
    return robust_sigma_and_tail(residuals, None)[0]


def robust_sigma_and_tail(residuals: npt.NDArray[np.float64], q: float | None) -> tuple[float, float]:
    """:func:`robust_sigma` and the ``q`` quantile of |deviation from the median| (NaN when
    ``q`` is None), sharing the median and deviations: a refresh's numpy calls, 5 down to 3.

    >>> s, t = robust_sigma_and_tail(np.array([0.0, 1.0, 2.0, 3.0, 100.0]), 0.5); round(s, 4), t
    (1.4826, 1.0)
    """
    if residuals.size == 0:
        return math.nan, math.nan
    med = _median(residuals)
    dev = np.abs(residuals - med)
    mad = _median(dev)
    tail = math.nan if q is None else float(np.quantile(dev, q))
    if mad > 0:
        return _MAD_TO_SIGMA * mad, tail
    return _MEAN_AD_TO_SIGMA * float(dev.mean()), tail


def _median(x: npt.NDArray[np.float64]) -> float:
    """``np.median`` of finite values, bit for bit, without its generic machinery.

    One partition at the middle; for an even count the mean of the two middle values,
    ``(a + b) / 2`` as numpy computes it.
    """
    n = x.size
    k = n // 2
    if n % 2:
        return float(np.partition(x, k)[k])
    part = np.partition(x, (k - 1, k))
    return float((part[k - 1] + part[k]) / 2)
