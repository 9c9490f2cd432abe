"""``file_sd_configs``: target groups read from files, re-read when they change and on an interval.

Like Prometheus's file discovery: the patterns are globbed on each read; each
file's groups get ``__meta_filepath``; a file that cannot be read or parsed
keeps its last good groups (and says why); a file that is gone takes its
groups with it. Changes are noticed by looking at the files' size and
modification time every ``WATCH_S`` (no inotify: it works on every filesystem).
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from inferwatch.config import FileSDConfig
from inferwatch.server.ingest.discovery._groups import DiscoveryError, TargetGroup, parse_groups

__all__ = ["WATCH_S", "FileSource"]

WATCH_S = 1.0
"""How often the files' size and modification time are looked at."""


class FileSource:
    """One ``file_sd_configs`` entry."""

    mechanism = "file"

    def __init__(self, cfg: FileSDConfig) -> None:
        self.cfg = cfg
        self._groups: dict[str, list[TargetGroup]] = {}  # the last good groups of each file
        self._seen: tuple[tuple[str, int, int], ...] | None = None
        self._next_full: float | None = None
        self.error = ""

    def _files(self) -> list[str]:
        found: set[str] = set()
        for pattern in self.cfg.files:
            found.update(glob.glob(pattern))
        return sorted(found)

    @staticmethod
    def _signature(files: list[str]) -> tuple[tuple[str, int, int], ...]:
        out = []
        for f in files:
            try:
                st = os.stat(f)
            except OSError:
                continue
            out.append((f, st.st_mtime_ns, st.st_size))
        return tuple(out)

    def poll(self, mono: float) -> list[TargetGroup] | None:
        """The groups when something changed (or the refresh interval passed), else ``None``."""
        files = self._files()
        signature = self._signature(files)
        due = self._next_full is None or mono >= self._next_full
        if signature == self._seen and not due:
            return None
        self._seen = signature
        if due:
            self._next_full = mono + self.cfg.refresh_interval
        return self.read(files)

    def read(self, files: list[str] | None = None) -> list[TargetGroup]:
        """Read every file now: the groups of all, the last good ones for a file that fails."""
        errors = []
        groups: dict[str, list[TargetGroup]] = {}
        for f in self._files() if files is None else files:
            try:
                text = Path(f).read_text("utf-8")
                groups[f] = parse_groups(text, yaml_format=not f.lower().endswith(".json"), where=f,
                                         meta={"__meta_filepath": f})
            except (OSError, UnicodeDecodeError, DiscoveryError) as exc:
                errors.append(str(exc) if isinstance(exc, DiscoveryError) else f"{f}: {exc}")
                if f in self._groups:
                    groups[f] = self._groups[f]
        self._groups = groups
        self.error = "; ".join(errors)
        return [g for f in sorted(groups) for g in groups[f]]

    def wait_s(self, mono: float) -> float:
        """Seconds until the next look."""
        return WATCH_S
