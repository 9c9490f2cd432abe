"""How delivery attempts and action runs are run: inline, or each on a worker thread of its own.

``InlineExecutor`` runs a job at once on the caller's thread (replay, simulated-time tests).
``ThreadExecutor`` (the server) gives each job a worker thread for as long as it runs, so a
receiver or an action that hangs delays only itself. Its workers are kept between jobs: handing
a job to a waiting worker returns at once, where ``Thread.start`` waits until the new thread has
run (a scheduler slice on a loaded machine), and the pipeline starts sends while it ticks.
``CommittedExecutor`` starts a job only once the write that owes it is on disk.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Protocol

from inferwatch.alerting._state import StateStore

__all__ = ["CommittedExecutor", "Executor", "InlineExecutor", "Job", "ThreadExecutor"]

log = logging.getLogger("inferwatch.alerting")
IDLE_S = 60.0  # a worker with no job this long ends (a storm's workers do not outlive it by much)


class Job(Protocol):
    """A delivery attempt or an action run: ``run`` never raises and signals its own completion."""

    @property
    def thread_name(self) -> str:
        """The name of the thread a ``ThreadExecutor`` runs it on."""
        ...

    def run(self) -> None:
        """Do the work; keep the outcome; signal completion."""
        ...


class Executor(Protocol):
    """Runs attempts and action runs."""

    def start(self, attempt: Job) -> None:
        """Run (or begin running) ``attempt``."""
        ...


class InlineExecutor:
    """Runs a job at once on the calling thread (deterministic: replay and simulated time)."""

    def start(self, attempt: Job) -> None:
        """Run it now."""
        attempt.run()


class _Worker:
    """A kept thread waiting for its next job (``give`` hands one over)."""

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.job: Job | None = None

    def give(self, job: Job) -> None:
        self.job = job
        self.ready.set()

    def take(self) -> Job | None:
        job, self.job = self.job, None
        self.ready.clear()
        return job


class ThreadExecutor:
    """Runs each job on a worker thread that does nothing else meanwhile (the server).

    A job goes to a worker that waits for one (the most recently finished), else to a new thread;
    a worker ends after ``idle`` seconds without a job. Inside ``held()`` the new threads this
    thread would start wait until the block ends: the pipeline ticks under its lock, and a storm
    after a quiet spell needs a new thread per send in flight. Handing over to a waiting worker
    never waits, so it happens at once, inside the block too.

    >>> import threading
    >>> class Hello:
    ...     thread_name, done = "hello", threading.Event()
    ...     def run(self): self.done.set()
    >>> job = Hello()
    >>> ThreadExecutor().start(job); job.done.wait(60)
    True
    """

    def __init__(self, idle: float = IDLE_S) -> None:
        self._idle_s = idle
        self._lock = threading.Lock()
        self._waiting: list[_Worker] = []  # a stack: the warm ones are reused, the rest time out
        self._local = threading.local()

    def start(self, attempt: Job) -> None:
        """Hand ``attempt`` to a waiting worker, else start a thread (at the end of ``held()``)."""
        deferred: list[Job] | None = getattr(self._local, "jobs", None)
        if not self._hand_over(attempt, spawn=deferred is None):
            assert deferred is not None
            deferred.append(attempt)

    def _hand_over(self, job: Job, *, spawn: bool) -> bool:
        """To a waiting worker, else (``spawn``) to a new thread; whether it went."""
        with self._lock:
            worker = self._waiting.pop() if self._waiting else None
        if worker is not None:
            worker.give(job)
        elif spawn:
            threading.Thread(target=self._work, args=(job,), name=job.thread_name, daemon=True).start()
        return worker is not None or spawn

    @contextmanager
    def held(self) -> Iterator[None]:
        """Defer the threads this thread would start until the block ends (started then, in order)."""
        if getattr(self._local, "jobs", None) is not None:  # nested: the outer block starts them
            yield
            return
        jobs: list[Job] = []
        self._local.jobs = jobs
        try:
            yield
        finally:
            self._local.jobs = None
            for job in jobs:
                self._hand_over(job, spawn=True)

    def waiting(self) -> int:
        """Workers waiting for a job now."""
        with self._lock:
            return len(self._waiting)

    def _work(self, job: Job | None) -> None:
        me = _Worker()
        while job is not None:
            threading.current_thread().name = job.thread_name
            try:
                job.run()
            except Exception:  # a job keeps its own outcome; a bug in one must not end the worker
                log.exception("%s failed", job.thread_name)
            job = self._next(me)

    def _next(self, me: _Worker) -> Job | None:
        with self._lock:
            self._waiting.append(me)
        if me.ready.wait(self._idle_s):
            return me.take()
        with self._lock:
            if me in self._waiting:  # nobody took it: the thread ends
                self._waiting.remove(me)
                return None
        me.ready.wait()  # taken just as the wait ran out: the job is being handed over
        return me.take()


class CommittedExecutor:
    """Starts each job through ``inner`` once the open transaction of ``db`` has committed.

    The server's tick writes as one transaction; a send or an action run must not start on
    an outbox row or a ledger claim that a crash could still lose.
    """

    def __init__(self, inner: Executor, db: StateStore) -> None:
        self._inner, self._db = inner, db

    def start(self, attempt: Job) -> None:
        """Start it now, or when the transaction commits."""
        self._db.after_commit(partial(self._inner.start, attempt))
