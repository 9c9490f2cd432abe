"""Hopper's GPM metrics on the fake NVML: DCGM profiling names, ratios, bytes/s, absent where unsupported."""

from __future__ import annotations

import logging

import pytest

from inferwatch.collect import FakeGPU, FakeNVML, GpuCollector
from inferwatch.collect._gpm import GPM_METRICS
from inferwatch.model import CATALOG, MetricKind
from inferwatch.model import metrics as m

MIB = 1024 * 1024
# NVML_GPM_METRIC_* ids: graphics, SM util, occupancy, any tensor, DRAM, PCIe TX/RX (MiB/s)
HOPPER = {1: 91.0, 2: 85.5, 3: 40.0, 5: 62.0, 10: 30.0, 11: 0.0, 12: 12.0, 13: 1.0, 20: 512.0, 21: 2048.0}


def _by_name(col: GpuCollector, now: float) -> dict[str, float]:
    return {s.labels.name: s.v for s in col.collect(now) if s.labels.get("gpu") == "0"}


def test_profiling_metrics_are_ratios_from_the_second_collection_on() -> None:
    col = GpuCollector(nvml=FakeNVML([FakeGPU(gpm=dict(HOPPER))]), hostname="h")
    first = _by_name(col, 0.0)
    # rule: GPM needs two samples: the first collection has no profiling series (and no PCIe yet)
    assert m.DCGM_PROF_SM_ACTIVE.name not in first
    assert m.DCGM_PCIE_RX.name not in first
    got = _by_name(col, 15.0)
    # rule: NVML's percentages become DCGM's 0..1 ratios
    assert got[m.DCGM_PROF_SM_ACTIVE.name] == pytest.approx(0.855)
    assert got[m.DCGM_PROF_SM_OCCUPANCY.name] == pytest.approx(0.40)
    assert got[m.DCGM_PROF_PIPE_TENSOR_ACTIVE.name] == pytest.approx(0.62)
    assert got[m.DCGM_PROF_DRAM_ACTIVE.name] == pytest.approx(0.30)
    assert got[m.DCGM_PROF_GR_ENGINE_ACTIVE.name] == pytest.approx(0.91)
    assert got[m.DCGM_PROF_PIPE_FP32_ACTIVE.name] == pytest.approx(0.12)
    # rule: GPM's MiB/s become bytes/s and replace the blocking 20 ms PCIe throughput read
    assert got[m.DCGM_PCIE_TX.name] == 512 * MIB
    assert got[m.DCGM_PCIE_RX.name] == 2048 * MIB
    # rule: a metric the GPU lacks (NVLink here) is left out
    assert m.DCGM_PROF_NVLINK_TX.name not in got


def test_values_follow_the_gpu_between_collections() -> None:
    nvml = FakeNVML([FakeGPU(gpm=dict(HOPPER))])
    col = GpuCollector(nvml=nvml, hostname="h")
    col.collect(0.0)
    col.collect(15.0)
    assert nvml.gpus[0].gpm is not None
    nvml.gpus[0].gpm[2] = 20.0
    assert _by_name(col, 30.0)[m.DCGM_PROF_SM_ACTIVE.name] == pytest.approx(0.20)


def test_without_gpm_the_profiling_series_are_absent_quietly(caplog: pytest.LogCaptureFixture) -> None:
    nvml = FakeNVML([FakeGPU(gpm=None, pcie_rx_kbs=3)])
    col = GpuCollector(nvml=nvml, hostname="h")
    with caplog.at_level(logging.INFO):
        got = {**_by_name(col, 0.0), **_by_name(col, 15.0)}
    prof = {spec.name for spec, _ in GPM_METRICS.values()} - {m.DCGM_PCIE_TX.name, m.DCGM_PCIE_RX.name}
    assert not prof & set(got)
    # rule: the PCIe rates still come from NVML's throughput counter
    assert got[m.DCGM_PCIE_RX.name] == 3072
    assert col.gpm_gpus == 0
    # rule: an unsupported GPU is not an error: nothing logged
    assert not [r for r in caplog.records if r.levelno >= logging.INFO]


def test_old_binding_without_gpm_functions() -> None:
    class OldNVML(FakeNVML):
        nvmlGpmQueryDeviceSupport = None  # nvidia-ml-py before GPM

    col = GpuCollector(nvml=OldNVML([FakeGPU(gpm=dict(HOPPER))]), hostname="h")
    got = {**_by_name(col, 0.0), **_by_name(col, 15.0)}
    assert m.DCGM_PROF_SM_ACTIVE.name not in got
    assert m.DCGM_GPU_UTIL.name in got


def test_unsupported_metric_is_not_asked_again() -> None:
    nvml = FakeNVML([FakeGPU(gpm={2: 50.0})])
    col = GpuCollector(nvml=nvml, hostname="h")
    col.collect(0.0)
    col.collect(15.0)
    dev = col._devices[0] if col._devices else None
    assert dev is not None and dev.gpm is not None
    # rule: after one answer, only the metrics the GPU has are requested
    assert dev.gpm._ids == [2]
    # rule: PCIe comes back from the throughput counter when GPM has none
    assert m.DCGM_PCIE_RX.name in _by_name(col, 30.0)


def test_close_frees_the_samples() -> None:
    nvml = FakeNVML([FakeGPU(gpm=dict(HOPPER))])
    col = GpuCollector(nvml=nvml, hostname="h")
    col.collect(0.0)
    reader = col._devices[0].gpm if col._devices else None
    assert reader is not None
    samples = (reader._prev, reader._next)
    col.close()
    assert all(s.freed for s in samples)


def test_profiling_specs_are_in_the_catalog_as_gauges() -> None:
    for spec, _scale in GPM_METRICS.values():
        assert CATALOG[spec.name] is spec
        assert spec.kind is MetricKind.GAUGE
        assert spec.labels == m.DCGM_GPU_UTIL.labels


def test_a_driver_refusing_the_whole_request_gets_the_core_metrics_next() -> None:
    class PickyNVML(FakeNVML):
        def nvmlGpmMetricsGet(self, req):  # type: ignore[no-untyped-def]
            if req.numMetrics > 7:
                raise self.NVMLError(2)  # NVML_ERROR_INVALID_ARGUMENT for the whole request
            return super().nvmlGpmMetricsGet(req)

    col = GpuCollector(nvml=PickyNVML([FakeGPU(gpm=dict(HOPPER))]), hostname="h")
    col.collect(0.0)
    # rule: a refused request leaves the series out once, quietly
    assert m.DCGM_PROF_SM_ACTIVE.name not in _by_name(col, 15.0)
    # rule: then only the core metrics are asked for, and they come back
    assert _by_name(col, 30.0)[m.DCGM_PROF_SM_ACTIVE.name] == pytest.approx(0.855)
