"""Group commit of edge uploads: the batches of concurrent uploads written as one store append and one
transaction of batch ids, each upload answered only after the write that holds it is committed.

A fleet's uploads arrive hundreds a second; committing each alone serialises them on the store's lock
and the batch-id file. Here an upload hands its batch to :meth:`GroupCommit.submit` and waits; the first
waiter with nothing being written becomes the writer and writes everything queued by then (and what
queued meanwhile, round after round) with ``write``; the others wait on their own event. Durability is
the single upload's: ``submit`` returns only after ``write`` returned for a group that held its batch,
and raises what that write raised. A group that fails with :class:`InputError` (one device's batch over
a series limit) is written again one batch at a time, so only the batch at fault is refused.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from inferwatch._exceptions import InputError

__all__ = ["GroupCommit"]

T = TypeVar("T")


class _Waiting(Generic[T]):
    __slots__ = ("error", "finished", "item")

    def __init__(self, item: T) -> None:
        self.item = item
        self.finished = False
        self.error: BaseException | None = None


class GroupCommit(Generic[T]):
    """Writes queued items in groups with ``write(items)`` (see the module docstring).

    >>> groups = []
    >>> gc = GroupCommit(groups.append)
    >>> gc.submit("a"); groups
    [['a']]
    """

    def __init__(self, write: Callable[[list[T]], None], *, max_group: int = 512) -> None:
        self._write = write
        self._max = max_group
        self._cond = threading.Condition()
        self._queue: list[_Waiting[T]] = []
        self._writing = False
        self.groups = 0
        """Groups written (``items / groups`` is the mean group size)."""
        self.items = 0

    def submit(self, item: T) -> None:
        """Queue ``item`` and return once a committed write held it (raise what its write raised).

        The waiter that finds nothing being written writes the queue's head, then goes back to waiting
        for its own item if that was not in it: no upload writes others' groups once its own is done.
        """
        me = _Waiting(item)
        with self._cond:
            self._queue.append(me)
        while True:
            with self._cond:
                while self._writing and not me.finished:
                    self._cond.wait()
                if me.finished:
                    break
                self._writing = True
                group = self._queue[:self._max]
                del self._queue[:self._max]
            try:
                self._group(group)
            finally:  # never leave a waiter behind, whatever happened
                with self._cond:
                    for w in group:
                        w.finished = True
                    self._writing = False
                    self._cond.notify_all()
        if me.error is not None:
            raise me.error

    def _group(self, group: list[_Waiting[T]]) -> None:
        self.groups += 1
        self.items += len(group)
        try:
            self._write([w.item for w in group])
        except InputError as exc:
            if len(group) == 1:
                group[0].error = exc
                return
            for w in group:  # one batch at fault: each alone, so only it is refused
                try:
                    self._write([w.item])
                except BaseException as one:
                    w.error = one
        except BaseException as exc:  # StoreError and bugs: every upload of the group is answered with it
            for w in group:
                w.error = exc
