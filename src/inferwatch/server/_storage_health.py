"""The server's own storage series, recorded every evaluation round before the rules run.

``inferwatch_storage_write_failing`` (1 while the store's last write failed, or the
alerting state's file refuses writes: the pipeline then goes on in memory) and the
data directory's filesystem (``inferwatch_storage_filesystem_avail_bytes`` and
``..._size_bytes``) go into the store like any series, so the default rules
``StorageWriteFailing`` and ``DiskAlmostFull`` read them with PromQL, with no
self-scrape needed. When the store cannot write, they are held in memory
(:func:`~inferwatch.store.hold_samples`), so the alert still fires; a store whose
disk was full before these series were ever written holds nothing and the rule has
nothing to read (``up`` 0 of the targets still shows it).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path

from inferwatch._exceptions import InferwatchError
from inferwatch.alerting.ha import FailOpenStateDB
from inferwatch.model import Labels
from inferwatch.model import metrics as catalog
from inferwatch.server._integrity import Damage, IntegrityWatch
from inferwatch.store import Store, append_columns, hold_samples

__all__ = ["StorageHealth"]

log = logging.getLogger(__name__)
_FAILING = Labels.of(catalog.STORAGE_WRITE_FAILING.name)
_AVAIL = Labels.of(catalog.STORAGE_FILESYSTEM_AVAIL.name)
_SIZE = Labels.of(catalog.STORAGE_FILESYSTEM_SIZE.name)


def _usage(path: Path) -> tuple[float, float]:
    got = shutil.disk_usage(path)
    return float(got.free), float(got.total)


class StorageHealth:
    """Records whether the store can write and how much room its filesystem has; logs each change."""

    def __init__(self, store: Store, data_dir: Path,
                 usage: Callable[[Path], tuple[float, float]] = _usage) -> None:
        """``usage(path)`` gives (free, total) bytes of the filesystem (``shutil.disk_usage``)."""
        self.store, self.data_dir, self._usage = store, data_dir, usage
        self._failing = False
        self.damage: list[Damage] = []
        """Files found damaged (at start, then repaired; or by the daily check), for ``DataFileDamaged``."""
        self.watch: IntegrityWatch | None = None
        """The daily check of every file (``serve``'s ``build`` sets it)."""
        self.state: FailOpenStateDB | None = None
        """The alerting state's file (``build`` sets it): written back here once it takes writes again."""

    def error(self) -> str:
        """The store's (or the alerting state's) last write error, ``""`` while writes succeed."""
        store = getattr(self.store, "store", self.store)  # the store behind the remote-write tee
        error = str(getattr(getattr(store, "stats", None), "write_error", ""))
        if not error and self.state is not None and self.state.error:
            error = f"{self.state.path}: {self.state.error}"
        return error

    def record(self, now: float) -> None:
        """Append this round's storage series (held in memory when the store refuses them)."""
        if self.state is not None:  # what the alerting state held in memory, into its file when it can
            self.state.recover()
        error = self.error()
        if bool(error) != self._failing:  # once per change of state, not once per refused write
            self._failing = bool(error)
            if error:
                log.error("the store cannot write (%s): samples are not being stored until it can; "
                          "StorageWriteFailing fires", error)
            else:
                log.warning("the store writes again")
        if self.watch is not None:
            self.watch.tick(now)
        labels, values = [_FAILING], [1.0 if error else 0.0]
        try:
            free, total = self._usage(self.data_dir)
        except OSError:
            pass  # the directory gone or unreadable: the write failing says enough
        else:
            labels += [_AVAIL, _SIZE]
            values += [free, total]
        for d in self.damage:
            labels += [Labels.of(catalog.STORE_CORRUPTIONS_TOTAL.name, file=d.file),
                       Labels.of(catalog.STORE_LOST_SERIES.name, file=d.file)]
            values += [float(sum(x.file == d.file for x in self.damage)), float(d.lost_series)]
        try:
            append_columns(self.store, labels, [now] * len(labels), values)
        except InferwatchError:
            hold_samples(self.store, labels, [now] * len(labels), values)
