"""Small queries on the event loop: no hand-over to a worker thread and back.

A dashboard panel over one service (``sum by (code) (rate(requests_total{service="x"}[1m]))``: 3
series at 41 steps) costs about a millisecond of CPU. On a query worker it also cost two more
hand-overs of the interpreter lock (event loop -> worker -> event loop), each a thread woken that
then waits for whichever thread holds the lock (a scrape's parse, a rule round, another panel),
and the thread pool's queue, future and wake-up pipe around them. A query runs on the event loop
instead only when it cannot hold the loop for long:

- it is small by the index's count: its selectors match at most :data:`MAX_POINTS` series x steps
  together, with no subquery and no range longer than :data:`MAX_RANGE_S`;
- it reads the head only (memory: no SQLite, no file lock), and the store's memory lock is free now:
  it is taken without waiting and held until the answer is encoded, so no read inside ever waits
  (an append or a retention pass that holds it sends the query to a worker as before);
- a query worker is free for it (``QueryExecutor.run_here``): it counts against the concurrency
  limit while it runs, as on a worker. Its deadline and sample limit are checked as on a worker.

It never waits for a rule round or a short query (``model.pinned``): it is the short query.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from inferwatch.model import Matcher
from inferwatch.promql import (
    DEFAULT_LOOKBACK_MS,
    Aggregate,
    Binary,
    Call,
    Expr,
    Paren,
    Selector,
    Subquery,
    Unary,
    needed_spans,
)

__all__ = ["MAX_POINTS", "MAX_RANGE_S", "SmallReads", "run_if_small"]

T = TypeVar("T")
MAX_POINTS = 2_000
"""Series x steps a query on the event loop may select (a panel of one service's 10 latency buckets
over an hour at 15 s steps: 2,410 is over; over 10 minutes: 410)."""
MAX_RANGE_S = 3600.0
"""The longest range selector of a query on the event loop (every ``*_over_time`` window it reads)."""


class SmallReads(Protocol):
    """What a store offers small queries (``SQLiteStore``, ``MemoryStore``: ``store.ForkReads``)."""

    def held_if_free(self) -> object:  # a context manager yielding the head's first time, or None
        """The memory's lock if free now."""

    def count_matching(self, matchers: tuple[Matcher, ...]) -> int:
        """Series matching ``matchers``."""


def run_if_small(store: object, expr: Expr, start: float, end: float, step: float,
                 compute: Callable[[], T], most: int = MAX_POINTS) -> T | None:
    """``compute()`` with the store's memory lock held when the query is small (at most ``most`` series
    x steps) and reads the head only; ``None`` (nothing run) when it is not, or when another thread holds
    the lock now."""
    held = getattr(store, "held_if_free", None)
    if held is None or getattr(store, "count_matching", None) is None or not _simple(expr):
        return None
    spans = needed_spans(expr, round(start * 1000), round(end * 1000), DEFAULT_LOOKBACK_MS)
    if not spans:  # reads nothing (``1 + 1``, ``time()``): no lock to take
        return compute()
    steps = int((end - start) / step) + 1 if step > 0 else 1
    with held() as head_from:
        if head_from is None or any(lo < head_from * 1000 for lo, _ in spans.values()):
            return None
        count = store.count_matching  # type: ignore[attr-defined]
        if sum(count(m) for m in spans) * steps > most:
            return None
        return compute()


def _simple(root: Expr) -> bool:
    """No subquery, no range selector over :data:`MAX_RANGE_S` (a loop, not recursion: ``1 + 1 + …``
    5,000 terms deep is a query the evaluator answers)."""
    stack = [root]
    while stack:
        e = stack.pop()
        if isinstance(e, Subquery):
            return False
        if isinstance(e, Selector) and e.range is not None and e.range > MAX_RANGE_S:
            return False
        if isinstance(e, Call):
            stack.extend(e.args)
        elif isinstance(e, Aggregate):
            stack.extend(x for x in (e.param, e.expr) if x is not None)
        elif isinstance(e, Binary):
            stack += (e.lhs, e.rhs)
        elif isinstance(e, Paren | Unary):
            stack.append(e.expr)
    return True
