"""The catalog's infrastructure section: host (node_exporter's names), the process,
GPUs (DCGM exporter's names)."""

from __future__ import annotations

from inferwatch.model._metric_spec import _C, _G, _U, MetricSpec

# --- collect: infrastructure (node_exporter and DCGM exporter names) ---------
# Names, help texts and units are node_exporter's (1.5) and dcgm-exporter's
# (etc/default-counters.csv, dcp-metrics-included.csv) so their dashboards and
# rules work unchanged; the inferwatch_* ones are ours.
NODE_CPU_SECONDS_TOTAL = MetricSpec(
    "node_cpu_seconds_total", _C, "Seconds the CPUs spent in each mode.", ("cpu", "mode"), "seconds",
)


def _meminfo(field: str) -> MetricSpec:
    return MetricSpec(
        f"node_memory_{field}_bytes", _G, f"Memory information field {field}_bytes.", (), "bytes",
    )


NODE_MEMORY_MEMTOTAL = _meminfo("MemTotal")
NODE_MEMORY_MEMAVAILABLE = _meminfo("MemAvailable")
NODE_MEMORY_MEMFREE = _meminfo("MemFree")
NODE_MEMORY_BUFFERS = _meminfo("Buffers")
NODE_MEMORY_CACHED = _meminfo("Cached")
NODE_MEMORY_SWAPTOTAL = _meminfo("SwapTotal")
NODE_MEMORY_SWAPFREE = _meminfo("SwapFree")
NODE_LOAD1 = MetricSpec("node_load1", _G, "1m load average.")
NODE_LOAD5 = MetricSpec("node_load5", _G, "5m load average.")
NODE_LOAD15 = MetricSpec("node_load15", _G, "15m load average.")
# The model-server process (prometheus-client's own process_*/python_gc_* are
# left to it: these names never collide with its default collectors).
PROCESS_RSS = MetricSpec(
    "inferwatch_process_resident_memory_bytes", _G,
    "Resident memory of the monitored model-server process in bytes.", (), "bytes",
)
PROCESS_CPU_SECONDS_TOTAL = MetricSpec(
    "inferwatch_process_cpu_seconds_total", _C,
    "CPU seconds the monitored model-server process spent, by mode (user, system).",
    ("mode",), "seconds",
)
PROCESS_THREADS = MetricSpec(
    "inferwatch_process_threads", _G, "Threads of the monitored model-server process.",
)
PYTHON_GC_COLLECTIONS_TOTAL = MetricSpec(
    "inferwatch_python_gc_collections_total", _C,
    "Python garbage collections of this process since the collector started, by generation.",
    ("generation",),
)
PYTHON_GC_PAUSE_SECONDS_TOTAL = MetricSpec(
    "inferwatch_python_gc_pause_seconds_total", _C,
    "Seconds this process was paused in Python garbage collection, by generation (gc.callbacks).",
    ("generation",), "seconds",
)
PYTHON_GC_COLLECTED_TOTAL = MetricSpec(
    "inferwatch_python_gc_collected_objects_total", _C,
    "Objects freed by Python garbage collection in this process, by generation.", ("generation",),
)
GPU_COLLECTOR_UP = MetricSpec(
    "inferwatch_gpu_collector_up", _G,
    "1 if the GPU collector reads NVML, 0 if not (reason says why: no_pynvml, no_nvml_library, "
    "nvml_init_failed, no_gpu).",
    ("reason",),
)
COLLECT_DURATION = MetricSpec(
    "inferwatch_collect_duration_seconds", _G,
    "Wall-clock seconds the last collection took, by collector (host, process, gpu).",
    ("collector",), "seconds",
)
_GPU = ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname")
DCGM_GPU_UTIL = MetricSpec("DCGM_FI_DEV_GPU_UTIL", _G, "GPU utilization (in %).", _GPU, "percent")
DCGM_MEM_COPY_UTIL = MetricSpec(
    "DCGM_FI_DEV_MEM_COPY_UTIL", _G, "Memory utilization (in %).", _GPU, "percent",
)
DCGM_FB_USED = MetricSpec("DCGM_FI_DEV_FB_USED", _G, "Framebuffer memory used (in MiB).", _GPU, "MiB")
DCGM_FB_FREE = MetricSpec("DCGM_FI_DEV_FB_FREE", _G, "Framebuffer memory free (in MiB).", _GPU, "MiB")
DCGM_FB_TOTAL = MetricSpec(
    "DCGM_FI_DEV_FB_TOTAL", _G, "Framebuffer memory total (in MiB).", _GPU, "MiB",
)
DCGM_PCIE_TX = MetricSpec(
    "DCGM_FI_PROF_PCIE_TX_BYTES", _G,
    "The rate of data transmitted over the PCIe bus - including both protocol headers and data "
    "payloads - in bytes per second.", _GPU, "bytes_per_second",
)
DCGM_PCIE_RX = MetricSpec(
    "DCGM_FI_PROF_PCIE_RX_BYTES", _G,
    "The rate of data received over the PCIe bus - including both protocol headers and data "
    "payloads - in bytes per second.", _GPU, "bytes_per_second",
)
DCGM_PCIE_LINK_GEN = MetricSpec(
    "DCGM_FI_DEV_PCIE_LINK_GEN", _G, "PCIe current link generation.", _GPU,
)
DCGM_PCIE_LINK_WIDTH = MetricSpec(
    "DCGM_FI_DEV_PCIE_LINK_WIDTH", _G, "PCIe current link width (lanes).", _GPU,
)
DCGM_PCIE_MAX_LINK_GEN = MetricSpec(
    "DCGM_FI_DEV_PCIE_MAX_LINK_GEN", _G, "PCIe maximum link generation.", _GPU,
)
DCGM_PCIE_MAX_LINK_WIDTH = MetricSpec(
    "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", _G, "PCIe maximum link width (lanes).", _GPU,
)
# DCGM types these two "counter" without the _total suffix; exposed untyped so
# the names stay DCGM's and promtool's counter lint does not apply.
DCGM_PCIE_REPLAY = MetricSpec(
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", _U, "Total number of PCIe retries.", _GPU,
)
DCGM_ENERGY = MetricSpec(
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", _U,
    "Total energy consumption since boot (in mJ).", _GPU, "mJ",
)
DCGM_SM_CLOCK = MetricSpec("DCGM_FI_DEV_SM_CLOCK", _G, "SM clock frequency (in MHz).", _GPU, "MHz")
DCGM_MEM_CLOCK = MetricSpec(
    "DCGM_FI_DEV_MEM_CLOCK", _G, "Memory clock frequency (in MHz).", _GPU, "MHz",
)
DCGM_CLOCKS_EVENT_REASONS = MetricSpec(
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", _G,
    "Current clock event (throttle) reasons, a bitmask of DCGM_CLOCKS_EVENT_REASON_* values.", _GPU,
)
GPU_CLOCK_EVENT_ACTIVE = MetricSpec(
    "inferwatch_gpu_clock_event_active", _G,
    "1 while a clock event (throttle) reason is active (gpu_idle, power_cap, hw_slowdown, "
    "sw_thermal, hw_thermal, hw_power_brake, ...), else 0.",
    (*_GPU, "reason"),
)
DCGM_GPU_TEMP = MetricSpec("DCGM_FI_DEV_GPU_TEMP", _G, "GPU temperature (in C).", _GPU, "celsius")
DCGM_POWER_USAGE = MetricSpec("DCGM_FI_DEV_POWER_USAGE", _G, "Power draw (in W).", _GPU, "watts")
DCGM_POWER_LIMIT = MetricSpec(
    "DCGM_FI_DEV_POWER_MGMT_LIMIT", _G, "Current power limit of the device (in W).", _GPU, "watts",
)
DCGM_XID_ERRORS = MetricSpec(
    "DCGM_FI_DEV_XID_ERRORS", _G, "Value of the last XID error encountered.", _GPU,
)
GPU_XID_ERRORS_TOTAL = MetricSpec(
    "inferwatch_gpu_xid_errors_total", _C,
    "XID errors NVML reported for the GPU since the collector started.", _GPU,
)
# DCGM's profiling fields (dcgm-exporter's names, 0..1 ratios and bytes/s), read through
# NVML's GPM (Hopper and later) between two collections, so no call waits for a window.
DCGM_PROF_GR_ENGINE_ACTIVE = MetricSpec(
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE", _G, "Ratio of time the graphics engine is active.", _GPU, "ratio",
)
DCGM_PROF_SM_ACTIVE = MetricSpec(
    "DCGM_FI_PROF_SM_ACTIVE", _G,
    "The ratio of cycles an SM has at least 1 warp assigned (averaged over all SMs).", _GPU, "ratio",
)
DCGM_PROF_SM_OCCUPANCY = MetricSpec(
    "DCGM_FI_PROF_SM_OCCUPANCY", _G,
    "The ratio of number of warps resident on an SM to the maximum (averaged over all SMs).", _GPU, "ratio",
)
DCGM_PROF_PIPE_TENSOR_ACTIVE = MetricSpec(
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", _G, "Ratio of cycles the tensor (HMMA) pipe is active.", _GPU, "ratio",
)
DCGM_PROF_DRAM_ACTIVE = MetricSpec(
    "DCGM_FI_PROF_DRAM_ACTIVE", _G,
    "Ratio of cycles the device memory interface is active sending or receiving data.", _GPU, "ratio",
)
DCGM_PROF_PIPE_FP64_ACTIVE = MetricSpec(
    "DCGM_FI_PROF_PIPE_FP64_ACTIVE", _G, "Ratio of cycles the fp64 pipes are active.", _GPU, "ratio",
)
DCGM_PROF_PIPE_FP32_ACTIVE = MetricSpec(
    "DCGM_FI_PROF_PIPE_FP32_ACTIVE", _G, "Ratio of cycles the fp32 pipes are active.", _GPU, "ratio",
)
DCGM_PROF_PIPE_FP16_ACTIVE = MetricSpec(
    "DCGM_FI_PROF_PIPE_FP16_ACTIVE", _G, "Ratio of cycles the fp16 pipes are active.", _GPU, "ratio",
)
DCGM_PROF_NVLINK_TX = MetricSpec(
    "DCGM_FI_PROF_NVLINK_TX_BYTES", _G,
    "The rate of data transmitted over NVLink, not including protocol headers, in bytes per second.",
    _GPU, "bytes_per_second",
)
DCGM_PROF_NVLINK_RX = MetricSpec(
    "DCGM_FI_PROF_NVLINK_RX_BYTES", _G,
    "The rate of data received over NVLink, not including protocol headers, in bytes per second.",
    _GPU, "bytes_per_second",
)
