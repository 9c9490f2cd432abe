"""Where ONNX Runtime placed a session's graph nodes: by execution provider, from two sources.

* ``get_provider_graph_assignment_info()`` (ONNX Runtime 1.23+, with the session config entry
  ``session.record_ep_graph_assignment_info=1``, which ``onnx_session`` sets): known at load time.
* The profile (``SessionOptions.enable_profiling``): every ``Node`` event of the Chrome-trace JSON
  that ``end_profiling()`` writes carries ``args.provider`` and ``args.op_name``.

ONNX Runtime places shape computations on the CPU on purpose, even under CUDA; a node list is
evidence to read, not a fault by itself (the rule pages on the session's provider).
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

from inferwatch.model import metrics as catalog

__all__ = ["ACCELERATOR_PROVIDERS", "CPU", "MAX_NODES_NAMED", "Placement", "from_assignment", "from_profile"]

log = logging.getLogger("inferwatch.sdk")

CPU = catalog.CPU_PROVIDER
ACCELERATOR_PROVIDERS = catalog.ACCELERATOR_PROVIDERS
MAX_NODES_NAMED = 8
"""Nodes named in ``cpu_nodes`` (more are summed up as ``+N more``): a label stays short."""


@dataclass(frozen=True)
class Placement:
    """Graph nodes by provider: ``nodes`` is ``((provider, node name), ...)`` in graph order."""

    nodes: tuple[tuple[str, str], ...]

    def counts(self) -> list[tuple[str, int]]:
        """Nodes per provider, by provider name."""
        return sorted(Counter(p for p, _ in self.nodes).items())

    def cpu_nodes(self) -> str:
        """The nodes on the CPU, comma-separated, the first ``MAX_NODES_NAMED`` named."""
        names = [n for p, n in self.nodes if p == CPU]
        shown = ",".join(names[:MAX_NODES_NAMED])
        more = len(names) - MAX_NODES_NAMED
        return f"{shown},+{more} more" if more > 0 else shown


def from_assignment(session: Any) -> Placement | None:
    """The placement ONNX Runtime recorded at load time (None when it was not asked to)."""
    try:
        subgraphs = session.get_provider_graph_assignment_info()
    except Exception:  # not recorded for this session, or an ONNX Runtime without the API
        return None
    nodes: list[tuple[str, str]] = []
    try:
        for sub in subgraphs:
            for node in sub.get_nodes():
                nodes.append((str(sub.ep_name), str(node.name) or f"{node.op_type}_{len(nodes)}"))
    except Exception:
        log.warning("inferwatch onnx: could not read the session's graph assignment", exc_info=True)
        return None
    return Placement(tuple(nodes)) if nodes else None


def from_profile(path: str) -> Placement | None:
    """The placement of the nodes a profile saw run (the first event of each node)."""
    import json  # a profile is read rarely (end_profiling): not on the SDK's import

    try:
        with open(path, encoding="utf-8") as f:
            events = json.load(f)
    except (OSError, ValueError) as exc:
        log.warning("inferwatch onnx: could not read the profile %s: %s", path, exc)
        return None
    seen: dict[str, str] = {}
    for event in events if isinstance(events, list) else ():
        if not isinstance(event, dict) or event.get("cat") != "Node":
            continue
        args, name = event.get("args"), str(event.get("name", ""))
        if isinstance(args, dict) and "provider" in args and name.endswith("_kernel_time"):
            seen.setdefault(name[: -len("_kernel_time")], str(args["provider"]))
    return Placement(tuple((p, n) for n, p in seen.items())) if seen else None
