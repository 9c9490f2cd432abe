"""ThreadExecutor: kept workers take the next job at once; held() defers new threads to the end."""

from __future__ import annotations

import threading

from inferwatch.alerting import ThreadExecutor


class _Job:
    def __init__(self, name: str, ran: list[str]) -> None:
        self.thread_name, self._ran, self.done = name, ran, threading.Event()

    def run(self) -> None:
        self._ran.append(self.thread_name)
        self.done.set()


def test_starts_inside_held_wait_for_the_block_then_start_in_order() -> None:
    # rule: Thread.start waits for the new thread to run; under the pipeline's lock that wait
    # held up every posted batch, so the starts of a held block go out when it ends
    ex, ran = ThreadExecutor(), list[str]()
    jobs = [_Job(f"job{i}", ran) for i in range(3)]
    with ex.held():
        with ex.held():  # nested: the outer block starts them
            ex.start(jobs[0])
        ex.start(jobs[1])
        assert not any(j.done.is_set() for j in jobs[:2])  # nothing started yet
    assert all(j.done.wait(60) for j in jobs[:2])
    ex.start(jobs[2])  # outside a held block: at once
    assert jobs[2].done.wait(60) and sorted(ran) == ["job0", "job1", "job2"]


def test_held_on_one_thread_does_not_hold_another() -> None:
    ex, ran = ThreadExecutor(), list[str]()
    job = _Job("other", ran)
    with ex.held():
        t = threading.Thread(target=ex.start, args=(job,))
        t.start()
        assert job.done.wait(60)  # started from another thread while this one holds
        t.join(60)


class _Where:
    """A job that notes the thread it ran on; ``hold`` keeps it running until released."""

    thread_name = "where"

    def __init__(self, hold: bool = False) -> None:
        self.thread: threading.Thread | None = None
        self.done, self.release = threading.Event(), threading.Event()
        if not hold:
            self.release.set()

    def run(self) -> None:
        self.thread = threading.current_thread()
        self.release.wait(60)
        self.done.set()


def _until(cond) -> bool:  # type: ignore[no-untyped-def]
    ev = threading.Event()
    for _ in range(6000):  # bounded: 60 s
        if cond():
            return True
        ev.wait(0.01)
    return False


def test_a_finished_worker_takes_the_next_job_without_a_new_thread() -> None:
    # rule: Thread.start waits until the new thread runs; a storm's sends reuse the kept workers
    ex = ThreadExecutor()
    first, second = _Where(), _Where()
    ex.start(first)
    assert first.done.wait(60) and _until(lambda: ex.waiting() == 1)
    ex.start(second)
    assert second.done.wait(60) and second.thread is first.thread
    assert second.thread is not None and second.thread.name == "where"


def test_a_hung_job_delays_only_itself() -> None:
    # rule: every job has a thread of its own while it runs: one never waits behind another
    ex = ThreadExecutor()
    hung, other = _Where(hold=True), _Where()
    ex.start(hung)
    ex.start(other)
    assert other.done.wait(60) and other.thread is not hung.thread
    assert not hung.done.is_set()
    hung.release.set()
    assert hung.done.wait(60)


def test_an_idle_worker_ends() -> None:
    ex = ThreadExecutor(idle=0.01)
    job = _Where()
    ex.start(job)
    assert job.done.wait(60) and job.thread is not None
    job.thread.join(60)
    assert not job.thread.is_alive() and ex.waiting() == 0
    again = _Where()
    ex.start(again)  # a new thread once the old one has gone
    assert again.done.wait(60) and again.thread is not job.thread
