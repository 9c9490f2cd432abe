"""A fake NVML for tests: recorded device states behind pynvml's function names.

Inject it where the real binding would go (``GpuCollector(nvml=FakeNVML(...))``);
change a GPU's fields between collections to replay a recorded story.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

from inferwatch.collect import _nvml as c

__all__ = ["FakeGPU", "FakeNVML", "FakeNVMLError"]

_MIB = 1024 * 1024


class FakeNVMLError(Exception):
    """Raised by :class:`FakeNVML` like ``pynvml.NVMLError``: ``value`` is the NVML return code."""

    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


@dataclass
class FakeGPU:
    """One GPU's state as NVML would report it (units as NVML's: KB/s, MHz, mW, mJ, bytes)."""

    name: str = "NVIDIA A100-SXM4-40GB"
    uuid: str = "GPU-00000000-0000-0000-0000-000000000000"
    pci_bus_id: str = "00000000:3B:00.0"
    minor: int = 0
    util_gpu: int = 90
    util_memory: int = 40
    memory_total: int = 40960 * _MIB
    memory_used: int = 8192 * _MIB
    pcie_tx_kbs: int = 2_000_000
    pcie_rx_kbs: int = 6_000_000
    link_gen: int = 4
    max_link_gen: int = 4
    link_width: int = 16
    max_link_width: int = 16
    pcie_replays: int = 0
    sm_clock: int = 1410
    mem_clock: int = 1215
    clock_event_reasons: int = 0
    temperature: int = 55
    power_mw: int = 250_000
    power_limit_mw: int = 400_000
    energy_mj: int = 1_000_000
    pending_xids: list[int] = field(default_factory=list)
    # GPM metric id -> value over the interval ending at the next sample (percent or MiB/s);
    # None: the GPU has no GPM (pre-Hopper, MIG, some VMs)
    gpm: dict[int, float] | None = None
    unsupported: set[str] = field(default_factory=set)  # pynvml function names answering NOT_SUPPORTED


@dataclass(frozen=True)
class _Handle:
    index: int


@dataclass
class _GpmSample:
    values: dict[int, float] = field(default_factory=dict)
    freed: bool = False


class _GpmMetricsGet:
    """``c_nvmlGpmMetricsGet_t``'s fields, as pynvml's ctypes struct has them."""

    def __init__(self) -> None:
        self.version = 0
        self.numMetrics = 0
        self.sample1: _GpmSample | None = None
        self.sample2: _GpmSample | None = None
        self.metrics = [SimpleNamespace(metricId=0, nvmlReturn=0, value=0.0) for _ in range(210)]


class FakeNVML:
    """pynvml's functions over :class:`FakeGPU` states.

    >>> nvml = FakeNVML([FakeGPU(util_gpu=30)])
    >>> nvml.nvmlInit(); h = nvml.nvmlDeviceGetHandleByIndex(0)
    >>> nvml.nvmlDeviceGetUtilizationRates(h).gpu
    30
    >>> FakeNVML.without_library().nvmlInit()
    Traceback (most recent call last):
    ...
    inferwatch.collect._fake_nvml.FakeNVMLError: NVML error 12
    """

    NVMLError = FakeNVMLError
    NVML_PCIE_UTIL_TX_BYTES, NVML_PCIE_UTIL_RX_BYTES = c.PCIE_UTIL_TX_BYTES, c.PCIE_UTIL_RX_BYTES
    NVML_CLOCK_SM, NVML_CLOCK_MEM = c.CLOCK_SM, c.CLOCK_MEM
    NVML_TEMPERATURE_GPU = c.TEMPERATURE_GPU
    NVML_ERROR_TIMEOUT, NVML_ERROR_NOT_SUPPORTED = c.ERROR_TIMEOUT, c.ERROR_NOT_SUPPORTED
    nvmlEventTypeXidCriticalError = c.EVENT_TYPE_XID_CRITICAL_ERROR
    NVML_GPM_METRICS_GET_VERSION = 1
    c_nvmlGpmMetricsGet_t = _GpmMetricsGet

    def __init__(self, gpus: list[FakeGPU] | None = None, *, init_error: int | None = None) -> None:
        self.gpus = list(gpus or [])
        self.init_error = init_error
        self.initialised = False
        self.calls = 0  # NVML calls made, to check that unsupported ones are not retried

    @classmethod
    def without_library(cls) -> FakeNVML:
        """An NVML whose ``nvmlInit`` fails as when libnvidia-ml.so is missing."""
        return cls([], init_error=c.ERROR_LIBRARY_NOT_FOUND)

    def _gpu(self, handle: _Handle, fn: str) -> FakeGPU:
        self.calls += 1
        if not self.initialised:
            raise FakeNVMLError(1)  # NVML_ERROR_UNINITIALIZED
        gpu = self.gpus[handle.index]
        if fn in gpu.unsupported:
            raise FakeNVMLError(c.ERROR_NOT_SUPPORTED)
        return gpu

    def nvmlInit(self) -> None:
        """Start; raises the configured error."""
        if self.init_error is not None:
            raise FakeNVMLError(self.init_error)
        self.initialised = True

    def nvmlShutdown(self) -> None:
        """Stop."""
        self.initialised = False

    def nvmlDeviceGetCount(self) -> int:
        """Number of GPUs."""
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> _Handle:
        """A handle to GPU ``index``."""
        if not 0 <= index < len(self.gpus):
            raise FakeNVMLError(2)  # NVML_ERROR_INVALID_ARGUMENT
        return _Handle(index)

    def nvmlDeviceGetName(self, h: _Handle) -> str:
        """Product name."""
        return self._gpu(h, "nvmlDeviceGetName").name

    def nvmlDeviceGetUUID(self, h: _Handle) -> str:
        """UUID."""
        return self._gpu(h, "nvmlDeviceGetUUID").uuid

    def nvmlDeviceGetPciInfo(self, h: _Handle) -> SimpleNamespace:
        """PCI info (``busId``)."""
        return SimpleNamespace(busId=self._gpu(h, "nvmlDeviceGetPciInfo").pci_bus_id)

    def nvmlDeviceGetMinorNumber(self, h: _Handle) -> int:
        """Minor number (``/dev/nvidiaN``)."""
        return self._gpu(h, "nvmlDeviceGetMinorNumber").minor

    def nvmlDeviceGetUtilizationRates(self, h: _Handle) -> SimpleNamespace:
        """GPU and memory utilisation in percent."""
        g = self._gpu(h, "nvmlDeviceGetUtilizationRates")
        return SimpleNamespace(gpu=g.util_gpu, memory=g.util_memory)

    def nvmlDeviceGetMemoryInfo(self, h: _Handle) -> SimpleNamespace:
        """Framebuffer memory in bytes."""
        g = self._gpu(h, "nvmlDeviceGetMemoryInfo")
        return SimpleNamespace(total=g.memory_total, used=g.memory_used, free=g.memory_total - g.memory_used)

    def nvmlDeviceGetPcieThroughput(self, h: _Handle, counter: int) -> int:
        """PCIe throughput in KB/s (TX or RX)."""
        g = self._gpu(h, "nvmlDeviceGetPcieThroughput")
        return g.pcie_tx_kbs if counter == c.PCIE_UTIL_TX_BYTES else g.pcie_rx_kbs

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h: _Handle) -> int:
        """Current PCIe generation."""
        return self._gpu(h, "nvmlDeviceGetCurrPcieLinkGeneration").link_gen

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h: _Handle) -> int:
        """Maximum PCIe generation."""
        return self._gpu(h, "nvmlDeviceGetMaxPcieLinkGeneration").max_link_gen

    def nvmlDeviceGetCurrPcieLinkWidth(self, h: _Handle) -> int:
        """Current PCIe width."""
        return self._gpu(h, "nvmlDeviceGetCurrPcieLinkWidth").link_width

    def nvmlDeviceGetMaxPcieLinkWidth(self, h: _Handle) -> int:
        """Maximum PCIe width."""
        return self._gpu(h, "nvmlDeviceGetMaxPcieLinkWidth").max_link_width

    def nvmlDeviceGetPcieReplayCounter(self, h: _Handle) -> int:
        """PCIe replays."""
        return self._gpu(h, "nvmlDeviceGetPcieReplayCounter").pcie_replays

    def nvmlDeviceGetClockInfo(self, h: _Handle, clock: int) -> int:
        """SM or memory clock in MHz."""
        g = self._gpu(h, "nvmlDeviceGetClockInfo")
        return g.sm_clock if clock == c.CLOCK_SM else g.mem_clock

    def nvmlDeviceGetCurrentClocksEventReasons(self, h: _Handle) -> int:
        """Clock event (throttle) reason bitmask."""
        return self._gpu(h, "nvmlDeviceGetCurrentClocksEventReasons").clock_event_reasons

    def nvmlDeviceGetTemperature(self, h: _Handle, sensor: int) -> int:
        """GPU temperature in C."""
        return self._gpu(h, "nvmlDeviceGetTemperature").temperature

    def nvmlDeviceGetPowerUsage(self, h: _Handle) -> int:
        """Power draw in mW."""
        return self._gpu(h, "nvmlDeviceGetPowerUsage").power_mw

    def nvmlDeviceGetEnforcedPowerLimit(self, h: _Handle) -> int:
        """Power limit in mW."""
        return self._gpu(h, "nvmlDeviceGetEnforcedPowerLimit").power_limit_mw

    def nvmlDeviceGetTotalEnergyConsumption(self, h: _Handle) -> int:
        """Energy since boot in mJ."""
        return self._gpu(h, "nvmlDeviceGetTotalEnergyConsumption").energy_mj

    def nvmlEventSetCreate(self) -> list[int]:
        """A new event set (the index of the GPU registered into it)."""
        return []

    def nvmlDeviceRegisterEvents(self, h: _Handle, types: int, event_set: list[int]) -> None:
        """Register ``h``'s XID events in ``event_set``."""
        self._gpu(h, "nvmlDeviceRegisterEvents")
        event_set.append(h.index)

    def nvmlEventSetWait(self, event_set: list[int], timeout_ms: int) -> SimpleNamespace:
        """The next pending XID of the set's GPU, else a timeout error."""
        for index in event_set:
            pending = self.gpus[index].pending_xids
            if pending:
                return SimpleNamespace(
                    device=_Handle(index), eventType=c.EVENT_TYPE_XID_CRITICAL_ERROR,
                    eventData=pending.pop(0),
                )
        raise FakeNVMLError(c.ERROR_TIMEOUT)

    def nvmlEventSetFree(self, event_set: list[int]) -> None:
        """Release ``event_set``."""
        event_set.clear()

    def nvmlGpmQueryDeviceSupport(self, h: _Handle) -> SimpleNamespace:
        """Whether the GPU has GPM (``isSupportedDevice``)."""
        gpm = self._gpu(h, "nvmlGpmQueryDeviceSupport").gpm
        return SimpleNamespace(isSupportedDevice=int(gpm is not None))

    def nvmlGpmSampleAlloc(self) -> _GpmSample:
        """A GPM sample buffer."""
        return _GpmSample()

    def nvmlGpmSampleFree(self, sample: _GpmSample) -> None:
        """Release a sample buffer."""
        sample.freed = True

    def nvmlGpmSampleGet(self, h: _Handle, sample: _GpmSample) -> _GpmSample:
        """Take a sample: the GPU's ``gpm`` values now."""
        sample.values = dict(self._gpu(h, "nvmlGpmSampleGet").gpm or {})
        return sample

    def nvmlGpmMetricsGet(self, req: _GpmMetricsGet) -> _GpmMetricsGet:
        """Metrics between ``sample1`` and ``sample2``: the values of ``sample2``; unknown ids fail."""
        self.calls += 1
        if req.version != self.NVML_GPM_METRICS_GET_VERSION or req.sample1 is None or req.sample2 is None:
            raise FakeNVMLError(2)  # NVML_ERROR_INVALID_ARGUMENT
        for metric in req.metrics[:req.numMetrics]:
            value = req.sample2.values.get(metric.metricId)
            metric.nvmlReturn = c.ERROR_NOT_SUPPORTED if value is None else 0
            metric.value = 0.0 if value is None else value
        return req
