"""Target groups: what every discovery mechanism yields, and Prometheus's file and HTTP SD format.

A group is a list of ``host:port`` targets and the labels they share. The
format (``[{"targets": [...], "labels": {...}}]``, in JSON or YAML) is the one
Prometheus's ``file_sd_configs`` and ``http_sd_configs`` read; a file that does
not parse is refused whole, with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from inferwatch._exceptions import InferwatchError
from inferwatch.model import is_valid_label_name

__all__ = ["DiscoveryError", "TargetGroup", "flatten", "parse_groups"]


class DiscoveryError(InferwatchError):
    """A discovery source could not be read (its last good targets are kept)."""


@dataclass(frozen=True)
class TargetGroup:
    """Targets sharing labels; ``source`` names where the group came from (``path:index``)."""

    source: str
    targets: tuple[str, ...]
    labels: dict[str, str] = field(default_factory=dict)
    meta: tuple[dict[str, str], ...] = ()
    """Labels of each target (same order as ``targets``) where a mechanism has some (DNS's records)."""


def _group(raw: Any, source: str, meta: dict[str, str]) -> TargetGroup:
    if not isinstance(raw, dict):
        raise DiscoveryError(f"{source}: a target group is a mapping with 'targets' and 'labels', "
                             f"got {str(raw)[:60]!r}")
    targets, labels = raw.get("targets") or [], raw.get("labels") or {}
    if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
        raise DiscoveryError(f"{source}: 'targets' must be a list of strings")
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise DiscoveryError(f"{source}: 'labels' must map label names to strings")
    for name in labels:
        if not isinstance(name, str) or not is_valid_label_name(name):
            raise DiscoveryError(f"{source}: {name!r} is not a valid label name")
    return TargetGroup(source, tuple(targets), {**labels, **meta})


def parse_groups(text: str, *, yaml_format: bool, where: str, meta: dict[str, str]) -> list[TargetGroup]:
    """The groups in ``text`` (JSON, or YAML when ``yaml_format``); ``meta`` labels added to each group.

    >>> g = parse_groups('[{"targets": ["a:1"], "labels": {"env": "x"}}]', yaml_format=False,
    ...                  where="f.json", meta={"__meta_filepath": "f.json"})
    >>> g[0].source, g[0].targets, g[0].labels["env"]
    ('f.json:0', ('a:1',), 'x')
    """
    try:
        if yaml_format:
            raw = yaml.safe_load(text)
            if raw is None:
                raw = []
            if isinstance(raw, list):  # YAML is read strictly, as Prometheus does: no unknown keys
                for g in raw:
                    extra = set(g) - {"targets", "labels"} if isinstance(g, dict) else set()
                    if extra:
                        names = ", ".join(sorted(map(str, extra)))
                        raise DiscoveryError(f"{where}: unknown field(s) {names}")
        else:
            raw = json.loads(text)
    except (ValueError, yaml.YAMLError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DiscoveryError(f"{where}: not valid {'YAML' if yaml_format else 'JSON'}: {first}") from None
    if not isinstance(raw, list):
        raise DiscoveryError(f"{where}: a list of target groups was expected")
    return [_group(g, f"{where}:{i}", meta) for i, g in enumerate(raw)]


def flatten(groups: Sequence[TargetGroup]) -> list[dict[str, str]]:
    """One label set per target: the group's labels, the target's own, and its ``__address__``."""
    return [{**g.labels, **(g.meta[i] if g.meta else {}), "__address__": t}
            for g in groups for i, t in enumerate(g.targets)]
