"""Where a value sits in a YAML file: errors about a team's own files name the file, the line and the key."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from inferwatch._exceptions import ConfigError

__all__ = ["At", "load_located"]


def load_located(path: Path, what: str) -> tuple[Any, At]:
    """The YAML of ``path`` and the place of its top level; unreadable or invalid YAML raises."""
    try:
        text = path.read_text("utf-8")
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except FileNotFoundError:
        raise ConfigError(f"{path}: {what} not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read {what}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{where}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    return data, At(path, node, "")


@dataclass(frozen=True)
class At:
    """A node of a YAML file, and the key path that led to it (``route.routes[1]``)."""

    path: Path
    node: yaml.Node | None
    where: str

    @property
    def line(self) -> int:
        """Its line (1-based; 0 when unknown)."""
        return self.node.start_mark.line + 1 if self.node is not None else 0

    def key(self, name: str) -> At:
        """The value under ``name`` of this mapping."""
        found = None
        if isinstance(self.node, yaml.MappingNode):
            found = next((v for k, v in self.node.value if k.value == name), None)
        return At(self.path, found, f"{self.where}.{name}" if self.where else name)

    def key_line(self, name: str) -> int:
        """The line of key ``name`` of this mapping (this node's line when absent)."""
        if isinstance(self.node, yaml.MappingNode):
            for k, _ in self.node.value:
                if k.value == name:
                    return int(k.start_mark.line) + 1
        return self.line

    def item(self, i: int) -> At:
        """Item ``i`` of this sequence."""
        found = None
        if isinstance(self.node, yaml.SequenceNode) and i < len(self.node.value):
            found = self.node.value[i]
        return At(self.path, found, f"{self.where}[{i}]")

    def error(self, message: str, key: str | None = None) -> ConfigError:
        """``file:line: where.key: message``."""
        where = f"{self.where}.{key}" if key and self.where else (key or self.where)
        line = self.key_line(key) if key else self.line
        return ConfigError(f"{self.path}:{line}: {where}: {message}")

    def mapping(self, value: Any) -> dict[str, Any]:
        """``value`` if it is a mapping (empty for null), else an error here."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error("must be a mapping")
        return value

    def sequence(self, value: Any) -> list[Any]:
        """``value`` if it is a list (empty for null), else an error here."""
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error("must be a list")
        return value
