"""What an export produces: files with a relative path, their text and whether they hold secrets."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from inferwatch._exceptions import InputError

__all__ = ["ExportedFile", "dump_json", "dump_yaml", "write_files"]


@dataclass(frozen=True, slots=True)
class ExportedFile:
    """One file of an export; ``secret`` files are written with mode 0600."""

    path: str
    text: str
    purpose: str
    secret: bool = False

    def __post_init__(self) -> None:
        p = PurePosixPath(self.path)
        if p.is_absolute() or ".." in p.parts:
            raise ValueError(f"export path {self.path!r} must stay inside the output directory")


def dump_yaml(obj: Any) -> str:
    """Block-style YAML in the key order given (what the engines' own examples look like).

    A string of several lines (a rule's expression as Sloth writes it) is a literal block (``|``).
    """
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
        multi = "\n" in data and not any(line != line.rstrip() for line in data.split("\n"))
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if multi else None)

    _Dumper.add_representer(str, _str)
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1000)


def dump_json(obj: Any) -> str:
    """Indented JSON with a final newline."""
    return json.dumps(obj, indent=2, allow_nan=False) + "\n"


def write_files(files: Iterable[ExportedFile], out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``files`` under ``out_dir`` (created); ``InputError`` naming the path on failure."""
    root = Path(out_dir)
    written: list[Path] = []
    for f in files:
        target = root / f.path
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f.text, encoding="utf-8")
            target.chmod(0o600 if f.secret else 0o644)
        except OSError as exc:
            raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
        written.append(target)
    return written
