"""Heavy queries in a forked child: the server's interpreter stays free for rule rounds, scrapes and panels.

One interpreter lock serves every thread of the server, so while four heavy range queries ran on
query threads, a 2 ms dashboard panel waited for the lock three times (read, evaluate, send) and took
20-40 ms. A query estimated heavy (series matched times steps, from the index) is instead evaluated in
a child forked from the server: the child gets a copy-on-write snapshot of the whole process, head
included, evaluates the query, encodes the JSON answer, writes it to a pipe and leaves with
``os._exit``. The query's worker thread waits on the pipe without the interpreter lock, so both cores
serve heavy queries while the server's interpreter keeps the rest.

Fork safety: the store's memory lock is held by the forking thread around ``os.fork``
(``store.fork_guard()``), so no other thread is changing the index or the head at that moment; the
child reads the head only (a query that reaches before it runs on a thread: the child never touches
the parent's SQLite connection), starts no thread, uses no executor, ticket or event loop, disables the
garbage collector (its writes would copy every page) and resets the signal handlers that would write
into the parent's event loop. The limits keep working: a child occupies its query worker (so max
concurrency counts children); at the timeout or on cancel the worker kills it (SIGKILL) and the
executor answers Prometheus's error; a child that dies without an answer answers a clear error; every
child is reaped by its worker (no zombies), and ``kill_all`` at shutdown kills the ones still running.

Children cost memory (each copies the pages it and the server write while it lives) and CPU the server's
interpreter wants: at most ``max_children`` (the cores) live at once, a query beyond waits for a slot
within its deadline; a child runs at ``SCHED_IDLE`` by default, so the server's threads take a core from
it the moment they wake; and identical queries in flight share one child (:class:`SingleFlight`).
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import select
import signal
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from inferwatch.config import QueryLimits
from inferwatch.model import Matcher, Priority
from inferwatch.model import metrics as catalog
from inferwatch.promql import DEFAULT_LOOKBACK_MS, Expr, needed_spans
from inferwatch.server.api._query_exec import QueryContext, QueryError, QueryExecutor
from inferwatch.server.api._query_flight import SingleFlight

__all__ = ["ForkFailed", "ForkableStore", "QueryForks", "Relayed", "query_executor"]

_POLL_S = 0.1  # how often a waiting worker looks at its query's cancel flag and deadline


class ForkFailed(QueryError):
    """The query's child process died without an answer."""

    error_type, status = "internal", 503


class Relayed(QueryError):
    """An error the child answered with: its API error type and status, carried back through the pipe."""

    def __init__(self, message: str, error_type: str = "execution", status: int = 422) -> None:
        super().__init__(message)
        self.error_type, self.status = error_type, status


class ForkableStore(Protocol):
    """What a store offers for forked reads (``SQLiteStore``, ``MemoryStore``)."""

    def fork_guard(self) -> Any:  # a context manager yielding the head's first time
        """Hold the store's memory still around ``os.fork``."""

    def count_matching(self, matchers: tuple[Matcher, ...]) -> int:
        """Series matching ``matchers``."""


