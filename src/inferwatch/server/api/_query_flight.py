"""Single-flight: identical heavy queries in flight at the same moment share one evaluation and its answer.

Five people with the same dashboard open send the same heavy ``query_range`` (same expression, start,
end and step: Grafana aligns start and end to the step) within the same second. Each would fork a child
that reads the same head and answers the same bytes. The first of them (the leader) evaluates; one that
arrives while it runs (a follower) waits for the leader's answer, on its own deadline, and answers it.
Nothing is kept once the leader is done: the next identical query evaluates again (this is not a results
cache; an answer is never older than the evaluation a query arriving at that moment would join).

What is the leader's own and not the query's — its timeout or its cancellation (the client went away) —
is not handed on: a follower then evaluates for itself, within its own deadline.

>>> flights = SingleFlight()
>>> ctx = QueryContext(5.0, 100)
>>> flights.run("key", ctx, lambda: b"answer")
b'answer'
>>> flights.shared
0
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from inferwatch.server.api._query_exec import QueryCanceled, QueryContext, QueryTimeout

__all__ = ["SingleFlight"]

_POLL_S = 0.1  # how often a follower looks at its own cancel flag and deadline


@dataclass
class _Flight:
    done: threading.Event = field(default_factory=threading.Event)
    answer: bytes | None = None
    error: BaseException | None = None
    followers: int = 0


class SingleFlight:
    """Runs one evaluation per key at a time; callers with the same key meanwhile share its outcome."""

    def __init__(self) -> None:
        self.shared = 0
        """Queries answered with another query's evaluation (``inferwatch_query_shared_total``)."""
        self._flights: dict[Hashable, _Flight] = {}
        self._lock = threading.Lock()

    def run(self, key: Hashable, ctx: QueryContext, evaluate: Callable[[], bytes]) -> bytes:
        """``evaluate()``'s answer, or the answer of the identical query already evaluating."""
        with self._lock:
            flight = self._flights.get(key)
            leads = flight is None
            if flight is None:
                flight = self._flights[key] = _Flight()
            else:
                flight.followers += 1
        return self._lead(key, flight, evaluate) if leads else self._follow(flight, ctx, evaluate)

    def joined(self) -> int:
        """Queries that joined an identical one still evaluating (waiting for its answer)."""
        with self._lock:
            return sum(f.followers for f in self._flights.values())

    def _lead(self, key: Hashable, flight: _Flight, evaluate: Callable[[], bytes]) -> bytes:
        try:
            flight.answer = evaluate()
            return flight.answer
        except BaseException as exc:
            flight.error = exc
            raise
        finally:
            with self._lock:
                if self._flights.get(key) is flight:
                    del self._flights[key]
            flight.done.set()

    def _follow(self, flight: _Flight, ctx: QueryContext, evaluate: Callable[[], bytes]) -> bytes:
        ctx.finish()  # it spends no CPU while it waits
        while not flight.done.wait(_POLL_S):
            ctx.stop_if_done("query execution")
        if flight.answer is not None:
            with self._lock:
                self.shared += 1
            return flight.answer
        if isinstance(flight.error, QueryTimeout | QueryCanceled) or flight.error is None:
            ctx.stop_if_done("query execution")
            return evaluate()  # the leader's own deadline or client ended it: evaluate for this one
        with self._lock:
            self.shared += 1
        raise flight.error
