"""The terminal report of a GPU diagnosis."""

from __future__ import annotations

from inferwatch.diagnose._playbook import GpuDiagnosis
from inferwatch.model import metrics

_DEV_UTIL = metrics.DCGM_GPU_UTIL.name

__all__ = ["render_text"]


def _fmt(v: float | None, unit: str = "", scale: float = 1.0, digits: int = 1) -> str:
    return "?" if v is None else f"{v * scale:.{digits}f}{unit}"


def render_text(d: GpuDiagnosis) -> str:
    """A readable report: summary, ranked causes with evidence and next steps, the evidence table."""
    ev = d.evidence
    lines = [f"inferwatch diagnose gpu — {d.summary}", ""]
    if d.status == "not_enough_data":
        lines.append("Missing data:")
        lines += [f"  - {m}" for m in d.missing]
        return "\n".join(lines) + "\n"
    lines.append("Causes, most likely first:")
    supported = [f for f in d.findings if f.confidence > 0]
    for rank, f in enumerate(supported, 1):
        lines.append(f"  {rank}. {f.title}  (confidence {f.confidence:.2f})")
        lines += [f"       - {fact}" for fact in f.evidence]
        lines += [f"       next: {step}" for step in f.next_steps[:2]]
    ruled = [f.title for f in d.findings if f.confidence == 0]
    if ruled:
        lines.append("  no support: " + "; ".join(ruled))
    lines += ["", "Evidence (first third → last third of the window):"]
    rows = [
        ("GPU utilisation" if ev.util_metric == _DEV_UTIL else "SM/tensor active",
         ev.gpu_util.before, ev.gpu_util.recent, "%", 1.0),
        *([("GPU_UTIL (kernel ran)", ev.device_util.before, ev.device_util.recent, "%", 1.0)]
          if ev.util_metric != _DEV_UTIL else []),
        *([("tensor active", ev.tensor_active.before, ev.tensor_active.recent, "%", 100.0)]
          if ev.tensor_active.known else []),
        ("QPS", ev.qps.before, ev.qps.recent, "/s", 1.0),
        ("server CPU (cores)", ev.process_cpu.before, ev.process_cpu.recent, "", 1.0),
        ("host CPU busy", ev.host_cpu_busy.before, ev.host_cpu_busy.recent, "%", 100.0),
        ("PCIe RX (GB/s)", ev.pcie_rx.before, ev.pcie_rx.recent, "", 1e-9),
        ("PCIe TX (GB/s)", ev.pcie_tx.before, ev.pcie_tx.recent, "", 1e-9),
        ("GPU memory used (MiB)", ev.fb_used.before, ev.fb_used.recent, "", 1.0),
        ("GC per minute", ev.gc_rate.before, ev.gc_rate.recent, "", 60.0),
        ("SM clock (MHz)", ev.sm_clock.before, ev.sm_clock.recent, "", 1.0),
    ]
    for name, before, recent, unit, scale in rows:
        lines.append(f"  {name:<24}{_fmt(before, unit, scale):>12} → {_fmt(recent, unit, scale):<12}")
    link = ev.link
    if link.gen is not None:
        lines.append(f"  {'PCIe link':<24}Gen{link.gen} x{link.width} (max Gen{link.max_gen} "
                     f"x{link.max_width}, {link.source})")
    for c in ev.commands:
        state = "not installed" if c.returncode is None else f"exit {c.returncode}"
        lines.append(f"  $ {c.command}: {state}")
    if d.missing:
        lines += ["", "Not measured: " + "; ".join(m.split(":")[0] for m in d.missing)]
    return "\n".join(lines) + "\n"
