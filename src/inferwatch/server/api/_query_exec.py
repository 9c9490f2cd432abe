"""Queries off the event loop: a bounded pool, a timeout, a sample limit, cancellation.

As Prometheus's engine (``--query.timeout`` 2 min, ``--query.max-samples``
50 M, ``--query.max-concurrency``): a query waits for one of
``max_concurrency`` workers, and the time it waits counts against its
timeout. Cancellation is cooperative: every read from the store goes through
a :class:`BoundedStore`, which checks the deadline and the cancel flag and
counts the samples read, so a cancelled or timed-out query stops at its next
read and its worker is free again. The event loop only awaits the result, so
``/-/healthy``, scrapes and rule evaluation keep their pace whatever a query
costs.

Every endpoint that reads the store for a client (the Prometheus routes'
queries, series and label look-ups) runs through :meth:`QueryExecutor.run`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from prometheus_client.core import CounterMetricFamily, Metric

from inferwatch.config import QueryLimits
from inferwatch.model import Labels, Matcher, Priority, ShortTicket, pinned
from inferwatch.model import metrics as catalog
from inferwatch.promql import Expr
from inferwatch.store import Series, Store

__all__ = [
    "BoundedStore",
    "Forks",
    "QueryCanceled",
    "QueryContext",
    "QueryError",
    "QueryExecutor",
    "QueryTimeout",
    "QueryTooLarge",
    "lower_priority",
]

T = TypeVar("T")
log = logging.getLogger(__name__)


class QueryError(Exception):
    """A query was stopped; ``error_type`` and ``status`` are Prometheus's for the API answer."""

    error_type = "execution"
    status = 422


class QueryTimeout(QueryError):
    """The query ran past its timeout."""

    error_type, status = "timeout", 503


class QueryCanceled(QueryError):
    """The query was cancelled (client gone, server shutting down)."""

    error_type, status = "canceled", 503


class QueryTooLarge(QueryError):
    """The query would hold more samples than allowed."""


class QueryContext:
    """One query's deadline, cancel flag and sample budget (checked by :class:`BoundedStore`)."""

    def __init__(
        self, timeout: float, max_samples: int, *, monotonic: Callable[[], float] = time.monotonic,
        priority: Priority | None = None, cpu: Callable[[], float] = time.thread_time,
    ) -> None:
        self._monotonic = monotonic
        self._priority = priority
        self._cpu = cpu
        self._cpu0: float | None = None  # the worker thread's CPU time at the query's first check
        self.deadline = monotonic() + timeout
        self.timeout = timeout
        self.max_samples = max_samples
        self.cancelled = threading.Event()
        self.samples = 0  # samples held by the step being evaluated
        self.kept = 0  # samples already in the (range) result
        self._short: ShortTicket | None = None

    def begin(self) -> None:
        """The query starts (or a worker is free for it): it counts as short (longer queries make way)
        until it has used the priority's ``short_cpu`` or :meth:`finish` is called."""
        if self._priority is not None and self._short is None:
            self._short = self._priority.short()  # its CPU counts from its first check, on its worker

    def finish(self) -> None:
        """The query's answer is sent (or will never be): longer queries need not make way any more."""
        if self._short is not None:
            self._short.leave()

    def check(self, where: str = "query execution") -> None:
        """Raise if the query was cancelled or ran out of time; first wait while a rule round runs
        (once the query has used its grace of CPU: a short one goes on), and while a short query
        runs (once this one is no longer short itself)."""
        if self._priority is not None:
            now = self._cpu()
            if self._cpu0 is None:
                self._cpu0 = now
            used = now - self._cpu0
            if self._short is not None and self._short.held and used >= self._priority.short_cpu:
                self._short.leave()
            self._priority.wait_turn(used)
            if self._short is None or not self._short.held:
                self._priority.make_way(used)
        self.stop_if_done(where)

    def expired(self) -> bool:
        """Whether the query's deadline has passed."""
        return self._monotonic() > self.deadline

    def stop_if_done(self, where: str = "query execution") -> None:
        """Raise if the query was cancelled or ran out of time (no waiting for rounds: see :meth:`check`)."""
        if self.cancelled.is_set():
            raise QueryCanceled(f"query was canceled in {where}")
        if self.expired():
            raise QueryTimeout(f"query timed out in {where} (timeout {self.timeout:g}s)")

    def count(self, n: int) -> None:
        """Account for ``n`` more samples in memory; raise past the limit."""
        self.samples += n
        if self.samples + self.kept > self.max_samples:
            raise QueryTooLarge(
                "query processing would load too many samples into memory in query execution "
                f"(limit {self.max_samples})")


