"""The shared multiprocess file, opened so that nothing it does can stop the app.

A model server must keep serving whatever happens to ``INFERWATCH_MULTIPROC_DIR``:
a damaged or truncated file, junk beside it, a read-only directory, a full
disk. :class:`SharedFile` hands out the SQLite connection and, on a failure:

- counts it (``errors``, rendered as ``inferwatch_sdk_errors_total{kind="multiprocess"}``)
  and logs it once (the first failure of a run of failures at ERROR, then at DEBUG
  until the file works again, when one INFO line says so);
- drops the connection, so the monitor serves this worker's own metrics, and
  tries again after ``retry_s``;
- repairs what it can: a file SQLite says is not a database or is malformed is
  moved aside (``inferwatch-multiproc.sqlite.corrupt-<time>-<pid>``, with its
  ``-wal`` and ``-shm``) and a new one started. Only the very file found
  corrupt is moved (same inode), so a worker never moves aside the fresh file
  another worker has just started.

A worker whose file was replaced under it (moved aside by another worker) notices
it at its next look (the path's inode changed) and moves to the new file.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["SharedFile", "Unavailable", "is_corrupt"]

log = logging.getLogger("inferwatch.sdk")

RETRY_S = 5.0
"""How long a worker serves its own metrics before trying a failed file again."""

_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB (primary codes)
_SHORT_READ = 522  # SQLITE_IOERR_SHORT_READ: the file is shorter than its header says (truncated)
_CORRUPT_WORDS = ("file is not a database", "malformed", "database disk image")


class Unavailable(sqlite3.Error):
    """The shared file is not open now (a recent failure); the caller serves local metrics."""


def is_corrupt(exc: BaseException) -> bool:
    """Whether ``exc`` says the file's content is damaged (then moving it aside repairs it)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and (code & 0xFF in _CORRUPT_CODES or code == _SHORT_READ):
        return True
    return isinstance(exc, sqlite3.DatabaseError) and any(w in str(exc) for w in _CORRUPT_WORDS)


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


class SharedFile:
    """The connection to the shared file, reopened and repaired after failures; never raises on open."""

    def __init__(
        self,
        path: Path,
        connect: Callable[[Path], sqlite3.Connection],
        *,
        retry_s: float = RETRY_S,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self.errors = 0
        """Failures of the shared file so far (each open, publish or read that failed)."""
        self.generation = 0
        """Bumped at each (re)open: the caller's rows in an older file are gone."""
        self._connect, self._retry_s, self._mono = connect, retry_s, monotonic
        self._db: sqlite3.Connection | None = None
        self._inode: tuple[int, int] | None = None
        self._next_try = 0.0
        self._failing = False
        self._open()

    @property
    def is_open(self) -> bool:
        """Whether a connection is held now."""
        return self._db is not None

    def db(self) -> sqlite3.Connection:
        """The open connection; raises :class:`Unavailable` while the file is failing."""
        # a stat (about a microsecond) per use: a file moved aside by another worker is left at once
        if self._db is not None and _inode(self.path) != self._inode:
            log.info("inferwatch sdk: %s was replaced or removed; opening it again", self.path)
            self._close()
        if self._db is None:
            if self._mono() < self._next_try:
                raise Unavailable(f"{self.path} unavailable after an earlier failure")
            self._open()
            if self._db is None:
                raise Unavailable(f"{self.path} unavailable")
        return self._db

    def failed(self, exc: BaseException, doing: str) -> None:
        """Record a failure while ``doing``: count, log once, drop the connection, repair if corrupt."""
        if isinstance(exc, Unavailable):
            return  # not a new failure: the file is already known to be failing
        self._note(exc, doing)
        self._close()
        self._next_try = self._mono() + self._retry_s
        if is_corrupt(exc) and self._move_aside(exc, self._inode):
            self._open()  # a new file in place of the damaged one

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self._close()

    # --- internals ------------------------------------------------------------------------------
    def _open(self) -> None:
        for attempt in (1, 2):
            seen = _inode(self.path)
            try:
                db = self._connect(self.path)
            except (sqlite3.Error, OSError) as exc:
                self._note(exc, "opening")
                if attempt == 1 and is_corrupt(exc) and self._move_aside(exc, seen):
                    continue  # a new file in place of the damaged one
                self._next_try = self._mono() + self._retry_s
                return
            self._db, self._inode = db, _inode(self.path)
            self.generation += 1
            if self._failing:
                log.info("inferwatch sdk: %s works again; sharing metrics with the other workers", self.path)
            self._failing = False
            return

    def _move_aside(self, exc: BaseException, seen: tuple[int, int] | None) -> bool:
        """Rename the damaged file (and its -wal, -shm) out of the way; whether the path is free now.

        ``seen`` is the file that was found damaged: if the path names another one now, another
        worker has repaired it already and the new file is left alone.
        """
        if seen is None or _inode(self.path) != seen:
            return True
        aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}-{os.getpid()}")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return True
        except OSError as err:
            log.error("inferwatch sdk: cannot move the damaged %s aside: %s", self.path, err)
            return False
        for suffix in ("-wal", "-shm"):
            with contextlib.suppress(OSError):  # absent: fine
                os.rename(f"{self.path}{suffix}", f"{aside}{suffix}")
        log.error("inferwatch sdk: %s was damaged (%s); moved it to %s and started a new one",
                  self.path, exc, aside.name)
        return True

    def _note(self, exc: BaseException, doing: str) -> None:
        self.errors += 1
        if self._failing:
            log.debug("inferwatch sdk: %s %s failed again: %s", doing, self.path, exc)
            return
        self._failing = True
        log.error("inferwatch sdk: %s %s failed (%s: %s); serving this worker's metrics only until "
                  "it works again", doing, self.path, type(exc).__name__, exc)

    def _close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()
