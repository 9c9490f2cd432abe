"""Go's ``sort.Sort`` (pattern-defeating quicksort, Go 1.19+) and ``container/heap``, step for step.

Prometheus orders ``sort``, ``sort_desc``, ``topk`` and ``bottomk`` with these, and neither is
stable: which of several equal values comes first (and which ``topk`` keeps) is whatever
their swaps leave. Doing the same swaps, in the same order, with the same ``less``, gives
Prometheus's answer on ties, including its NaN quirks (``less`` there is no strict order).

>>> xs = [3, 1, 2]
>>> go_sort(xs, lambda a, b: a < b)
>>> xs
[1, 2, 3]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["go_sort", "heap_pop", "heap_push"]

T = TypeVar("T")
Less = Callable[[T, T], bool]

_MAX_INSERTION = 12
_SHORTEST_NINTHER = 50
_MAX_SWAPS = 4 * 3
_INCREASING, _DECREASING, _UNKNOWN = 1, 2, 0
_MASK64 = (1 << 64) - 1


class _Data:
    """A list with Go's ``sort.Interface`` over it (indices, as Go's code compares)."""

    __slots__ = ("less", "xs")

    def __init__(self, xs: list[T], less: Less[T]) -> None:
        self.xs, self.less = xs, less

    def lt(self, i: int, j: int) -> bool:
        return bool(self.less(self.xs[i], self.xs[j]))

    def swap(self, i: int, j: int) -> None:
        xs = self.xs
        xs[i], xs[j] = xs[j], xs[i]


def go_sort(xs: list[T], less: Less[T]) -> None:
    """Sort ``xs`` in place exactly as Go's ``sort.Sort`` does with this ``less``."""
    n = len(xs)
    if n > 1:
        _pdqsort(_Data(xs, less), 0, n, n.bit_length())


def heap_push(h: list[T], x: T, less: Less[T]) -> None:
    """``heap.Push``: append, then sift up."""
    h.append(x)
    d = _Data(h, less)
    j = len(h) - 1
    while True:
        i = (j - 1) // 2
        if i == j or j <= 0 or not d.lt(j, i):
            break
        d.swap(i, j)
        j = i


def heap_pop(h: list[T], less: Less[T]) -> T:
    """``heap.Pop``: swap the root to the end, sift down the rest, remove the end."""
    d = _Data(h, less)
    n = len(h) - 1
    d.swap(0, n)
    _down(d, 0, n)
    return h.pop()


def _down(d: _Data, i0: int, n: int) -> None:
    i = i0
    while True:
        j1 = 2 * i + 1
        if j1 >= n:
            break
        j = j1
        if j1 + 1 < n and d.lt(j1 + 1, j1):
            j = j1 + 1
        if not d.lt(j, i):
            break
        d.swap(i, j)
        i = j


def _insertion_sort(d: _Data, a: int, b: int) -> None:
    for i in range(a + 1, b):
        j = i
        while j > a and d.lt(j, j - 1):
            d.swap(j, j - 1)
            j -= 1


def _sift_down(d: _Data, lo: int, hi: int, first: int) -> None:
    root = lo
    while True:
        child = 2 * root + 1
        if child >= hi:
            return
        if child + 1 < hi and d.lt(first + child, first + child + 1):
            child += 1
        if not d.lt(first + root, first + child):
            return
        d.swap(first + root, first + child)
        root = child


