"""Choosing and opening the store a config asks for."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from inferwatch.model import Clock
from inferwatch.store._memory import MemoryStore
from inferwatch.store._protocol import Store
from inferwatch.store._sqlite import SQLiteStore

__all__ = ["TSDB_FILE", "StorageSettings", "open_store"]

TSDB_FILE = "tsdb.sqlite"


class StorageSettings(Protocol):
    """What ``open_store`` reads of the ``storage:`` config (``inferwatch.settings.StorageConfig``)."""

    @property
    def type(self) -> str:
        """``sqlite`` or ``memory``."""
        ...

    @property
    def retention(self) -> float:
        """Seconds of samples kept."""
        ...

    @property
    def head_window(self) -> float:
        """Seconds of recent samples held in memory."""
        ...


def open_store(config: StorageSettings, data_dir: str | Path, *, clock: Clock | None = None) -> Store:
    """Open the configured store: ``sqlite`` (``<data_dir>/tsdb.sqlite``) or ``memory``."""
    if config.type == "memory":
        return MemoryStore()
    return SQLiteStore(Path(data_dir) / TSDB_FILE, clock=clock, retention=config.retention,
                       head_window=config.head_window, background_checkpoints=True)
