"""Backups of a data directory: every SQLite file through SQLite's online backup API.

The backup API copies a file page by page inside a read transaction, so the copy is
one consistent state of the file even while ``serve`` writes to it (WAL mode lets
the writer go on meanwhile). Small plain files (the API token, the ack key) are
copied as they are; the data directory's lock and SQLite's ``-wal``/``-shm`` side
files are not (the backup of a file includes what its WAL holds).

Restore: stop the server, put the backup's files in an empty data directory, start.
"""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from inferwatch._exceptions import InputError, StoreError

__all__ = ["BackedUp", "backup_data_dir", "backup_file"]

_SKIP_SUFFIXES = ("-wal", "-shm", "-journal")
_SKIP_NAMES = {"LOCK"}
SQLITE_MAGIC = b"SQLite format 3\0"


@dataclass(frozen=True)
class BackedUp:
    """One file of a backup: its name, its size in bytes, and whether it went through SQLite."""

    name: str
    bytes: int
    sqlite: bool


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` starts with SQLite's header."""
    try:
        with path.open("rb") as f:
            return f.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def backup_file(src: Path, dst: Path) -> int:
    """Copy the SQLite file ``src`` to ``dst`` (consistent while another process writes it); its bytes."""
    try:
        source = sqlite3.connect(f"{src.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {src} to back it up: {exc}") from exc
    try:
        target = sqlite3.connect(dst)
        try:
            source.backup(target, pages=4096)  # in steps: a writer waits at most one step
            target.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal beside it
        finally:
            target.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot back up {src} to {dst}: {exc}") from exc
    finally:
        source.close()
    return dst.stat().st_size


def backup_data_dir(data_dir: Path, out: Path) -> list[BackedUp]:
    """Back up every file of ``data_dir`` into the new (or empty) directory ``out``."""
    if not data_dir.is_dir():
        raise InputError(f"no data directory at {data_dir}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(f"{out}: the backup directory must be new or empty (nothing is overwritten)")
    if out.resolve() == data_dir.resolve() or data_dir.resolve() in out.resolve().parents:
        raise InputError(f"{out}: a backup inside the data directory it backs up would be backed up too")
    out.mkdir(parents=True, exist_ok=True)
    done = []
    for path in sorted(data_dir.iterdir()):
        if not path.is_file() or path.name in _SKIP_NAMES or path.name.endswith(_SKIP_SUFFIXES):
            continue
        if is_sqlite(path):
            done.append(BackedUp(path.name, backup_file(path, out / path.name), True))
        else:
            shutil.copy2(path, out / path.name)  # keeps the mode: the token stays owner-only
            done.append(BackedUp(path.name, path.stat().st_size, False))
    return done