def _heap_sort(d: _Data, a: int, b: int) -> None:
    hi = b - a
    for i in range((hi - 1) // 2, -1, -1):
        _sift_down(d, i, hi, a)
    for i in range(hi - 1, -1, -1):
        d.swap(a, a + i)
        _sift_down(d, 0, i, a)


def _pdqsort(d: _Data, a: int, b: int, limit: int) -> None:
    was_balanced = was_partitioned = True
    while True:
        length = b - a
        if length <= _MAX_INSERTION:
            _insertion_sort(d, a, b)
            return
        if limit == 0:
            _heap_sort(d, a, b)
            return
        if not was_balanced:
            _break_patterns(d, a, b)
            limit -= 1
        pivot, hint = _choose_pivot(d, a, b)
        if hint == _DECREASING:
            _reverse_range(d, a, b)
            pivot = (b - 1) - (pivot - a)
            hint = _INCREASING
        if was_balanced and was_partitioned and hint == _INCREASING and _partial_insertion_sort(d, a, b):
            return
        if a > 0 and not d.lt(a - 1, pivot):
            a = _partition_equal(d, a, b, pivot)
            continue
        mid, was_partitioned = _partition(d, a, b, pivot)
        left, right = mid - a, b - mid
        threshold = length // 8
        if left < right:
            was_balanced = left >= threshold
            _pdqsort(d, a, mid, limit)
            a = mid + 1
        else:
            was_balanced = right >= threshold
            _pdqsort(d, mid + 1, b, limit)
            b = mid


def _partition(d: _Data, a: int, b: int, pivot: int) -> tuple[int, bool]:
    d.swap(a, pivot)
    i, j = a + 1, b - 1
    while i <= j and d.lt(i, a):
        i += 1
    while i <= j and not d.lt(j, a):
        j -= 1
    if i > j:
        d.swap(j, a)
        return j, True
    d.swap(i, j)
    i, j = i + 1, j - 1
    while True:
        while i <= j and d.lt(i, a):
            i += 1
        while i <= j and not d.lt(j, a):
            j -= 1
        if i > j:
            break
        d.swap(i, j)
        i, j = i + 1, j - 1
    d.swap(j, a)
    return j, False


def _partition_equal(d: _Data, a: int, b: int, pivot: int) -> int:
    d.swap(a, pivot)
    i, j = a + 1, b - 1
    while True:
        while i <= j and not d.lt(a, i):
            i += 1
        while i <= j and d.lt(a, j):
            j -= 1
        if i > j:
            break
        d.swap(i, j)
        i, j = i + 1, j - 1
    return i


def _partial_insertion_sort(d: _Data, a: int, b: int) -> bool:
    max_steps, shortest_shifting = 5, 50
    i = a + 1
    for _ in range(max_steps):
        while i < b and not d.lt(i, i - 1):
            i += 1
        if i == b:
            return True
        if b - a < shortest_shifting:
            return False
        d.swap(i, i - 1)
        if i - a >= 2:
            for j in range(i - 1, 0, -1):
                if not d.lt(j, j - 1):
                    break
                d.swap(j, j - 1)
        if b - i >= 2:
            for j in range(i + 1, b):
                if not d.lt(j, j - 1):
                    break
                d.swap(j, j - 1)
    return False


def _break_patterns(d: _Data, a: int, b: int) -> None:
    length = b - a
    if length >= 8:
        r = length
        modulus = 1 << length.bit_length()
        idx = a + (length // 4) * 2 - 1
        for i in range(3):
            r ^= (r << 13) & _MASK64
            r ^= r >> 17
            r ^= (r << 5) & _MASK64
            other = r & (modulus - 1)
            if other >= length:
                other -= length
            d.swap(idx + i, a + other)


def _choose_pivot(d: _Data, a: int, b: int) -> tuple[int, int]:
    length = b - a
    swaps = [0]
    i, j, k = a + length // 4, a + length // 4 * 2, a + length // 4 * 3
    if length >= 8:
        if length >= _SHORTEST_NINTHER:
            i = _median(d, i - 1, i, i + 1, swaps)
            j = _median(d, j - 1, j, j + 1, swaps)
            k = _median(d, k - 1, k, k + 1, swaps)
        j = _median(d, i, j, k, swaps)
    if swaps[0] == 0:
        return j, _INCREASING
    if swaps[0] == _MAX_SWAPS:
        return j, _DECREASING
    return j, _UNKNOWN


def _order2(d: _Data, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
    if d.lt(b, a):
        swaps[0] += 1
        return b, a
    return a, b


def _median(d: _Data, a: int, b: int, c: int, swaps: list[int]) -> int:
    a, b = _order2(d, a, b, swaps)
    b, c = _order2(d, b, c, swaps)
    a, b = _order2(d, a, b, swaps)
    return b


def _reverse_range(d: _Data, a: int, b: int) -> None:
    i, j = a, b - 1
    while i < j:
        d.swap(i, j)
        i, j = i + 1, j - 1
