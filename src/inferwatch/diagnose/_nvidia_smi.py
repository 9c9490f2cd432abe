"""Reading ``nvidia-smi -q`` and ``nvidia-smi topo -m`` output."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PcieLink", "parse_pcie_query", "topology_crossings"]

_GPU_RE = re.compile(r"^GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
_KV_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 ]*?)\s*:\s*(\S.*?)\s*$")


@dataclass(frozen=True)
class PcieLink:
    """One GPU's link generation and width, current and maximum (None where not printed)."""

    pci_bus_id: str
    gen: int | None = None
    max_gen: int | None = None
    width: int | None = None
    max_width: int | None = None


def _int(text: str) -> int | None:
    m = re.match(r"(\d+)", text)
    return int(m.group(1)) if m else None


def parse_pcie_query(text: str) -> list[PcieLink]:
    """Per-GPU links from ``nvidia-smi -q`` (its "GPU Link Info": "PCIe Generation" and "Link Width").

    >>> out = "GPU 00000000:3B:00.0\\n  PCIe Generation\\n    Max : 4\\n    Current : 3\\n"
    >>> parse_pcie_query(out + "  Link Width\\n    Max : 16x\\n    Current : 8x\\n")
    [PcieLink(pci_bus_id='00000000:3B:00.0', gen=3, max_gen=4, width=8, max_width=16)]
    """
    links: list[PcieLink] = []
    bus, section, fields = "", "", {}  # type: tuple[str, str, dict[str, int | None]]
    for raw in text.splitlines():
        line = raw.strip()
        gm = _GPU_RE.match(line)
        if gm:
            if bus:
                links.append(PcieLink(bus, **fields))
            bus, section, fields = gm.group(1), "", {}
            continue
        kv = _KV_RE.match(raw)
        if kv is None:
            section = line
            continue
        key = kv.group(1)
        if key not in ("Max", "Current"):
            continue
        prefix = {"PCIe Generation": "gen", "Link Width": "width"}.get(section)
        if prefix:
            fields[prefix if key == "Current" else f"max_{prefix}"] = _int(kv.group(2))
    if bus:
        links.append(PcieLink(bus, **fields))
    return links


def topology_crossings(text: str) -> list[str]:
    """GPU rows of ``nvidia-smi topo -m`` with paths across sockets (``SYS``) or host bridges (``NODE``).

    >>> topology_crossings("\\tGPU0\\tGPU1\\nGPU0\\t X \\tSYS\\nGPU1\\tSYS\\t X \\n")
    ['GPU0: SYS', 'GPU1: SYS']
    """
    out = []
    for line in text.splitlines():
        cells = line.split()
        if not cells or not re.fullmatch(r"GPU\d+", cells[0]):
            continue
        bad = sorted({c for c in cells[1:] if c in ("SYS", "NODE")})
        if bad:
            out.append(f"{cells[0]}: {', '.join(bad)}")
    return out
