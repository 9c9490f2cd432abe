"""Host (psutil) and GPU (NVML) collectors under node_exporter and DCGM exporter names, and the exporter.

>>> from inferwatch.collect import FakeGPU, FakeNVML, GpuCollector
>>> samples = GpuCollector(nvml=FakeNVML([FakeGPU(util_gpu=30)]), hostname="n1").collect(now=0.0)
>>> util = next(s for s in samples if s.labels.name == "DCGM_FI_DEV_GPU_UTIL")
>>> util.v, util.labels["gpu"], util.labels["device"], util.labels["Hostname"]
(30.0, '0', 'nvidia0', 'n1')
"""

from typing import TYPE_CHECKING, Any

from inferwatch.collect._base import Collector, sample
from inferwatch.collect._fake_nvml import FakeGPU, FakeNVML, FakeNVMLError
from inferwatch.collect._gpu import GpuCollector
from inferwatch.collect._host import HostCollector
from inferwatch.collect._loop import CollectLoop
from inferwatch.collect._nvml import CLOCK_EVENT_REASONS, load_nvml
from inferwatch.collect._process import GcStats, ProcessCollector

if TYPE_CHECKING:
    from inferwatch.collect._exporter import Exporter, replace_process, run_exporter
    from inferwatch.collect._exposition import SampleCollector

__all__ = [
    "CLOCK_EVENT_REASONS",
    "CollectLoop",
    "Collector",
    "Exporter",
    "FakeGPU",
    "FakeNVML",
    "FakeNVMLError",
    "GcStats",
    "GpuCollector",
    "HostCollector",
    "ProcessCollector",
    "SampleCollector",
    "load_nvml",
    "replace_process",
    "run_exporter",
    "sample",
]


def __getattr__(name: str) -> Any:
    # prometheus-client only when exposing: the edge agent collects without it (~8 MiB less RSS)
    if name in ("Exporter", "replace_process", "run_exporter"):
        from inferwatch.collect import _exporter

        return getattr(_exporter, name)
    if name == "SampleCollector":
        from inferwatch.collect._exposition import SampleCollector

        return SampleCollector
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