class QueryForks(Collector):
    """Decides which queries fork and runs them in children (``server.query.isolation: fork``).

    >>> from inferwatch.model import Labels, Sample
    >>> from inferwatch.store import MemoryStore
    >>> from inferwatch.promql import parse_promql
    >>> store = MemoryStore()
    >>> store.append([Sample(Labels({"__name__": "up"}), 90.0, 1.0)])
    >>> forks = QueryForks(min_points=1)
    >>> forks.earliest(store, parse_promql("up"), 100.0, 100.0)  # forks: reads from 100 - 5 min
    -200.0
    >>> forks.earliest(store, parse_promql("nothing_here"), 100.0, 100.0) is None  # no series: a thread
    True
    """

    def __init__(self, min_points: int = 100_000, nice: int = 19, *, lookback_ms: int = DEFAULT_LOOKBACK_MS,
                 max_children: int | None = None, scheduler: str = "idle") -> None:
        self.min_points = min_points
        self.nice = nice
        self.scheduler = scheduler
        self.lookback_ms = lookback_ms
        self.max_children = max_children or os.cpu_count() or 1
        """Children alive at once; a heavy query beyond waits for a slot within its deadline."""
        self.forks = 0
        self.failures = 0
        self.fork_seconds = 0.0
        self.slot_waits = 0
        self.slot_wait_seconds = 0.0
        self.flights = SingleFlight()
        self._live: set[int] = set()
        self._lock = threading.Lock()
        self._slots = threading.Condition(threading.Lock())
        self._busy = 0
        self._waiting = 0

    def earliest(self, store: object, expr: Expr, start: float, end: float, step: float = 0.0,
                 ) -> float | None:
        """The earliest time the query reads when it is heavy enough to fork; ``None`` to run it on a
        thread (light, or a store without forked reads)."""
        count = getattr(store, "count_matching", None)
        if count is None or getattr(store, "fork_guard", None) is None:
            return None
        spans = needed_spans(expr, round(start * 1000), round(end * 1000), self.lookback_ms)
        if not spans:
            return None
        steps = int((end - start) / step) + 1 if step > 0 else 1
        series = sum(count(m) for m in spans)
        if series * steps < self.min_points:
            return None
        return min(lo for lo, _ in spans.values()) / 1000

    def run(self, store: Any, earliest: float, compute: Callable[[QueryContext], bytes],
            ctx: QueryContext, key: Hashable | None = None) -> bytes:
        """``compute(ctx)`` in a child (on a query worker); in this thread when the head no longer reaches
        back to ``earliest``. The child's own context has the time left and the same sample limit. With a
        ``key`` (the query and every parameter it runs with), a query identical to one evaluating now
        answers that one's answer (:class:`SingleFlight`). At most ``max_children`` children live at once:
        beyond, the query waits for a slot, the wait counted against its deadline."""
        ctx.finish()  # its worker spends no CPU: the short-query tier is not its to hold
        if key is None:
            return self._run_one(store, earliest, compute, ctx)
        return self.flights.run(key, ctx, lambda: self._run_one(store, earliest, compute, ctx))

    def _run_one(self, store: Any, earliest: float, compute: Callable[[QueryContext], bytes],
                 ctx: QueryContext) -> bytes:
        self._take_slot(ctx)
        try:
            return self._evaluate(store, earliest, compute, ctx)
        finally:
            with self._slots:
                self._busy -= 1
                self._slots.notify()

    def _take_slot(self, ctx: QueryContext) -> None:
        with self._slots:
            if self._busy < self.max_children:
                self._busy += 1
                return
            self._waiting += 1
            t0 = time.monotonic()
            try:
                while self._busy >= self.max_children:
                    ctx.stop_if_done("query queue")  # Prometheus's words for a query waiting its turn
                    self._slots.wait(_POLL_S)
                ctx.stop_if_done("query queue")
                self._busy += 1
            finally:
                self._waiting -= 1
                self.slot_waits += 1
                self.slot_wait_seconds += time.monotonic() - t0

    def _evaluate(self, store: Any, earliest: float, compute: Callable[[QueryContext], bytes],
                  ctx: QueryContext) -> bytes:
        r, w = os.pipe()
        with store.fork_guard() as head_from:
            if earliest < head_from:
                pid = -1
            else:
                t0 = time.perf_counter()
                pid = os.fork()
                if pid:
                    self._forked(pid, time.perf_counter() - t0)
        if pid == 0:
            _child(compute, ctx, w, self.nice, self.scheduler)  # never returns
        os.close(w)
        if pid < 0:
            os.close(r)
            return compute(ctx)
        try:
            return self._answer(pid, r, ctx)
        finally:
            os.close(r)
            self._reap(pid)

    def _forked(self, pid: int, took: float) -> None:
        with self._lock:
            self._live.add(pid)
            self.forks += 1
            self.fork_seconds += took

    def _answer(self, pid: int, r: int, ctx: QueryContext) -> bytes:
        chunks: list[bytes] = []
        while True:
            if ctx.cancelled.is_set() or ctx.expired():
                self._kill(pid)
                ctx.stop_if_done("query execution")
            ready, _, _ = select.select([r], [], [], _POLL_S)
            if not ready:
                continue
            chunk = os.read(r, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        data = b"".join(chunks)
        if data[:1] == b"o":
            return data[1:]
        if data[:1] == b"e":
            raise _unpickled(data[1:])
        self._kill(pid)
        status = self._reap(pid)
        raise ForkFailed(f"query evaluation process {pid} ended without an answer ({status})")

    def _kill(self, pid: int) -> None:
        with self._lock:
            if pid not in self._live:
                return
            self.failures += 1
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def _reap(self, pid: int) -> str:
        with self._lock:
            if pid not in self._live:
                return "reaped"
            self._live.discard(pid)
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:  # something else in the process reaped it (a waitpid(-1))
            return "reaped elsewhere"
        if os.WIFSIGNALED(status):
            return f"killed by signal {signal.Signals(os.WTERMSIG(status)).name}"
        return f"exit status {os.waitstatus_to_exitcode(status)}"

    def kill_all(self) -> None:
        """Kill every query child still running (shutdown); their workers reap them."""
        with self._lock:
            live = list(self._live)
        for pid in live:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def running(self) -> int:
        """Query children running now."""
        with self._lock:
            return len(self._live)

    def waiting(self) -> int:
        """Heavy queries waiting now for a child's slot."""
        with self._slots:
            return self._waiting

    def collect(self) -> Iterator[Metric]:
        """``inferwatch_query_forks_total`` and the rest, for the server's ``/metrics`` (a collector)."""
        for spec, value in ((catalog.QUERY_FORKS_TOTAL, self.forks),
                            (catalog.QUERY_FORK_FAILURES_TOTAL, self.failures),
                            (catalog.QUERY_FORK_SECONDS_TOTAL, self.fork_seconds),
                            (catalog.QUERY_FORK_SLOT_WAITS_TOTAL, self.slot_waits),
                            (catalog.QUERY_FORK_SLOT_WAIT_SECONDS_TOTAL, self.slot_wait_seconds),
                            (catalog.QUERY_SHARED_TOTAL, self.flights.shared)):
            fam = CounterMetricFamily(spec.name.removesuffix("_total"), spec.help)
            fam.add_metric([], float(value))
            yield fam
        children = GaugeMetricFamily(catalog.QUERY_FORK_CHILDREN.name, catalog.QUERY_FORK_CHILDREN.help)
        children.add_metric([], float(self.running()))
        yield children
        spec = catalog.QUERY_FORK_SLOT_WAITING
        waiting = GaugeMetricFamily(spec.name, spec.help)
        waiting.add_metric([], float(self.waiting()))
        yield waiting


def query_executor(limits: QueryLimits, priority: Priority | None = None) -> QueryExecutor:
    """The server's query executor: heavy queries in forked children where ``limits.forks()``."""
    forks = QueryForks(limits.fork_min_points, limits.fork_nice, max_children=limits.fork_max_children,
                       scheduler=limits.fork_scheduler) if limits.forks() else None
    return QueryExecutor(limits, priority=priority, forks=forks)


def _child(compute: Callable[[QueryContext], bytes], parent: QueryContext, w: int, nice: int,
           scheduler: str) -> None:
    """The child's whole life: evaluate, write ``o`` + the answer (or ``e`` + the error), exit."""
    try:
        _close_inherited(keep=w)
        gc.disable()
        _quiet_signals()
        _lower_priority(nice, scheduler)
        try:
            out = b"o" + compute(QueryContext(max(parent.deadline - time.monotonic(), 0.001),
                                              parent.max_samples))
        except BaseException as exc:
            out = b"e" + _pickled(exc)
        view = memoryview(out)
        while view:
            view = view[os.write(w, view):]
    finally:
        os._exit(0)


_POLICIES = {"idle": "SCHED_IDLE", "batch": "SCHED_BATCH"}


def _lower_priority(nice: int, scheduler: str) -> None:
    """The child's CPU priority below the server's: ``SCHED_IDLE`` (runs only on a core nothing else
    wants, and any waking thread of the server's preempts it at once), ``SCHED_BATCH`` (never preempts
    on waking), and ``nice`` on top; where the system has no such policy or forbids it, nice alone."""
    policy = getattr(os, _POLICIES.get(scheduler, ""), None)
    if policy is not None:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, policy, os.sched_param(0))
    if nice > 0:
        with contextlib.suppress(OSError):
            os.nice(nice)


def _close_inherited(keep: int) -> None:
    """Close every descriptor but stdio and ``keep``: the server's sockets (a connection it closes must
    not stay open here), its SQLite files, and the write ends of other children's pipes (their
    readers wait for every copy to close)."""
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 20)


def _quiet_signals() -> None:
    # the parent's event loop wakes on a fd its signal handlers write to: the child's must not
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
    except (ValueError, OSError):  # not the main thread after all: the parent's handlers stay
        pass


def _pickled(exc: BaseException) -> bytes:
    try:
        data = pickle.dumps(exc)
        pickle.loads(data)
        return data
    except Exception:
        return pickle.dumps(QueryError(f"{type(exc).__name__}: {exc}"))


def _unpickled(data: bytes) -> BaseException:
    try:
        exc = pickle.loads(data)
    except Exception as err:
        return ForkFailed(f"the query's error could not be read back: {err}")
    return exc if isinstance(exc, BaseException) else ForkFailed("the query's child answered nonsense")