class BoundedStore:
    """A read-only view of a store that checks a :class:`QueryContext` at every read."""

    def __init__(self, store: Store, ctx: QueryContext) -> None:
        self._store, self._ctx = store, ctx

    def select(self, matchers: Sequence[Matcher], start: float, end: float) -> list[Series]:
        """The store's ``select``, with the deadline checked before and the samples counted after."""
        self._ctx.check()
        out = self._store.select(matchers, start, end)
        self._ctx.count(sum(len(s) for s in out))
        self._ctx.check()
        return out

    def select_latest(self, matchers: Sequence[Matcher], start: float, end: float) -> list[Series]:
        """The store's ``select_latest`` (each series' last sample only) where it has one, checked alike."""
        self._ctx.check()
        latest = getattr(self._store, "select_latest", self._store.select)
        out: list[Series] = latest(matchers, start, end)
        self._ctx.count(sum(len(s) for s in out))
        self._ctx.check()
        return out

    def select_columns(self, matchers: Sequence[Matcher], start: float, end: float) -> Any:
        """The store's ``select_columns`` (a span's samples as one batch) where it has one, checked alike;
        ``None`` where it has none (the engine reads with ``select``)."""
        return self._columns("select_columns", matchers, start, end)

    def select_latest_columns(self, matchers: Sequence[Matcher], start: float, end: float) -> Any:
        """The store's ``select_latest_columns`` where it has one, checked alike; else ``None``."""
        return self._columns("select_latest_columns", matchers, start, end)

    def select_column_chunks(self, matchers: Sequence[Matcher], start: float, end: float) -> Any:
        """The store's ``select_column_chunks`` where it has one, each batch counted and checked as it is
        read; ``None`` where it has none."""
        reader = getattr(self._store, "select_column_chunks", None)
        if reader is None:
            return None
        self._ctx.check()
        got = reader(matchers, start, end)
        return None if got is None else (got[0], self._counted(got[1]))

    def _counted(self, chunks: Iterator[Any]) -> Iterator[Any]:
        for cols in chunks:
            self._ctx.count(cols.samples)  # (a target's series share one row of times: not built to count)
            self._ctx.check()
            yield cols

    def _columns(self, name: str, matchers: Sequence[Matcher], start: float, end: float) -> Any:
        reader = getattr(self._store, name, None)
        if reader is None:
            return None
        self._ctx.check()
        out = reader(matchers, start, end)
        if out is not None:
            self._ctx.count(getattr(out, "samples", None) or len(out.t))  # LatestColumns: one a series
            self._ctx.check()
        return out

    def series(self, matchers: Sequence[Matcher]) -> list[Labels]:
        """The store's ``series``, deadline-checked."""
        self._ctx.check()
        out = self._store.series(matchers)
        self._ctx.count(len(out))
        return out

    def label_values(self, name: str) -> list[str]:
        """The store's ``label_values``, deadline-checked."""
        self._ctx.check()
        return self._store.label_values(name)


def lower_priority(by: int) -> None:
    """Raise the calling thread's nice value by ``by`` (Linux keeps one per thread; elsewhere nothing).

    The rule round's thread holds its core against the query threads on a busy machine: the
    interpreter lock keeps one thread in Python at a time, but a query's numpy work runs beside it
    on the other core, and with other processes on the machine the scheduler shared both cores
    among every thread alike (a 0.14 s round took 1.5 s at load 10).
    """
    if by <= 0 or not sys.platform.startswith("linux"):
        return
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + by))
    except OSError as exc:  # a sandbox that forbids it: the queries run at the server's priority
        log.warning("query threads keep the server's priority: %s", exc)


class Forks(Protocol):
    """Where heavy queries are evaluated in child processes (``QueryForks``)."""

    min_points: int
    """Series x steps from which a query is evaluated in a child."""

    def earliest(self, store: object, expr: Expr, start: float, end: float, step: float = 0.0,
                 ) -> float | None:
        """The earliest time a query heavy enough to fork reads; ``None`` to run it on a thread."""

    def run(self, store: Any, earliest: float, compute: Callable[[QueryContext], bytes],
            ctx: QueryContext, key: Hashable | None = None) -> bytes:
        """``compute`` in a child, its answer back (shared by identical queries in flight: ``key``)."""

    def kill_all(self) -> None:
        """Kill every child still running."""

    def collect(self) -> Iterator[Any]:
        """Its metrics (a ``prometheus_client`` collector)."""


