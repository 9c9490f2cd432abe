"""On a GPU machine: NVML's blocking PCIe call, GPM, the GPU collector's cost, the exposition's DCGM series.

Writes ``measure.json`` and ``exposition-idle.prom`` into ``--out``. ``--fake`` uses FakeNVML
(a Hopper-like GPU with GPM) to test the device script without a GPU. Exit 1 when a claimed
DCGM series is missing or implausible (the report says which).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import urllib.request
from pathlib import Path
from typing import Any

from inferwatch.collect import Exporter, FakeGPU, FakeNVML, GpuCollector, load_nvml
from inferwatch.model import metrics as m

# Plausible ranges of what the exporter claims, in the exposed units.
RANGES: dict[str, tuple[float, float]] = {
    m.DCGM_GPU_UTIL.name: (0, 100), m.DCGM_MEM_COPY_UTIL.name: (0, 100),
    m.DCGM_FB_USED.name: (0, 1 << 21), m.DCGM_FB_FREE.name: (0, 1 << 21),
    m.DCGM_FB_TOTAL.name: (1024, 1 << 21),
    m.DCGM_PCIE_TX.name: (0, 256e9), m.DCGM_PCIE_RX.name: (0, 256e9),
    m.DCGM_PCIE_LINK_GEN.name: (1, 6), m.DCGM_PCIE_MAX_LINK_GEN.name: (1, 6),
    m.DCGM_PCIE_LINK_WIDTH.name: (1, 32), m.DCGM_PCIE_MAX_LINK_WIDTH.name: (1, 32),
    m.DCGM_PCIE_REPLAY.name: (0, 1e12), m.DCGM_SM_CLOCK.name: (1, 5000), m.DCGM_MEM_CLOCK.name: (1, 20000),
    m.DCGM_CLOCKS_EVENT_REASONS.name: (0, 1 << 16), m.DCGM_GPU_TEMP.name: (5, 110),
    m.DCGM_POWER_USAGE.name: (1, 2000), m.DCGM_POWER_LIMIT.name: (50, 2000),
    m.DCGM_ENERGY.name: (0, 1e18), m.DCGM_XID_ERRORS.name: (0, 1000),
    m.DCGM_PROF_GR_ENGINE_ACTIVE.name: (0, 1), m.DCGM_PROF_SM_ACTIVE.name: (0, 1),
    m.DCGM_PROF_SM_OCCUPANCY.name: (0, 1), m.DCGM_PROF_PIPE_TENSOR_ACTIVE.name: (0, 1),
    m.DCGM_PROF_DRAM_ACTIVE.name: (0, 1),
}
GPM_CLAIMED = (m.DCGM_PROF_GR_ENGINE_ACTIVE, m.DCGM_PROF_SM_ACTIVE, m.DCGM_PROF_SM_OCCUPANCY,
               m.DCGM_PROF_PIPE_TENSOR_ACTIVE, m.DCGM_PROF_DRAM_ACTIVE)


def fake_nvml() -> Any:
    """A Hopper-like fake: GPM on, Gen5 x16."""
    gpm = {1: 1.0, 2: 0.5, 3: 0.2, 5: 0.0, 10: 0.3, 11: 0.0, 12: 0.1, 13: 0.0, 20: 1.0, 21: 2.0}
    return FakeNVML([FakeGPU(name="NVIDIA H200 (fake)", gpm=gpm, link_gen=5, max_link_gen=5,
                             memory_total=143771 * 1024 * 1024, util_gpu=0)])


def _ms(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    p95 = s[int(0.95 * (len(s) - 1))]
    return {"median_ms": round(statistics.median(s) * 1e3, 3), "p95_ms": round(p95 * 1e3, 3),
            "max_ms": round(s[-1] * 1e3, 3), "n": len(s)}


def pcie_call(nv: Any, n: int = 10) -> dict[str, Any]:
    """How long one nvmlDeviceGetPcieThroughput call blocks, and what it says (KB/s)."""
    h = nv.nvmlDeviceGetHandleByIndex(0)
    took, vals = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        try:
            vals.append(nv.nvmlDeviceGetPcieThroughput(h, 1))  # RX
        except nv.NVMLError as exc:
            return {"error": str(exc)}
        took.append(time.perf_counter() - t0)
    return {**_ms(took), "rx_kbs": vals}


def gpm_support(nv: Any) -> dict[str, Any]:
    """GPM support as NVML answers it."""
    h = nv.nvmlDeviceGetHandleByIndex(0)
    fn = getattr(nv, "nvmlGpmQueryDeviceSupport", None)
    if fn is None:
        return {"supported": False, "why": "binding has no GPM"}
    try:
        return {"supported": bool(fn(h).isSupportedDevice)}
    except nv.NVMLError as exc:
        return {"supported": False, "why": str(exc)}


def gpm_probe(nv: Any, gap: float = 0.5) -> dict[str, Any]:
    """Every GPM metric inferwatch asks for, raw from NVML over ``gap`` seconds: {id: [return, value]}."""
    from inferwatch.collect._gpm import GPM_METRICS

    h = nv.nvmlDeviceGetHandleByIndex(0)
    try:
        a, b = nv.nvmlGpmSampleAlloc(), nv.nvmlGpmSampleAlloc()
        nv.nvmlGpmSampleGet(h, a)
        time.sleep(gap)
        t0 = time.perf_counter()
        nv.nvmlGpmSampleGet(h, b)
        sample_ms = (time.perf_counter() - t0) * 1e3
        req = nv.c_nvmlGpmMetricsGet_t()
        req.version = getattr(nv, "NVML_GPM_METRICS_GET_VERSION", 1)
        ids = list(GPM_METRICS)
        req.numMetrics, req.sample1, req.sample2 = len(ids), a, b
        for i, mid in enumerate(ids):
            req.metrics[i].metricId = mid
        t0 = time.perf_counter()
        nv.nvmlGpmMetricsGet(req)
        get_ms = (time.perf_counter() - t0) * 1e3
        raw = {str(mid): [int(req.metrics[i].nvmlReturn), float(req.metrics[i].value)]
               for i, mid in enumerate(ids)}
        nv.nvmlGpmSampleFree(a)
        nv.nvmlGpmSampleFree(b)
    except Exception as exc:  # a report of what the driver says, whatever it says
        return {"error": repr(exc)}
    return {"sample_get_ms": round(sample_ms, 3), "metrics_get_ms": round(get_ms, 3), "raw": raw}


def collector_cost(nv: Any, n: int = 20, gap: float = 0.25) -> tuple[dict[str, Any], dict[str, float]]:
    """Wall time per GpuCollector.collect() (GPM on where supported), and the last values by name."""
    col = GpuCollector(nvml=nv)
    took, last = [], {}
    for i in range(n):
        t0 = time.perf_counter()
        batch = col.collect(time.time())
        took.append(time.perf_counter() - t0)
        if i < n - 1:
            time.sleep(gap)
        last = {s.labels.name: s.v for s in batch if s.labels.get("gpu") == "0" and "reason" not in s.labels}
    out = {**_ms(took), "first_ms": round(took[0] * 1e3, 3), "gpm_gpus": col.gpm_gpus}
    return out, last


def scrape_cost(nv: Any, out: Path, n: int = 30) -> dict[str, Any]:
    """/metrics latency of a running exporter (1 s collection) and its exposition."""
    exp = Exporter(interval=1.0, nvml=nv)
    port = exp.serve("127.0.0.1", 0)
    try:
        time.sleep(2.5)  # two collections: GPM needs a pair of samples
        took, body = [], b""
        for _ in range(n):
            t0 = time.perf_counter()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
                body = r.read()
            took.append(time.perf_counter() - t0)
            time.sleep(0.1)
    finally:
        exp.close()
    (out / "exposition-idle.prom").write_bytes(body)
    loop = {s.labels["collector"]: round(s.v * 1e3, 3) for s in exp.loop.snapshot()
            if s.labels.name == m.COLLECT_DURATION.name}
    return {**_ms(took), "loop_collect_ms": loop}


def check(values: dict[str, float], gpm: bool) -> list[str]:
    """Problems: claimed series missing or out of range."""
    bad = []
    for name, (lo, hi) in RANGES.items():
        if name not in values:
            is_gpm = name in {s.name for s in GPM_CLAIMED}
            if is_gpm and not gpm:
                continue
            if name == m.DCGM_XID_ERRORS.name:
                continue  # XID events may be refused in a VM: reported separately
            bad.append(f"{name} missing")
        elif not lo <= values[name] <= hi:
            bad.append(f"{name}={values[name]} outside [{lo}, {hi}]")
    return bad


def main() -> int:
    """Measure and write the report; 1 when a check failed."""
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--fake", action="store_true")
    p.add_argument("--pcie-only", action="store_true", help="only time the PCIe call (during a copy loop)")
    args = p.parse_args()
    out = Path(args.out)
    nv = fake_nvml() if args.fake else load_nvml().api
    nv.nvmlInit()
    if args.pcie_only:
        rep = {"pcie_call_under_load": pcie_call(nv, 10)}
        (out / "measure-pcie-load.json").write_text(json.dumps(rep, indent=1))
        print(json.dumps(rep))
        return 0
    h = nv.nvmlDeviceGetHandleByIndex(0)
    name = nv.nvmlDeviceGetName(h)
    rep: dict[str, Any] = {
        "gpu": name.decode() if isinstance(name, bytes) else str(name),
        "driver": str(getattr(nv, "nvmlSystemGetDriverVersion", lambda: "?")()),
        "nvidia_ml_py": getattr(nv, "__version__", "fake" if args.fake else "?"),
        "gpm": gpm_support(nv),
        "gpm_probe": gpm_probe(nv),
        "pcie_call_idle": pcie_call(nv),
    }
    rep["collect"], values = collector_cost(nv)
    rep["scrape"] = scrape_cost(nv, out)
    rep["values_idle"] = values
    rep["problems"] = check(values, bool(rep["gpm"].get("supported")))
    (out / "measure.json").write_text(json.dumps(rep, indent=1, default=str))
    print(json.dumps(rep, indent=1, default=str))
    return 1 if rep["problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
