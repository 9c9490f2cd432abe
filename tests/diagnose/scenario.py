"""Recorded 30-minute stories: fake NVML states collected into a store, plus SDK/host series."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from inferwatch.collect import FakeGPU, FakeNVML, GpuCollector
from inferwatch.model import Labels, Sample
from inferwatch.model import metrics as m
from inferwatch.store import MemoryStore

STEP, STEPS = 15.0, 120  # 30 minutes at the default collect interval
MIB = 1024 * 1024
GBS_KB = 1e9 / 1024  # NVML reports KB/s


@dataclass
class Host:
    """What the host, process and service do per second (rates integrate into counters)."""

    qps: float = 100.0
    process_cores: float = 0.5
    host_busy: float = 0.3
    gc_per_min: float = 0.2
    gc_pause_fraction: float = 0.001
    rss_bytes: float = 2e9
    cores: int = 8
    counters: dict[str, float] = field(default_factory=dict)

    def _add(self, key: str, rate: float) -> float:
        self.counters[key] = self.counters.get(key, 0.0) + rate * STEP
        return self.counters[key]

    def samples(self, t: float, target: dict[str, str]) -> list[Sample]:
        def s(name: str, v: float, **labels: str) -> Sample:
            return Sample(Labels({"__name__": name, **target, **labels}), t, v)

        return [
            s(m.REQUESTS_TOTAL.name, self._add("req", self.qps), service="ranker", code="200", route="/p"),
            s(m.PROCESS_CPU_SECONDS_TOTAL.name, self._add("cpu", self.process_cores), mode="user"),
            s(m.PROCESS_RSS.name, self.rss_bytes),
            s(m.PYTHON_GC_COLLECTIONS_TOTAL.name, self._add("gc", self.gc_per_min / 60), generation="2"),
            s(m.PYTHON_GC_PAUSE_SECONDS_TOTAL.name, self._add("pause", self.gc_pause_fraction),
              generation="2"),
            s(m.NODE_CPU_SECONDS_TOTAL.name, self._add("idle", self.cores * (1 - self.host_busy)),
              cpu="0", mode="idle"),
            s(m.NODE_CPU_SECONDS_TOTAL.name, self._add("user", self.cores * self.host_busy),
              cpu="0", mode="user"),
        ]


Change = Callable[[FakeGPU, Host, float], None]  # (gpu, host, progress 0..1 into the second half)


def record(
    change: Change | None, *, end: float = 1_800_000.0, gpm: bool = False, util_after: int = 30,
) -> tuple[MemoryStore, FakeNVML]:
    """Half an hour: steady for 15 minutes, then ``change`` applied (GPU util falls 90 → ``util_after``).

    ``gpm``: the GPU also reports GPM (SM active 85 % → 30 %, tensor active 60 % → 20 %).
    """
    gpu = FakeGPU(util_gpu=90, pcie_rx_kbs=int(6 * GBS_KB), pcie_tx_kbs=int(2 * GBS_KB))
    if gpm:
        gpu.gpm = {2: 85.0, 5: 60.0}  # NVML_GPM_METRIC_SM_UTIL, ANY_TENSOR_UTIL
    nvml, host, store = FakeNVML([gpu]), Host(), MemoryStore()
    collector = GpuCollector(nvml=nvml, hostname="gpu-node-1")
    target = {"job": "exporter", "instance": "gpu-node-1:9400"}
    start = end - STEP * (STEPS - 1)
    for i in range(STEPS):
        t = start + i * STEP
        if change is not None and i >= STEPS // 2:
            gpu.util_gpu = util_after
            if gpu.gpm is not None:
                gpu.gpm.update({2: 30.0, 5: 20.0})
            change(gpu, host, (i - STEPS // 2) / (STEPS // 2))
        batch = [Sample(Labels({**s.labels, **target}), s.t, s.v) for s in collector.collect(t)]
        store.append(batch + host.samples(t, target))
    return store, nvml


def cpu_fallback(gpu: FakeGPU, host: Host, p: float) -> None:
    host.process_cores, host.host_busy = 1.8, 0.9
    gpu.pcie_rx_kbs = int(2 * GBS_KB)


def memory_leak(gpu: FakeGPU, host: Host, p: float) -> None:
    gpu.memory_used = int((8000 + p * 28000) * MIB)
    host.gc_per_min, host.gc_pause_fraction = 6.0, 0.08
    host.rss_bytes = 2e9 * (1 + p)


def pcie_downgrade(gpu: FakeGPU, host: Host, p: float) -> None:
    gpu.link_gen, gpu.link_width = 2, 8
    gpu.pcie_rx_kbs = int(3.5 * GBS_KB)


def thermal(gpu: FakeGPU, host: Host, p: float) -> None:
    gpu.clock_event_reasons = 0x040  # hw_thermal
    gpu.sm_clock, gpu.temperature = 900, 91


def starvation(gpu: FakeGPU, host: Host, p: float) -> None:
    gpu.pcie_rx_kbs = int(1.5 * GBS_KB)


def traffic(gpu: FakeGPU, host: Host, p: float) -> None:
    host.qps = 30.0
    gpu.pcie_rx_kbs = int(2 * GBS_KB)
