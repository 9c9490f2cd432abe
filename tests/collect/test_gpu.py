"""GPU collector on the fake NVML: DCGM names, labels, units, down states, XIDs."""

from __future__ import annotations

import logging
import sys

import pytest
from tests._require import require_module

from inferwatch.collect import CLOCK_EVENT_REASONS, FakeGPU, FakeNVML, GpuCollector
from inferwatch.model import CATALOG
from inferwatch.model import metrics as m

MIB = 1024 * 1024


def _values(col: GpuCollector, now: float = 0.0) -> dict[tuple[str, str], float]:
    """(metric name, gpu) -> value; clock-event series keyed by name:reason."""
    out = {}
    for s in col.collect(now):
        key = s.labels.name if "reason" not in s.labels else f"{s.labels.name}:{s.labels['reason']}"
        out[(key, s.labels.get("gpu", ""))] = s.v
    return out


GPU = FakeGPU(
    util_gpu=87, util_memory=33, memory_total=40960 * MIB, memory_used=1000 * MIB + 5,
    pcie_tx_kbs=1000, pcie_rx_kbs=3, link_gen=3, max_link_gen=4, link_width=8, max_link_width=16,
    sm_clock=1200, mem_clock=1215, temperature=71, power_mw=123_456, power_limit_mw=300_000,
    energy_mj=777, pcie_replays=4,
)


@pytest.mark.parametrize(
    ("metric", "want"),
    [
        # rule: utilisation in percent as NVML reports it
        (m.DCGM_GPU_UTIL, 87), (m.DCGM_MEM_COPY_UTIL, 33),
        # rule: framebuffer in MiB (DCGM's unit), rounded down
        (m.DCGM_FB_USED, 1000), (m.DCGM_FB_TOTAL, 40960), (m.DCGM_FB_FREE, 39959),
        # rule: NVML's KB/s become bytes per second, DCGM's PROF_PCIE unit
        (m.DCGM_PCIE_TX, 1024_000), (m.DCGM_PCIE_RX, 3072),
        # rule: link generation and width, current and maximum, unscaled
        (m.DCGM_PCIE_LINK_GEN, 3), (m.DCGM_PCIE_MAX_LINK_GEN, 4),
        (m.DCGM_PCIE_LINK_WIDTH, 8), (m.DCGM_PCIE_MAX_LINK_WIDTH, 16),
        (m.DCGM_PCIE_REPLAY, 4), (m.DCGM_SM_CLOCK, 1200), (m.DCGM_MEM_CLOCK, 1215),
        (m.DCGM_GPU_TEMP, 71),
        # rule: NVML's milliwatts become watts
        (m.DCGM_POWER_USAGE, 123.456), (m.DCGM_POWER_LIMIT, 300.0),
        (m.DCGM_ENERGY, 777),
    ],
)
def test_values_and_units(metric: object, want: float) -> None:
    got = _values(GpuCollector(nvml=FakeNVML([GPU]), hostname="h"))
    assert got[(metric.name, "0")] == pytest.approx(want)  # type: ignore[attr-defined]


def test_dcgm_labels_on_every_gpu_series() -> None:
    gpus = [FakeGPU(uuid="GPU-a", minor=0, pci_bus_id="00000000:3B:00.0"),
            FakeGPU(uuid="GPU-b", minor=3, pci_bus_id="00000000:86:00.0", name="Tesla T4")]
    samples = GpuCollector(nvml=FakeNVML(gpus), hostname="node7").collect(now=0.0)
    util = sorted(
        (s for s in samples if s.labels.name == m.DCGM_GPU_UTIL.name), key=lambda s: s.labels["gpu"],
    )
    assert dict(util[1].labels.without_name()) == {
        "gpu": "1", "UUID": "GPU-b", "pci_bus_id": "00000000:86:00.0", "device": "nvidia3",
        "modelName": "Tesla T4", "Hostname": "node7",
    }
    assert all(s.labels.name in CATALOG for s in samples)


