"""The causes of a GPU-utilisation drop at steady QPS, each judged on the evidence.

Every judge returns a :class:`Finding` with a confidence in [0, 0.95], the
facts that moved it, and the next command to run. Weights are additive and
documented next to each fact, so a report can be traced back to its numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from inferwatch.diagnose._evidence import Change, Evidence

__all__ = ["CAUSES", "Finding", "judge_all"]

# Bytes per second per lane and direction, by PCIe generation (after encoding overhead).
_LANE_BPS = {1: 250e6, 2: 500e6, 3: 984.6e6, 4: 1969e6, 5: 3938e6, 6: 7563e6}
_CAP = 0.95


@dataclass(frozen=True)
class Finding:
    """One candidate cause: how sure, why, and what to run next."""

    cause: str
    title: str
    confidence: float
    evidence: tuple[str, ...]
    next_steps: tuple[str, ...]


def _gbs(v: float | None) -> str:
    return "?" if v is None else f"{v / 1e9:.2f} GB/s"


def _ch(c: Change, fmt: Callable[[float | None], str]) -> str:
    return f"{fmt(c.before)} → {fmt(c.recent)}"


def _pct(v: float | None) -> str:
    return "?" if v is None else f"{v:.0f}%"


def _frac(v: float | None) -> str:
    return "?" if v is None else f"{100 * v:.0f}%"


def _cores(v: float | None) -> str:
    return "?" if v is None else f"{v:.2f} cores"


def _clamp(x: float, hi: float = 1.0) -> float:
    return max(0.0, min(hi, x))


def _finding(cause: str, title: str, score: float, facts: list[str], steps: tuple[str, ...]) -> Finding:
    return Finding(cause, title, round(_clamp(score, _CAP), 2), tuple(facts), steps)


def _rise(recent: float | None, before: float | None) -> float:
    """How much more often a clock event was active recently than before (0 when not more often)."""
    return max(0.0, (recent or 0.0) - (before or 0.0))


def _cpu_rose(ev: Evidence) -> bool:
    r = ev.process_cpu.ratio
    return ev.process_cpu.delta >= 0.25 and (r is None or r >= 1.3)


def _rx_fell(ev: Evidence) -> bool:
    r = ev.pcie_rx.ratio
    return r is not None and r <= 0.7


def cpu_fallback(ev: Evidence) -> Finding:
    """Preprocessing (decode, resize, tokenise) or inference itself moved from the GPU to the CPU."""
    score, facts = 0.0, []
    if ev.provider_fallbacks:  # the runtime says so itself (the ExecutionProviderFallback alert)
        score += 0.6
        facts += [f"{line} (alert ExecutionProviderFallback)" for line in ev.provider_fallbacks]
    if _cpu_rose(ev):
        score += 0.6 * _clamp(ev.process_cpu.delta / 0.75)  # +0.6 at three quarters of a core more
        facts.append(f"server process CPU rose {_ch(ev.process_cpu, _cores)}")
    if ev.host_cpu_busy.recent is not None and ev.host_cpu_busy.recent >= 0.85:
        score += 0.2
        facts.append(f"host CPUs {_frac(ev.host_cpu_busy.recent)} busy")
    if score and _rx_fell(ev):
        score += 0.15  # less data reaches the GPU because the CPU now does the work
        facts.append(f"PCIe RX fell {_ch(ev.pcie_rx, _gbs)}")
    if ev.provider_fallbacks:
        return _finding("cpu_fallback", "inference fell back to the CPU (ONNX Runtime execution provider)",
                        score, facts, _PROVIDER_STEPS)
    return _finding("cpu_fallback", "preprocessing fell back to the CPU", score, facts, (
        "py-spy top --pid <server pid>   # which Python functions burn the CPU",
        "nsys profile --stats=true python model.py   # CPU ranges vs GPU kernels",
    ))


_PROVIDER_STEPS = (
    "python -c 'import onnxruntime as ort; print(ort.get_available_providers())'   # is the provider there?",
    "ldd $(python -c 'import onnxruntime,os; print(os.path.dirname(onnxruntime.__file__))')"
    "/capi/libonnxruntime_providers_cuda.so | grep 'not found'   # missing CUDA / cuDNN libraries",
    "onnxruntime.set_default_logger_severity(0) before the session, or enable_profiling   # why, which nodes",
)


def memory_leak(ev: Evidence) -> Finding:
    """Memory grows (GPU framebuffer or process RSS) and garbage collection runs often."""
    score, facts = 0.0, []
    if ev.fb_used.known and ev.fb_total:
        growth = ev.fb_used.delta / ev.fb_total
        if growth >= 0.02:
            score += 0.35 * _clamp(growth / 0.1)  # +0.35 when a tenth of the framebuffer was added
            facts.append(f"GPU memory used grew {ev.fb_used.before:.0f} → {ev.fb_used.recent:.0f} MiB "
                         f"of {ev.fb_total:.0f} MiB")
    rss = ev.rss.ratio
    if rss is not None and rss >= 1.1:
        score += 0.2 * _clamp((rss - 1.0) / 0.3)
        facts.append(f"process RSS grew {ev.rss.before / 2**20:.0f} → {ev.rss.recent / 2**20:.0f} MiB")  # type: ignore[operator]
    gc = ev.gc_rate
    if gc.recent is not None and gc.recent * 60 >= 1 and (gc.ratio is None or gc.ratio >= 2):
        score += 0.3
        facts.append(f"garbage collections rose to {gc.recent * 60:.1f}/min "
                     f"(from {0 if gc.before is None else gc.before * 60:.1f}/min)")
    if ev.gc_pause.recent is not None and ev.gc_pause.recent >= 0.02:
        score += 0.15
        facts.append(f"{_frac(ev.gc_pause.recent)} of the time paused in GC")
    return _finding("memory_leak", "memory leak with frequent garbage collection", score, facts, (
        "py-spy dump --pid <server pid>   # is a thread stuck in gc.collect?",
        "nvidia-smi --query-gpu=memory.used,memory.total --format=csv -l 5",
        "python -X tracemalloc=25 model.py   # then tracemalloc.take_snapshot().statistics('lineno')",
    ))


def pcie(ev: Evidence) -> Finding:
    """The PCIe link runs below its generation or width, or is saturated."""
    score, facts, link = 0.0, [], ev.link
    if link.downgraded:
        busy = ev.gpu_util.recent is not None and ev.gpu_util.recent >= 10
        score += 0.6 if busy else 0.3  # an idle GPU may lower its link to save power
        facts.append(f"PCIe link Gen{link.gen} x{link.width}, capable of Gen{link.max_gen} "
                     f"x{link.max_width} (from {link.source})")
    lane = _LANE_BPS.get(link.gen or 0)
    top = max(ev.pcie_rx.recent or 0.0, ev.pcie_tx.recent or 0.0)
    if lane and link.width and top >= 0.7 * lane * link.width:
        score += 0.4
        facts.append(f"PCIe at {_gbs(top)} of ~{_gbs(lane * link.width)} per direction: saturated")
    if ev.pcie_replays:
        score += 0.2
        facts.append(f"{ev.pcie_replays:.0f} PCIe replays in the window (link errors)")
    if score and ev.topology:
        score += 0.05
        facts.append("nvidia-smi topo -m: paths cross the CPU interconnect: " + "; ".join(ev.topology))
    return _finding("pcie", "PCIe contention or a downgraded link", score, facts, (
        "nvidia-smi -q | grep -A9 'GPU Link Info'   # PCIe Generation / Link Width: Max vs Current",
        "nvidia-smi topo -m   # GPUs and NICs sharing a switch or crossing sockets",
        f"sudo lspci -vvv -s {ev.gpu.get('pci_bus_id', '<bus id>')[-12:]} | grep -E 'LnkCap|LnkSta'",
    ))


def throttling(ev: Evidence) -> Finding:
    """Clocks are held down by temperature or the power limit."""
    score, facts = 0.0, []
    thermal, power = _rise(ev.thermal_fraction, ev.thermal_before), _rise(ev.power_fraction, ev.power_before)
    if thermal:
        score += 0.5 * _clamp(thermal / 0.5)
        facts.append(f"thermal clock events in {_frac(ev.thermal_fraction)} of recent samples "
                     f"(before: {_frac(ev.thermal_before or 0.0)})")
    if power:
        score += 0.4 * _clamp(power / 0.5)
        facts.append(f"power-cap clock events in {_frac(ev.power_fraction)} of recent samples "
                     f"(before: {_frac(ev.power_before or 0.0)})")
    r = ev.sm_clock.ratio
    if r is not None and r <= 0.85:
        score += 0.3
        facts.append(f"SM clock fell {ev.sm_clock.before:.0f} → {ev.sm_clock.recent:.0f} MHz")
    if ev.temperature is not None and ev.temperature >= 85:
        score += 0.1
        facts.append(f"GPU at {ev.temperature:.0f} C")
    if ev.power and ev.power_limit and ev.power >= 0.95 * ev.power_limit:
        score += 0.1
        facts.append(f"power {ev.power:.0f} W at the {ev.power_limit:.0f} W limit")
    return _finding("throttling", "thermal or power throttling", score, facts, (
        "nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER   # Clocks Event Reasons",
        "nvidia-smi dmon -s pucv   # power, utilisation, clocks, violations each second",
    ))


def input_starvation(ev: Evidence) -> Finding:
    """Requests arrive but the GPU waits for input: smaller batches, a slow loader or queue."""
    score, facts = 0.0, []
    if _rx_fell(ev):
        score += 0.45
        facts.append(f"PCIe RX fell {_ch(ev.pcie_rx, _gbs)}: less data reaches the GPU per second")
    if score and not _cpu_rose(ev):
        score += 0.15
        facts.append(f"server CPU did not rise ({_ch(ev.process_cpu, _cores)})")
    throttled = _rise(ev.thermal_fraction, ev.thermal_before) or _rise(ev.power_fraction, ev.power_before)
    if score and not ev.link.downgraded and not throttled:
        score += 0.15
        facts.append("no link downgrade or throttling")
    return _finding("input_starvation", "input starvation (the GPU waits for data)", score, facts, (
        "py-spy dump --pid <server pid>   # threads waiting on the queue, loader or network",
        "nsys profile --stats=true python model.py   # gaps between kernels, small batches",
    ))


def traffic_fell(ev: Evidence) -> Finding:
    """QPS fell with utilisation: less work, not a GPU problem."""
    r = ev.qps.ratio
    if r is None or r > 0.8:
        return _finding("traffic_fell", "traffic fell (not a GPU problem)", 0.0, [], ())
    return _finding("traffic_fell", "traffic fell (not a GPU problem)", 0.9, [
        f"QPS fell {ev.qps.before:.1f} → {ev.qps.recent:.1f} with the utilisation",
    ], ("check upstream: load balancer weights, client errors, a deploy that moved traffic",))


CAUSES: tuple[Callable[[Evidence], Finding], ...] = (
    cpu_fallback, memory_leak, pcie, throttling, input_starvation, traffic_fell,
)


def judge_all(ev: Evidence) -> list[Finding]:
    """Every cause judged, most likely first (ties keep the order of ``CAUSES``)."""
    return sorted((judge(ev) for judge in CAUSES), key=lambda f: -f.confidence)
