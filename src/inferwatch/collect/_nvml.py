"""NVML access: the pynvml constants inferwatch uses, the optional import, and reason codes."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

__all__ = ["CLOCK_EVENT_REASONS", "NvmlLoad", "load_nvml"]

_log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'inferwatch[gpu]' (nvidia-ml-py)"

# pynvml's constant values (NVML's C enums), so a fake needs no pynvml.
PCIE_UTIL_TX_BYTES, PCIE_UTIL_RX_BYTES = 0, 1
CLOCK_SM, CLOCK_MEM = 1, 2
TEMPERATURE_GPU = 0
EVENT_TYPE_XID_CRITICAL_ERROR = 8
ERROR_NOT_SUPPORTED, ERROR_TIMEOUT, ERROR_LIBRARY_NOT_FOUND = 3, 10, 12

# Clock event (throttle) reason bits and DCGM's names for them
# (dcgm-exporter clock_events_collector.go, NVML nvmlClocksEventReason*).
CLOCK_EVENT_REASONS: dict[int, str] = {
    0x001: "gpu_idle",
    0x002: "clocks_setting",
    0x004: "power_cap",
    0x008: "hw_slowdown",
    0x010: "sync_boost",
    0x020: "sw_thermal",
    0x040: "hw_thermal",
    0x080: "hw_power_brake",
    0x100: "display_clocks",
}


@dataclass(frozen=True)
class NvmlLoad:
    """The NVML binding if importable (``api``), else ``None`` and why (``reason``)."""

    api: Any
    reason: str = ""


def load_nvml() -> NvmlLoad:
    """Import pynvml (from nvidia-ml-py) behind a guard; never raises."""
    try:
        import pynvml
    except ImportError:
        return NvmlLoad(None, "no_pynvml")
    return NvmlLoad(pynvml)
