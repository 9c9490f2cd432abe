"""The YAML reader of configs: safe, refusing duplicate keys and nesting deeper than any config needs.

PyYAML keeps the last of two equal keys silently and composes nested nodes
recursively (a 500-deep document ends in ``RecursionError``); both are
refused here with the line and column.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node

__all__ = ["MAX_YAML_DEPTH", "safe_load_strict"]

MAX_YAML_DEPTH = 64


class _StrictLoader(yaml.SafeLoader):
    _depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise ComposerError(None, None, f"nested more than {MAX_YAML_DEPTH} levels deep", mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:
                continue  # an unhashable key: the base class reports it
            if duplicate:
                raise ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def safe_load_strict(text: str) -> Any:
    """``yaml.safe_load`` refusing duplicate keys and deep nesting (``yaml.YAMLError``)."""
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except RecursionError:
        raise yaml.YAMLError(f"nested too deeply (more than {MAX_YAML_DEPTH} levels)") from None
