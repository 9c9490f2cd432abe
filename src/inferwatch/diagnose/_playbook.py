"""The playbook "GPU utilisation fell from 90 % to 30 % while QPS is unchanged", automated."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from inferwatch.diagnose._causes import Finding, judge_all
from inferwatch.diagnose._evidence import Evidence, SeriesSource, gather_evidence
from inferwatch.diagnose._runner import CommandRunner
from inferwatch.model import metrics as m

__all__ = ["DROP_POINTS", "GpuDiagnosis", "diagnose_gpu"]

DROP_POINTS = 15.0  # utilisation must fall at least this many percentage points
_DROP_RATIO = 0.8  # ... and to at most this fraction of before
_QPS_STEADY = (0.8, 1.25)  # recent/before QPS within this band counts as unchanged


@dataclass(frozen=True)
class GpuDiagnosis:
    """The verdict: ``status`` is ``diagnosed``, ``no_drop`` or ``not_enough_data``."""

    status: str
    summary: str
    findings: tuple[Finding, ...]
    evidence: Evidence
    missing: tuple[str, ...]

    @property
    def top(self) -> Finding | None:
        """The most likely cause with any support, if any."""
        return next((f for f in self.findings if f.confidence > 0), None)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (``--json``)."""
        ev = self.evidence
        return {
            "status": self.status,
            "summary": self.summary,
            "window": {"start": ev.window.start, "end": ev.window.end},
            "gpu": ev.gpu,
            "utilisation_metric": ev.util_metric,
            "service": ev.service,
            "causes": [asdict(f) for f in self.findings],
            "evidence": _evidence_json(ev),
            "missing": list(self.missing),
        }


def _evidence_json(ev: Evidence) -> dict[str, Any]:
    out = asdict(ev)
    for key in ("window", "before", "recent", "gpu", "service"):
        out.pop(key)
    out["commands"] = [
        {"command": c.command, "returncode": c.returncode, "stdout": c.stdout[:4000]} for c in ev.commands
    ]
    out["link"]["downgraded"] = ev.link.downgraded
    return out


def _util_name(ev: Evidence) -> str:
    if ev.util_metric == m.DCGM_GPU_UTIL.name:
        return "utilisation"
    name = "SM active" if ev.util_metric == m.DCGM_PROF_SM_ACTIVE.name else "tensor active"
    d = ev.device_util
    if d.known:  # show what GPU_UTIL said: it may not have moved at all (dcgm-exporter#341)
        return f"{name} (GPU_UTIL {d.before:.0f}% → {d.recent:.0f}%)"
    return name


def _missing(ev: Evidence) -> tuple[str, ...]:
    out = []
    if not ev.gpu_util.known:
        out.append("GPU utilisation (DCGM_FI_DEV_GPU_UTIL): scrape `inferwatch exporter` or dcgm-exporter")
    if not ev.qps.known:
        svc = f'{{service="{ev.service}"}}' if ev.service else ""
        out.append(f"QPS (inferwatch_requests_total{svc}): instrument the service with the SDK")
    if not ev.process_cpu.known:
        out.append("server process CPU (inferwatch_process_cpu_seconds_total)")
    if not ev.pcie_rx.known:
        out.append("PCIe throughput (DCGM_FI_PROF_PCIE_RX_BYTES)")
    if not ev.gc_rate.known:
        out.append("Python GC (inferwatch_python_gc_collections_total): in-process collector only")
    return tuple(out)


def diagnose_gpu(
    store: SeriesSource, *, now: float, since: float = 1800.0, service: str | None = None,
    gpu: str | None = None, nvml: Any = None, runner: CommandRunner | None = None,
) -> GpuDiagnosis:
    """Gather the evidence for the last ``since`` seconds and rank the causes.

    ``nvml`` (pynvml or a ``FakeNVML``) adds the live link state; ``runner``
    runs ``nvidia-smi topo -m`` and ``nvidia-smi -q``.
    """
    ev = gather_evidence(store, now=now, since=since, service=service, gpu=gpu, nvml=nvml, runner=runner)
    missing = _missing(ev)
    u = ev.gpu_util
    if not u.known or u.before is None or u.recent is None:
        return GpuDiagnosis("not_enough_data", "not enough data: no GPU utilisation in both the first and "
                            "the last third of the window", (), ev, missing)
    findings = tuple(judge_all(ev))
    change = f"GPU {ev.gpu.get('gpu', '?')} {_util_name(ev)} {u.before:.0f}% → {u.recent:.0f}%"
    q = ev.qps.ratio
    qps = ("QPS unknown" if q is None else
           f"QPS {ev.qps.before:.1f} → {ev.qps.recent:.1f}"
           + (" (unchanged)" if _QPS_STEADY[0] <= q <= _QPS_STEADY[1] else ""))
    dropped = u.before - u.recent >= DROP_POINTS and u.recent <= _DROP_RATIO * u.before
    if not dropped:
        summary = f"{change}, {qps}: no utilisation drop to explain"
        return GpuDiagnosis("no_drop", summary, findings, ev, missing)
    top = next((f for f in findings if f.confidence > 0), None)
    verdict = "no cause stands out" if top is None else f"most likely: {top.title}"
    return GpuDiagnosis("diagnosed", f"{change}, {qps}; {verdict}", findings, ev, missing)
