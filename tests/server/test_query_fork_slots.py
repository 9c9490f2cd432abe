"""Issue 46: at most ``fork_max_children`` query children at once; identical queries in flight share one."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from inferwatch.server.api._query_exec import QueryCanceled, QueryContext, QueryTimeout
from inferwatch.server.api._query_fork import QueryForks
from inferwatch.store import MemoryStore

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forked queries need os.fork")


def _wait(cond: Callable[[], bool], within_s: float = 60.0) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return False


def _forever(ctx: QueryContext) -> bytes:
    threading.Event().wait()  # in the child: only the worker's SIGKILL ends it
    return b""


def _until(gate: Path) -> Callable[[QueryContext], bytes]:
    def compute(ctx: QueryContext) -> bytes:  # in the child: answers once the test opens the gate
        end = time.monotonic() + 120
        while not gate.exists() and time.monotonic() < end:
            time.sleep(0.01)
        return f"answer from {os.getpid()}".encode()

    return compute


class _Query(threading.Thread):
    """``forks.run`` on its own thread (a query worker), its answer or error kept."""

    def __init__(self, forks: QueryForks, compute: Callable[[QueryContext], bytes], timeout: float = 60.0,
                 key: str | None = None) -> None:
        super().__init__(daemon=True)
        self.forks, self.compute, self.key = forks, compute, key
        self.ctx = QueryContext(timeout, 1000)
        self.answer: bytes | None = None
        self.error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            self.answer = self.forks.run(MemoryStore(), 0.0, self.compute, self.ctx, self.key)
        except BaseException as exc:
            self.error = exc

    def result(self) -> bytes | None:
        self.join(120)
        assert not self.is_alive()
        return self.answer


def test_a_third_heavy_query_waits_for_a_slot_and_times_out_in_the_queue() -> None:
    forks = QueryForks(min_points=1, nice=0, max_children=2, scheduler="normal")
    a, b = _Query(forks, _forever), _Query(forks, _forever)
    try:
        assert _wait(lambda: forks.running() == 2)
        # the third waits (no third child), and its deadline passes while it waits: Prometheus's words
        third = _Query(forks, lambda c: b"never", timeout=1.0)
        assert third.result() is None
        assert isinstance(third.error, QueryTimeout), third.error
        assert "query timed out in query queue" in str(third.error)
        assert forks.forks == 2 and forks.slot_waits == 1 and forks.slot_wait_seconds > 0
        # a fourth waits until a slot frees, then forks and answers
        fourth = _Query(forks, lambda c: b"fourth")
        assert _wait(lambda: forks.waiting() == 1)
        assert forks.running() == 2
        a.ctx.cancelled.set()  # its worker kills its child: the slot is the fourth's
        assert fourth.result() == b"fourth", fourth.error
        assert isinstance(a.error, QueryCanceled) and forks.forks == 3
    finally:
        a.ctx.cancelled.set()
        b.ctx.cancelled.set()
        a.join(60)
        b.join(60)
    assert isinstance(b.error, QueryCanceled)
    assert _wait(lambda: forks.running() == 0) and forks.waiting() == 0
    text = "".join(str(m) for m in forks.collect())
    assert "inferwatch_query_fork_slot_waits" in text and "inferwatch_query_fork_slot_waiting" in text


def test_two_identical_queries_in_flight_share_one_child(tmp_path: Path) -> None:
    forks = QueryForks(min_points=1, nice=0, scheduler="normal")
    gate = tmp_path / "go"
    leader = _Query(forks, _until(gate), key="q")
    assert _wait(lambda: forks.running() == 1)
    follower = _Query(forks, lambda c: b"evaluated again", key="q")
    other = _Query(forks, lambda c: b"another query", key="other")  # a different key never shares
    assert other.result() == b"another query"
    assert _wait(lambda: forks.flights.joined() == 1)
    gate.touch()
    answer = leader.result()
    assert answer is not None and answer.startswith(b"answer from "), leader.error
    assert follower.result() == answer, follower.error  # the very bytes of the one child
    assert forks.forks == 2 and forks.flights.shared == 1  # the leader's child and the other query's
    assert forks.flights.joined() == 0  # nothing kept once the leader is done: not a cache
    again = _Query(forks, lambda c: b"fresh", key="q")
    assert again.result() == b"fresh" and forks.forks == 3


def test_a_follower_evaluates_for_itself_when_the_leaders_deadline_passes() -> None:
    # rule: the leader's timeout is the leader's; a follower with time left evaluates on its own deadline
    forks = QueryForks(min_points=1, nice=0, scheduler="normal")
    leader = _Query(forks, _forever, timeout=2.0, key="q")
    assert _wait(lambda: forks.running() == 1)
    follower = _Query(forks, lambda c: b"own answer", key="q")
    assert _wait(lambda: forks.flights.joined() == 1 or not leader.is_alive())
    assert leader.result() is None and isinstance(leader.error, QueryTimeout)
    assert follower.result() == b"own answer", follower.error
    assert forks.flights.shared == 0


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="Linux scheduling policies")
@pytest.mark.parametrize(("scheduler", "policy", "nice"), [
    ("idle", "SCHED_IDLE", 0), ("batch", "SCHED_BATCH", 19), ("normal", "SCHED_OTHER", 19)])
def test_the_child_runs_at_the_configured_cpu_priority(scheduler: str, policy: str, nice: int) -> None:
    # rule: the server's threads take a core from a child the moment they wake (SCHED_IDLE by default)
    forks = QueryForks(min_points=1, nice=nice, scheduler=scheduler)
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    got = _Query(forks, lambda c: f"{os.sched_getscheduler(0)} {os.getpriority(os.PRIO_PROCESS, 0)}".encode())
    assert got.result() == f"{getattr(os, policy)} {min(19, mine + nice)}".encode(), got.error
