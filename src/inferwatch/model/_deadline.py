"""The running query's deadline, checked deep inside evaluation and store reads (every 1,024 items).

A query's ``timeout`` used to be checked only between store reads and steps, so
one step over a wide vector (``card_boom + on(id) group_left card_boom``) ran
to its end whatever the deadline. :func:`watching` sets, for the calling
thread, the check the engine was given; the evaluator's loops and the stores' reads call
:func:`check` every :data:`EVERY` items (:func:`checked` wraps an iterable), so
a query stops within a few milliseconds of its deadline whatever its shape.
The check costs one thread-local lookup; with no query watching it does nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["EVERY", "check", "checked", "watching"]

T = TypeVar("T")
EVERY = 1024
"""Items between two checks in a loop (a few hundred microseconds of work at most)."""

_local = threading.local()


@contextmanager
def watching(poll: Callable[[], None] | None) -> Iterator[None]:
    """Make ``poll`` (raises past the deadline) this thread's check while the block runs."""
    prev = getattr(_local, "poll", None)
    _local.poll = poll
    try:
        yield
    finally:
        _local.poll = prev


def check() -> None:
    """Raise if the running query is past its deadline or cancelled (nothing when none watches)."""
    poll = getattr(_local, "poll", None)
    if poll is not None:
        poll()


def checked(items: Iterable[T]) -> Iterator[T]:
    """``items``, checking the deadline every :data:`EVERY` of them."""
    poll = getattr(_local, "poll", None)
    if poll is None:
        yield from items
        return
    for i, item in enumerate(items):
        if not i % EVERY:
            poll()
        yield item