def test_clock_event_reasons_bitmask_and_per_reason_flags() -> None:
    gpu = FakeGPU(clock_event_reasons=0x004 | 0x040)  # power cap + hardware thermal slowdown
    got = _values(GpuCollector(nvml=FakeNVML([gpu]), hostname="h"))
    assert got[(m.DCGM_CLOCKS_EVENT_REASONS.name, "0")] == 0x44
    active = {r for r in CLOCK_EVENT_REASONS.values() if got[(f"{m.GPU_CLOCK_EVENT_ACTIVE.name}:{r}", "0")]}
    assert active == {"power_cap", "hw_thermal"}


def test_xids_are_drained_last_value_and_count() -> None:
    nvml = FakeNVML([FakeGPU()])
    col = GpuCollector(nvml=nvml, hostname="h")
    assert _values(col)[(m.DCGM_XID_ERRORS.name, "0")] == 0
    nvml.gpus[0].pending_xids.extend([79, 48])
    got = _values(col, 15.0)
    # rule: DCGM_FI_DEV_XID_ERRORS is the last XID; our counter counts them all
    assert got[(m.DCGM_XID_ERRORS.name, "0")] == 48
    assert got[(m.GPU_XID_ERRORS_TOTAL.name, "0")] == 2


def test_unsupported_fields_are_left_out_and_not_retried() -> None:
    gpu = FakeGPU(unsupported={"nvmlDeviceGetPowerUsage", "nvmlDeviceGetCurrentClocksEventReasons"})
    nvml = FakeNVML([gpu])
    col = GpuCollector(nvml=nvml, hostname="h")
    first = _values(col)
    calls_first = nvml.calls
    col.collect(15.0)
    assert (m.DCGM_POWER_USAGE.name, "0") not in first
    assert (m.DCGM_CLOCKS_EVENT_REASONS.name, "0") not in first
    assert (m.DCGM_GPU_UTIL.name, "0") in first
    # rule: NOT_SUPPORTED is remembered, so the second collection makes two calls fewer
    setup_calls = 6  # minor, UUID, PCI info, name, event registration, GPM support
    assert nvml.calls - calls_first == calls_first - setup_calls - 2


@pytest.mark.parametrize(
    ("nvml", "reason"),
    [
        (FakeNVML.without_library(), "no_nvml_library"),  # rule: no driver library
        (FakeNVML([], init_error=999), "nvml_init_failed"),  # rule: any other init error
        (FakeNVML([]), "no_gpu"),  # rule: NVML works but finds no GPU
    ],
)
def test_down_says_why_once(nvml: FakeNVML, reason: str, caplog: pytest.LogCaptureFixture) -> None:
    col = GpuCollector(nvml=nvml, hostname="h")
    with caplog.at_level(logging.WARNING, logger="inferwatch.collect"):
        batches = [col.collect(t) for t in (0.0, 15.0, 30.0)]
    for batch in batches:
        assert [(s.labels.name, s.labels["reason"], s.v) for s in batch] == [
            (m.GPU_COLLECTOR_UP.name, reason, 0.0)
        ]
    assert sum("GPU collector off" in r.getMessage() for r in caplog.records) == 1
    assert not col.up and col.reason == reason


def test_without_the_binding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    col = GpuCollector(hostname="h")
    assert col.collect(0.0)[0].labels["reason"] == "no_pynvml"


def test_real_pynvml_on_this_machine_reports_down_without_a_driver() -> None:
    pynvml = require_module("pynvml")
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        pass
    else:  # pragma: no cover - only on a GPU host
        pynvml.nvmlShutdown()
        pytest.skip("this machine has an NVIDIA driver; the fake covers the down path")
    col = GpuCollector(hostname="h")  # the real binding, loaded behind the guard
    assert col.collect(0.0)[0].labels["reason"] in {"no_nvml_library", "nvml_init_failed", "no_gpu"}


def test_close_shuts_nvml_down() -> None:
    nvml = FakeNVML([FakeGPU()])
    col = GpuCollector(nvml=nvml, hostname="h")
    col.collect(0.0)
    col.close()
    assert not nvml.initialised