def _retrieve(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()


class QueryExecutor:
    """Runs queries in ``limits.workers()`` threads (the rest queue) with the timeout and sample limit.

    >>> import asyncio
    >>> ex = QueryExecutor(QueryLimits(timeout=5))
    >>> asyncio.run(ex.run(lambda ctx: 1 + 1))
    2
    >>> ex.close()
    """

    def __init__(self, limits: QueryLimits, *, monotonic: Callable[[], float] = time.monotonic,
                 priority: Priority | None = None, forks: Forks | None = None) -> None:
        self.limits = limits
        self.forks = forks
        """Where heavy queries are evaluated in children (``server.query.isolation: fork``); None: threads."""
        self._monotonic = monotonic
        self.priority = priority
        """Rule rounds go first: a query waits at its next check while one runs (``model.Priority``)."""
        self.workers = limits.workers()
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="query",
                                        initializer=lower_priority, initargs=(limits.nice,))
        # a query on a worker: its loop and future; one run here (``run_here``): None
        self._live: dict[QueryContext, tuple[asyncio.AbstractEventLoop, asyncio.Future[Any]] | None] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.ran_here = 0
        """Queries evaluated on the event loop (:meth:`run_here`)."""

    def context(self, timeout: float | None = None) -> QueryContext:
        """A new query context with this executor's limits (``timeout`` if shorter than its own)."""
        limit = min(timeout, self.limits.timeout) if timeout else self.limits.timeout
        return QueryContext(limit, self.limits.max_samples, monotonic=self._monotonic, priority=self.priority)

    async def run(self, work: Callable[[QueryContext], T], timeout: float | None = None,
                  ctx: QueryContext | None = None) -> T:
        """Run ``work(ctx)`` on a worker; :class:`QueryTimeout` past the timeout (the worker stops too).

        ``timeout`` (a request's own, when shorter than ``query.timeout``) is answered at once when it
        passes, whatever the worker is doing; the worker stops at its next deadline check. A caller's
        ``ctx`` (:meth:`context`) is the caller's to :meth:`QueryContext.finish` once the answer is sent.
        """
        own, ctx = ctx is None, ctx or self.context(timeout)
        fut = self._submit(work, ctx)
        try:
            return await asyncio.wait_for(asyncio.shield(fut), timeout=ctx.timeout)
        except TimeoutError:
            ctx.cancelled.set()
            ctx.finish()
            raise QueryTimeout(f"query timed out in query execution (timeout {ctx.timeout:g}s)") from None
        except asyncio.CancelledError:
            ctx.cancelled.set()
            ctx.finish()
            if fut.cancelled() and self._closed:  # close() cancelled it: answer, do not vanish
                raise QueryCanceled("query was canceled: the server is shutting down") from None
            raise  # the client went away
        finally:
            if own:
                ctx.finish()
            with self._lock:
                self._live.pop(ctx, None)

    def run_here(self, work: Callable[[QueryContext], T | None], ctx: QueryContext) -> T | None:
        """``work(ctx)`` in the calling thread (the event loop: for a query too small to be worth a
        worker's hand-over, ``_query_small``) when a worker is free for it; ``None`` when none is, or
        when ``work`` answers ``None`` (then the caller runs it on a worker). It counts against the
        concurrency limit while it runs, as on a worker, and never waits for a rule round or a short
        query at its checks (``model.pinned``): it is the short query. ``ctx`` is the caller's to finish.
        """
        with self._lock:
            if self._closed or len(self._live) >= self.workers:
                return None
            self._live[ctx] = None
        try:
            ctx.begin()
            with pinned():
                out = work(ctx)
            self.ran_here += out is not None
            return out
        finally:
            with self._lock:
                self._live.pop(ctx, None)

    def _submit(self, work: Callable[[QueryContext], T], ctx: QueryContext) -> asyncio.Future[T]:
        def guarded() -> T:
            ctx.begin()  # not while it waited for a worker (longer ones would have waited idle)
            ctx.check("queue")  # the time spent waiting for a worker counts, as in Prometheus
            return work(ctx)

        loop = asyncio.get_running_loop()
        with self._lock:
            if self._closed:
                raise QueryCanceled("query was canceled: the server is shutting down")
            if len(self._live) < self.workers:  # a worker is free: longer queries make way from now
                ctx.begin()
            fut = loop.run_in_executor(self._pool, guarded)
            self._live[ctx] = (loop, fut)
        fut.add_done_callback(_retrieve)  # a result nobody awaits any more is not an error to log
        return fut

    def collect(self) -> Iterator[Metric]:
        """``inferwatch_query_on_event_loop_total``, for the server's ``/metrics`` (a collector)."""
        fam = CounterMetricFamily(catalog.QUERY_ON_LOOP_TOTAL.name.removesuffix("_total"),
                                  catalog.QUERY_ON_LOOP_TOTAL.help)
        fam.add_metric([], float(self.ran_here))
        yield fam

    def in_flight(self) -> int:
        """Queries running or waiting now."""
        with self._lock:
            return len(self._live)

    def close(self) -> None:
        """Cancel every running query and stop the workers (without waiting for them)."""
        with self._lock:
            self._closed = True
            live = list(self._live.items())
        if self.forks is not None:  # their workers reap them
            self.forks.kill_all()
        for ctx, running in live:
            ctx.cancelled.set()
            if running is None:  # run here, on the loop: it stops at its next check
                continue
            loop, fut = running
            if not loop.is_closed():
                loop.call_soon_threadsafe(fut.cancel)
        self._pool.shutdown(wait=False, cancel_futures=True)
