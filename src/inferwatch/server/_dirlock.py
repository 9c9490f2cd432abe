"""One server per data directory: an exclusive ``fcntl`` lock on ``data_dir/LOCK`` for the process's life.

Two servers on one directory would both escalate, both page and both write the
same SQLite files. The lock is the kernel's: it dies with its process, so a
server killed with ``kill -9`` leaves nothing to clean up, and the next start
takes the directory over. The file holds the holder's pid, for the message a
second start prints.

>>> import tempfile
>>> d = Path(tempfile.mkdtemp())
>>> with DataDirLock.acquire(d) as held:
...     held.path.name
'LOCK'
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from inferwatch._exceptions import ConfigError

__all__ = ["LOCK_FILE", "DataDirLock", "DataDirLocked"]

LOCK_FILE = "LOCK"


class DataDirLocked(ConfigError):
    """Another live process holds the data directory."""


class DataDirLock:
    """The held lock (``release`` or the process's end lets it go)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path, self._fd = path, fd

    @classmethod
    def acquire(cls, data_dir: Path) -> DataDirLock:
        """Take the directory (``DataDirLocked`` naming the holder's pid when another process has it)."""
        data_dir.mkdir(parents=True, exist_ok=True)
        path = data_dir / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise DataDirLocked(
                f"data directory {data_dir} is in use by another inferwatch server (pid {holder}); stop it, "
                "or give this one its own server.data_dir") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(path, fd)

    def release(self) -> None:
        """Let the directory go (idempotent)."""
        if self._fd >= 0:
            os.close(self._fd)  # closing drops the lock; the file stays for the next holder
            self._fd = -1

    def __enter__(self) -> DataDirLock:
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
