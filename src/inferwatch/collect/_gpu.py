"""GPU metrics from NVML under the DCGM exporter's names and labels."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inferwatch.collect import _nvml as c
from inferwatch.collect._base import sample
from inferwatch.collect._gpm import GpmReader
from inferwatch.model import MetricSpec, Sample
from inferwatch.model import metrics as m

__all__ = ["GpuCollector"]

_log = logging.getLogger(__name__)
_MIB = 1024 * 1024
_XID_DRAIN_MAX = 64  # events read per GPU per collection, so a storm cannot stall a scrape


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass
class _Device:
    handle: Any
    labels: dict[str, str]
    events: Any = None
    gpm: GpmReader | None = None
    last_xid: int = 0
    xid_total: int = 0


class GpuCollector:
    """Per-GPU utilisation, memory, PCIe, clocks, throttle reasons, temperature, power, XIDs and GPM.

    Where the GPU has GPM (Hopper and later), DCGM's profiling ratios (SM active,
    occupancy, tensor/fp pipes, DRAM, graphics engine) and PCIe/NVLink rates
    come from it, averaged between collections; elsewhere they are absent.

    ``nvml`` is pynvml (loaded behind a guard when not given) or a
    :class:`~inferwatch.collect.FakeNVML`. Without the binding, the library
    or a GPU, the collector reports ``inferwatch_gpu_collector_up{reason=...} 0``,
    logs that once, and collects nothing else.

    >>> from inferwatch.collect import FakeGPU, FakeNVML
    >>> gpu = GpuCollector(nvml=FakeNVML([FakeGPU(util_gpu=87)]), hostname="node1")
    >>> [s.v for s in gpu.collect(now=1.0) if s.labels.name == "DCGM_FI_DEV_GPU_UTIL"]
    [87.0]
    >>> GpuCollector(nvml=FakeNVML.without_library()).collect(now=1.0)[0].labels["reason"]
    'no_nvml_library'
    """

    name = "gpu"

    def __init__(self, *, nvml: Any = None, hostname: str | None = None) -> None:
        self._nvml = nvml
        self._hostname = socket.gethostname() if hostname is None else hostname
        self._devices: list[_Device] | None = None
        self.reason = ""  # why the collector is down; "" while it is up
        self._unsupported: set[tuple[int, str, tuple[Any, ...]]] = set()

    @property
    def up(self) -> bool:
        """Whether NVML is read (starts it on first use)."""
        self._start()
        return not self.reason

    def _down(self, reason: str, detail: str) -> None:
        self.reason = reason
        self._devices = []
        _log.warning("GPU collector off (%s): %s; host metrics continue", reason, detail)

    def _start(self) -> None:
        if self._devices is not None:
            return
        if self._nvml is None:
            loaded = c.load_nvml()
            if loaded.api is None:
                self._down(loaded.reason, f"nvidia-ml-py is not installed; {c.INSTALL_HINT}")
                return
            self._nvml = loaded.api
        nv = self._nvml
        try:
            nv.nvmlInit()
            count = nv.nvmlDeviceGetCount()
            self._devices = [self._open(i) for i in range(count)]
        except nv.NVMLError as exc:
            if getattr(exc, "value", None) == c.ERROR_LIBRARY_NOT_FOUND:
                self._down("no_nvml_library", "libnvidia-ml.so not found (no NVIDIA driver)")
            else:
                self._down("nvml_init_failed", f"NVML failed to start: {exc}")
            return
        if not self._devices:
            self._down("no_gpu", "NVML found no GPU")

    def _open(self, index: int) -> _Device:
        nv = self._nvml
        h = nv.nvmlDeviceGetHandleByIndex(index)
        minor = self._try(index, nv.nvmlDeviceGetMinorNumber, h)
        labels = {
            "gpu": str(index),
            "UUID": _text(nv.nvmlDeviceGetUUID(h)),
            "pci_bus_id": _text(nv.nvmlDeviceGetPciInfo(h).busId),
            "device": f"nvidia{int(minor) if minor is not None else index}",
            "modelName": _text(nv.nvmlDeviceGetName(h)),
            "Hostname": self._hostname,
        }
        dev = _Device(h, labels)
        try:
            dev.events = nv.nvmlEventSetCreate()
            nv.nvmlDeviceRegisterEvents(h, c.EVENT_TYPE_XID_CRITICAL_ERROR, dev.events)
        except nv.NVMLError:
            dev.events = None  # XIDs are not reported for this GPU (e.g. inside some VMs)
        gpm = GpmReader(nv, h)
        dev.gpm = gpm if gpm.supported else None  # no GPM: the profiling series are simply absent
        return dev

    @property
    def gpm_gpus(self) -> int:
        """How many GPUs report GPM profiling metrics (DCGM_FI_PROF_*)."""
        self._start()
        return sum(1 for d in self._devices or [] if d.gpm is not None)

    def _try(self, index: int, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``, or ``None`` when NVML refuses; NOT_SUPPORTED is remembered and not retried."""
        key = (index, getattr(fn, "__name__", repr(fn)), args[1:])
        if key in self._unsupported:
            return None
        try:
            return fn(*args)
        except self._nvml.NVMLError as exc:
            if getattr(exc, "value", None) == c.ERROR_NOT_SUPPORTED:
                self._unsupported.add(key)
            _log.debug("NVML %s on GPU %d failed: %s", key[1], index, exc)
            return None

    def collect(self, now: float) -> list[Sample]:
        """One reading of every GPU; what a GPU does not support is left out."""
        self._start()
        if self.reason:
            return [sample(m.GPU_COLLECTOR_UP, now, 0, {"reason": self.reason})]
        out = [sample(m.GPU_COLLECTOR_UP, now, 1, {"reason": ""})]
        for index, dev in enumerate(self._devices or []):
            try:
                out.extend(self._read(index, dev, now))
            except Exception:
                _log.warning("GPU collector: reading GPU %d failed", index, exc_info=True)
        return out

    def _read(self, i: int, dev: _Device, now: float) -> list[Sample]:
        nv, h, out = self._nvml, dev.handle, []

        def put(spec: MetricSpec, value: Any, scale: float = 1.0) -> None:
            if value is not None:
                out.append(sample(spec, now, float(value) * scale, dev.labels))

        util = self._try(i, nv.nvmlDeviceGetUtilizationRates, h)
        put(m.DCGM_GPU_UTIL, None if util is None else util.gpu)
        put(m.DCGM_MEM_COPY_UTIL, None if util is None else util.memory)
        mem = self._try(i, nv.nvmlDeviceGetMemoryInfo, h)
        if mem is not None:
            put(m.DCGM_FB_USED, mem.used // _MIB)
            put(m.DCGM_FB_FREE, mem.free // _MIB)
            put(m.DCGM_FB_TOTAL, mem.total // _MIB)
        if dev.gpm is not None:
            for spec, value in dev.gpm.read():
                put(spec, value)
        if dev.gpm is None or not dev.gpm.has_pcie:
            # NVML reports KB/s over a 20 ms sample (the call waits for it); DCGM's PROF fields are B/s.
            put(m.DCGM_PCIE_TX, self._try(i, nv.nvmlDeviceGetPcieThroughput, h, c.PCIE_UTIL_TX_BYTES), 1024)
            put(m.DCGM_PCIE_RX, self._try(i, nv.nvmlDeviceGetPcieThroughput, h, c.PCIE_UTIL_RX_BYTES), 1024)
        put(m.DCGM_PCIE_LINK_GEN, self._try(i, nv.nvmlDeviceGetCurrPcieLinkGeneration, h))
        put(m.DCGM_PCIE_MAX_LINK_GEN, self._try(i, nv.nvmlDeviceGetMaxPcieLinkGeneration, h))
        put(m.DCGM_PCIE_LINK_WIDTH, self._try(i, nv.nvmlDeviceGetCurrPcieLinkWidth, h))
        put(m.DCGM_PCIE_MAX_LINK_WIDTH, self._try(i, nv.nvmlDeviceGetMaxPcieLinkWidth, h))
        put(m.DCGM_PCIE_REPLAY, self._try(i, nv.nvmlDeviceGetPcieReplayCounter, h))
        put(m.DCGM_SM_CLOCK, self._try(i, nv.nvmlDeviceGetClockInfo, h, c.CLOCK_SM))
        put(m.DCGM_MEM_CLOCK, self._try(i, nv.nvmlDeviceGetClockInfo, h, c.CLOCK_MEM))
        out.extend(self._clock_events(i, dev, now))
        put(m.DCGM_GPU_TEMP, self._try(i, nv.nvmlDeviceGetTemperature, h, c.TEMPERATURE_GPU))
        put(m.DCGM_POWER_USAGE, self._try(i, nv.nvmlDeviceGetPowerUsage, h), 1e-3)
        put(m.DCGM_POWER_LIMIT, self._try(i, nv.nvmlDeviceGetEnforcedPowerLimit, h), 1e-3)
        put(m.DCGM_ENERGY, self._try(i, nv.nvmlDeviceGetTotalEnergyConsumption, h))
        if dev.events is not None:
            self._drain_xids(dev)
            put(m.DCGM_XID_ERRORS, dev.last_xid)
            put(m.GPU_XID_ERRORS_TOTAL, dev.xid_total)
        return out

    def _clock_events(self, i: int, dev: _Device, now: float) -> list[Sample]:
        nv = self._nvml
        fn = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
            nv, "nvmlDeviceGetCurrentClocksThrottleReasons", None
        )
        mask = None if fn is None else self._try(i, fn, dev.handle)
        if mask is None:
            return []
        out = [sample(m.DCGM_CLOCKS_EVENT_REASONS, now, int(mask), dev.labels)]
        for bit, reason in c.CLOCK_EVENT_REASONS.items():
            labels = {**dev.labels, "reason": reason}
            out.append(sample(m.GPU_CLOCK_EVENT_ACTIVE, now, 1 if int(mask) & bit else 0, labels))
        return out

    def _drain_xids(self, dev: _Device) -> None:
        nv = self._nvml
        for _ in range(_XID_DRAIN_MAX):
            try:
                data = nv.nvmlEventSetWait(dev.events, 0)
            except nv.NVMLError:
                return  # timeout: nothing pending
            if int(data.eventType) == c.EVENT_TYPE_XID_CRITICAL_ERROR:
                dev.last_xid = int(data.eventData)
                dev.xid_total += 1

    def close(self) -> None:
        """Free event sets and shut NVML down (idempotent)."""
        if not self._devices:
            return
        for dev in self._devices:
            if dev.gpm is not None:
                dev.gpm.close()
            if dev.events is not None:
                self._try(int(dev.labels["gpu"]), self._nvml.nvmlEventSetFree, dev.events)
        self._try(-1, self._nvml.nvmlShutdown)
        self._devices = None
