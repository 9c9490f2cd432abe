"""Hopper's GPU Performance Monitoring (GPM) through NVML, under DCGM's profiling names.

GPM metrics are computed between two samples. Each collection takes one sample
and reads the metrics between it and the previous collection's, so no call
waits for a sample window and the values average the whole collect interval
(what dcgm-exporter's profiling fields report), not a 20 ms glimpse.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from inferwatch.model import MetricSpec
from inferwatch.model import metrics as m

__all__ = ["GPM_METRICS", "GpmReader"]

_log = logging.getLogger(__name__)
_MIB = 1024 * 1024

# NVML_GPM_METRIC_* ids (nvml.h) -> (DCGM profiling spec, scale): percentages become
# DCGM's 0..1 ratios, MiB/s become bytes/s.
GPM_METRICS: dict[int, tuple[MetricSpec, float]] = {
    1: (m.DCGM_PROF_GR_ENGINE_ACTIVE, 0.01),  # GRAPHICS_UTIL
    2: (m.DCGM_PROF_SM_ACTIVE, 0.01),  # SM_UTIL
    3: (m.DCGM_PROF_SM_OCCUPANCY, 0.01),  # SM_OCCUPANCY
    5: (m.DCGM_PROF_PIPE_TENSOR_ACTIVE, 0.01),  # ANY_TENSOR_UTIL
    10: (m.DCGM_PROF_DRAM_ACTIVE, 0.01),  # DRAM_BW_UTIL
    11: (m.DCGM_PROF_PIPE_FP64_ACTIVE, 0.01),  # FP64_UTIL
    12: (m.DCGM_PROF_PIPE_FP32_ACTIVE, 0.01),  # FP32_UTIL
    13: (m.DCGM_PROF_PIPE_FP16_ACTIVE, 0.01),  # FP16_UTIL
    20: (m.DCGM_PCIE_TX, _MIB),  # PCIE_TX_PER_SEC
    21: (m.DCGM_PCIE_RX, _MIB),  # PCIE_RX_PER_SEC
    60: (m.DCGM_PROF_NVLINK_RX, _MIB),  # NVLINK_TOTAL_RX_PER_SEC
    61: (m.DCGM_PROF_NVLINK_TX, _MIB),  # NVLINK_TOTAL_TX_PER_SEC
}
_METRICS_GET_VERSION = 1  # NVML_GPM_METRICS_GET_VERSION
_CORE = (1, 2, 3, 5, 10, 20, 21)  # what every GPM GPU has: asked alone when a full request fails


class GpmReader:
    """GPM for one GPU: ``supported`` after construction; :meth:`read` gives (spec, value) pairs.

    >>> from inferwatch.collect import FakeGPU, FakeNVML
    >>> nv = FakeNVML([FakeGPU(gpm={2: 85.0})]); nv.nvmlInit()
    >>> r = GpmReader(nv, nv.nvmlDeviceGetHandleByIndex(0))
    >>> r.read()  # the first call only takes a sample
    []
    >>> [(s.name, v) for s, v in r.read()]
    [('DCGM_FI_PROF_SM_ACTIVE', 0.85)]
    """

    def __init__(self, nvml: Any, handle: Any) -> None:
        self._nv, self._h = nvml, handle
        self._prev: Any = None
        self._next: Any = None
        self._ids: list[int] = []
        self._have_prev = False
        self.supported = self._probe()

    def _probe(self) -> bool:
        nv = self._nv
        if getattr(nv, "nvmlGpmQueryDeviceSupport", None) is None:
            return False  # nvidia-ml-py older than GPM
        try:
            if not int(nv.nvmlGpmQueryDeviceSupport(self._h).isSupportedDevice):
                return False
            self._prev, self._next = nv.nvmlGpmSampleAlloc(), nv.nvmlGpmSampleAlloc()
        except nv.NVMLError as exc:
            _log.debug("GPM not available: %s", exc)
            return False
        self._ids = list(GPM_METRICS)
        return True

    @property
    def has_pcie(self) -> bool:
        """Whether GPM still reports PCIe rates (then the blocking throughput call is not needed)."""
        return self.supported and 20 in self._ids

    def read(self) -> list[tuple[MetricSpec, float]]:
        """Take a sample; the metrics since the previous one (empty on the first call or an error)."""
        if not self.supported:
            return []
        nv = self._nv
        try:
            nv.nvmlGpmSampleGet(self._h, self._next)
        except nv.NVMLError as exc:
            _log.debug("GPM sample failed: %s", exc)
            self._have_prev = False
            return []
        if not self._have_prev:
            self._prev, self._next, self._have_prev = self._next, self._prev, True
            return []
        try:
            out = self._metrics(self._prev, self._next)
        finally:
            self._prev, self._next = self._next, self._prev
        return out

    def _metrics(self, first: Any, second: Any) -> list[tuple[MetricSpec, float]]:
        nv = self._nv
        req = nv.c_nvmlGpmMetricsGet_t()
        req.version = getattr(nv, "NVML_GPM_METRICS_GET_VERSION", _METRICS_GET_VERSION)
        req.numMetrics = len(self._ids)
        req.sample1, req.sample2 = first, second
        for i, mid in enumerate(self._ids):
            req.metrics[i].metricId = mid
        try:
            nv.nvmlGpmMetricsGet(req)
        except nv.NVMLError as exc:
            _log.debug("GPM metrics failed: %s", exc)
            if len(self._ids) > len(_CORE):  # a driver refusing the whole request: ask for less next time
                self._ids = list(_CORE)
            return []
        out, keep = [], []
        for i, mid in enumerate(self._ids):
            got = req.metrics[i]
            if int(got.nvmlReturn) != 0:
                continue  # this GPU lacks the metric (e.g. no NVLink): not asked again
            keep.append(mid)
            spec, scale = GPM_METRICS[mid]
            out.append((spec, float(got.value) * scale))
        self._ids = keep or self._ids
        return out

    def close(self) -> None:
        """Free the two samples (idempotent)."""
        if not self.supported:
            return
        for s in (self._prev, self._next):
            with contextlib.suppress(self._nv.NVMLError):
                self._nv.nvmlGpmSampleFree(s)
        self.supported = False
