"""ThreadExecutor.held: a tick's sends start once the pipeline's lock is released, before tick returns."""

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
