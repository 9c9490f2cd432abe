"""Fixed-capacity ring buffers and the robust statistics computed over them."""

from __future__ import annotations

import base64
import bisect
import math
from array import array
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["Ring", "robust_sigma", "robust_sigma_and_tail"]

_EMPTY = np.empty(0, dtype=np.float64)  # shared by every ring not pushed to yet

_MAD_TO_SIGMA = 1.4826  # MAD of a normal distribution is 0.6745 sigma
_MEAN_AD_TO_SIGMA = 1.2533  # mean absolute deviation of a normal is 0.7979 sigma


class Ring:
    """The last ``capacity`` floats pushed, in O(1) amortised per push and bounded memory.

    The buffer grows with the values pushed (by a quarter, at least 8) up to ``capacity``:
    a series that has not filled its ring yet, or never will (a candidate model that
    never learns), holds only what it has seen.

    >>> r = Ring(3); [r.push(x) for x in (1.0, 2.0, 3.0, 4.0)] and None; sorted(r.values().tolist())
    [2.0, 3.0, 4.0]
    """

    __slots__ = ("_buf", "_cap", "_count", "_head", "_sorted")

    def __init__(self, capacity: int, *, ordered: bool = False) -> None:
        """``ordered`` keeps a sorted copy too, so ``median()`` is a lookup, not a partition.

        Worth it for a ring whose median is read every push (the level): a
        bisect insert and remove per push, against numpy's ~20 µs call overhead.
        The copy is a packed ``array('d')``, not a list of float objects (a third the bytes).
        """
        if capacity < 1:
            raise ValueError(f"ring capacity must be positive, got {capacity}")
        self._cap = capacity
        self._buf = _EMPTY
        self._head = 0
        self._count = 0
        self._sorted: array[float] | None = array("d") if ordered else None

    @property
    def capacity(self) -> int:
        """Most values kept."""
        return self._cap

    def __len__(self) -> int:
        return self._count

    def _grow(self) -> None:
        # only while not full: then head == count and the kept values are buf[:count]
        size = min(self._cap, max(self._count + 8, self._count + self._count // 4))
        buf = np.empty(size, dtype=np.float64)
        buf[: self._count] = self._buf[: self._count]
        self._buf = buf

    def push(self, value: float) -> None:
        """Append ``value``, dropping the oldest when full."""
        full = self._count == self._cap
        if self._sorted is not None:
            if full:
                del self._sorted[bisect.bisect_left(self._sorted, float(self._buf[self._head]))]
            bisect.insort(self._sorted, float(value))
        if not full and self._count == self._buf.shape[0]:
            self._grow()
        self._buf[self._head] = value
        self._head = (self._head + 1) % self._cap
        if not full:
            self._count += 1

    def values(self) -> npt.NDArray[np.float64]:
        """The kept values (storage order, not push order: fine for order-free statistics)."""
        return self._buf[: self._count] if self._count < self._buf.shape[0] else self._buf

    def last(self) -> float:
        """The value pushed last (NaN when empty)."""
        return float(self._buf[self._head - 1]) if self._count else math.nan

    def newest(self, n: int) -> list[float]:
        """The last ``n`` values pushed (fewer when fewer are kept), newest first."""
        n = min(n, self._count)
        head = self._head
        out: list[float] = self._buf[max(0, head - n) : head][::-1].tolist()
        if n > head:  # wrapped: the rest from the end of the buffer
            out += self._buf[self._count - (n - head) :][::-1].tolist()
        return out

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

    def allocated(self) -> int:
        """Floats held: the buffer's size, plus the sorted copy's."""
        return int(self._buf.shape[0]) + (0 if self._sorted is None else len(self._sorted))

    def to_state(self) -> dict[str, Any]:
        """JSON-ready state; ``Ring.from_state`` restores the values exactly.

        Only the kept values, oldest first, as base64 of little-endian float64: a
        third of the size of a JSON float list and no unused capacity, so saving
        many baselines stays cheap.
        """
        return ring_state(self.kept(), self._cap)

    def kept(self) -> npt.NDArray[np.float64]:
        """The kept values, oldest first."""
        if self._count < self._cap:
            return self._buf[: self._count]
        return np.concatenate([self._buf[self._head :], self._buf[: self._head]])

    @classmethod
    def from_state(cls, state: dict[str, Any], *, ordered: bool = False) -> Ring:
        """Rebuild a ring saved by ``to_state`` (or by the older ``buf``/``head``/``count`` form)."""
        if "f8" in state:
            kept = np.frombuffer(base64.b64decode(state["f8"], validate=True), dtype="<f8")
            ring = cls(int(state["cap"]), ordered=ordered)
            n = kept.shape[0]
            if n > ring.capacity:
                raise ValueError("ring state out of range")
            ring._buf = kept.astype(np.float64)  # a copy: writable, exactly the kept values
            ring._head, ring._count = n % ring.capacity, n
        else:
            buf = np.asarray(state["buf"], dtype=np.float64)
            ring = cls(int(buf.shape[0]), ordered=ordered)
            ring._head, ring._count = int(state["head"]), int(state["count"])
            if not (0 <= ring._head < buf.shape[0] and 0 <= ring._count <= buf.shape[0]):
                raise ValueError("ring state out of range")
            # not full: the kept values are buf[:count] (pushes fill from 0 until the ring wraps)
            ring._buf = buf.copy() if ring._count == buf.shape[0] else buf[: ring._count].copy()
            if ring._count < buf.shape[0]:
                ring._head = ring._count
        if ring._sorted is not None:
            ring._sorted = array("d", sorted(ring.values().tolist()))
        return ring


def ring_state(kept: npt.NDArray[np.float64], capacity: int) -> dict[str, Any]:
    """``Ring.to_state`` of a ring of ``capacity`` holding ``kept`` (oldest first)."""
    return {"cap": capacity, "f8": base64.b64encode(kept.astype("<f8").tobytes()).decode()}


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
