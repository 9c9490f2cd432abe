"""Choosing and opening the store a config asks for."""

from __future__ import annotations

from pathlib import Path

from inferwatch.config import StorageConfig
from inferwatch.model import Clock
from inferwatch.store._memory import MemoryStore
from inferwatch.store._protocol import Store
from inferwatch.store._sqlite import SQLiteStore

__all__ = ["TSDB_FILE", "open_store"]

TSDB_FILE = "tsdb.sqlite"


def open_store(config: StorageConfig, data_dir: str | Path, *, clock: Clock | None = None) -> Store:
    """Open the configured store: ``sqlite`` (``<data_dir>/tsdb.sqlite``) or ``memory``."""
    if config.type == "memory":
        return MemoryStore()
    return SQLiteStore(Path(data_dir) / TSDB_FILE, clock=clock, retention=config.retention,
                       head_window=config.head_window, background_checkpoints=True)
