"""Evidence for the GPU-utilisation playbook, gathered from the store, NVML and nvidia-smi."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from inferwatch.collect import CLOCK_EVENT_REASONS, GpuCollector
from inferwatch.diagnose._nvidia_smi import parse_pcie_query, topology_crossings
from inferwatch.diagnose._runner import CommandResult, CommandRunner
from inferwatch.diagnose._series import Segment, counter_increase, counter_rate, gauge_last, gauge_mean
from inferwatch.model import METRIC_NAME_LABEL, Matcher, MatchOp, MetricSpec, Sample
from inferwatch.model import metrics as m
from inferwatch.store import Series

__all__ = ["Change", "Evidence", "Link", "SeriesSource", "gather_evidence"]

_THERMAL = {b for b, r in CLOCK_EVENT_REASONS.items() if r in ("sw_thermal", "hw_thermal", "hw_slowdown")}
_POWER = {b for b, r in CLOCK_EVENT_REASONS.items() if r in ("power_cap", "hw_power_brake")}
# The whole `-q`: its PCI section has the link; driver 580's nvidia-smi refuses `-q -d PCIE`
# ("Failed to parse --display/-d flags", exit 2, seen on an H200): PCIE is no display filter.
_COMMANDS = (("nvidia-smi", "topo", "-m"), ("nvidia-smi", "-q"))


class SeriesSource(Protocol):
    """What the playbook reads: a store's ``select`` (a ``Store`` or a ``QueryRangeSource``)."""

    def select(self, matchers: Sequence[Matcher], start: float, end: float) -> list[Series]:
        """Series matching every matcher with samples in ``[start, end]``."""
        ...


@dataclass(frozen=True)
class Change:
    """A quantity in the first third of the window (``before``) and the last third (``recent``)."""

    before: float | None = None
    recent: float | None = None

    @property
    def known(self) -> bool:
        """Both ends measured."""
        return self.before is not None and self.recent is not None

    @property
    def delta(self) -> float:
        """``recent - before`` (0 when unknown)."""
        return (self.recent - self.before) if self.before is not None and self.recent is not None else 0.0

    @property
    def ratio(self) -> float | None:
        """``recent / before`` (None when unknown or ``before`` is 0)."""
        if self.before is None or self.recent is None or self.before == 0:
            return None
        return self.recent / self.before


@dataclass(frozen=True)
class Link:
    """PCIe link state of the GPU and where it was read (``nvml``, ``store``, ``nvidia-smi``)."""

    gen: int | None = None
    max_gen: int | None = None
    width: int | None = None
    max_width: int | None = None
    source: str = ""

    @property
    def downgraded(self) -> bool:
        """Whether the link runs below its maximum generation or width."""
        return bool(
            (self.gen and self.max_gen and self.gen < self.max_gen)
            or (self.width and self.max_width and self.width < self.max_width)
        )


@dataclass(frozen=True)
class Evidence:
    """Everything the causes are judged on (``None``/unknown where there was no data)."""

    window: Segment
    before: Segment
    recent: Segment
    gpu: dict[str, str] = field(default_factory=dict)
    gpu_util: Change = Change()  # percent, of ``util_metric``
    # The profiling metrics say how busy the SMs were; DCGM_FI_DEV_GPU_UTIL only that a
    # kernel ran in the sample period (dcgm-exporter#341), so they are preferred.
    util_metric: str = m.DCGM_GPU_UTIL.name
    device_util: Change = Change()  # DCGM_FI_DEV_GPU_UTIL, percent, kept beside a profiling one
    tensor_active: Change = Change()  # 0..1
    qps: Change = Change()
    process_cpu: Change = Change()  # cores
    host_cpu_busy: Change = Change()  # fraction of all CPUs
    pcie_rx: Change = Change()  # bytes/s
    pcie_tx: Change = Change()
    link: Link = Link()
    pcie_replays: float | None = None  # increase over the window
    fb_used: Change = Change()  # MiB
    fb_total: float | None = None
    rss: Change = Change()  # bytes
    gc_rate: Change = Change()  # collections per second, all generations
    gc_pause: Change = Change()  # fraction of time paused in GC
    thermal_fraction: float | None = None  # of recent samples with a thermal clock event
    power_fraction: float | None = None
    # the same in the first third: an event that was as frequent before the drop does not explain it
    # (an H200 reported SW power cap in 97-100 % of samples at 290 W and at 600 W of 700 W)
    thermal_before: float | None = None
    power_before: float | None = None
    sm_clock: Change = Change()
    temperature: float | None = None
    power: float | None = None
    power_limit: float | None = None
    topology: tuple[str, ...] = ()
    commands: tuple[CommandResult, ...] = ()
    service: str | None = None
    # ONNX Runtime sessions that asked for an accelerator and run on the CPU (their info series in
    # the recent third: what ExecutionProviderFallback pages on), one line each
    provider_fallbacks: tuple[str, ...] = ()


def _sel(store: SeriesSource, spec: MetricSpec, seg: Segment, extra: dict[str, str]) -> list[Series]:
    matchers = [Matcher(METRIC_NAME_LABEL, MatchOp.EQ, spec.name)]
    matchers += [Matcher(k, MatchOp.EQ, v) for k, v in sorted(extra.items())]
    return store.select(matchers, seg.start, seg.end)


class _Reader:
    def __init__(self, store: SeriesSource, window: Segment, before: Segment, recent: Segment) -> None:
        self.store, self.window, self.before, self.recent = store, window, before, recent

    def series(self, spec: MetricSpec, extra: dict[str, str]) -> list[Series]:
        return _sel(self.store, spec, self.window, extra)

    def gauge(self, spec: MetricSpec, extra: dict[str, str]) -> Change:
        s = self.series(spec, extra)
        return Change(gauge_mean(s, self.before), gauge_mean(s, self.recent))

    def rate(self, spec: MetricSpec, extra: dict[str, str]) -> Change:
        s = self.series(spec, extra)
        return Change(counter_rate(s, self.before), counter_rate(s, self.recent))

    def last(self, spec: MetricSpec, extra: dict[str, str]) -> float | None:
        return gauge_last(self.series(spec, extra), self.window)


# Utilisation metrics by preference, with the factor to percent.
_UTIL_METRICS = (
    (m.DCGM_PROF_SM_ACTIVE, 100.0), (m.DCGM_PROF_PIPE_TENSOR_ACTIVE, 100.0), (m.DCGM_GPU_UTIL, 1.0),
)


def _utilisation(r: _Reader, focus: dict[str, str]) -> tuple[Change, str]:
    """The most telling utilisation measured at both ends, in percent, and its metric name."""
    for spec, scale in _UTIL_METRICS:
        ch = r.gauge(spec, focus)
        if ch.known:
            return Change(ch.before * scale, ch.recent * scale), spec.name  # type: ignore[operator]
    return Change(), m.DCGM_GPU_UTIL.name


def _focus_gpu(r: _Reader, gpu: str | None) -> dict[str, str]:
    """Labels of the GPU whose utilisation fell most (or the one asked for by index or UUID)."""
    best: tuple[float, dict[str, str]] | None = None
    found = (r.series(spec, {}) for spec, _ in _UTIL_METRICS)
    for s in next((ss for ss in found if ss), []):
        labels = dict(s.labels.without_name())
        if gpu is not None and gpu not in (labels.get("gpu"), labels.get("UUID")):
            continue
        ch = Change(gauge_mean([s], r.before), gauge_mean([s], r.recent))
        score = ch.delta if ch.known else float("inf")
        if best is None or score < best[0]:
            best = (score, labels)
    return {} if best is None else best[1]


def _host_cpu_busy(r: _Reader, target: dict[str, str]) -> Change:
    series = r.series(m.NODE_CPU_SECONDS_TOTAL, target)
    idle = [s for s in series if s.labels.get("mode") == "idle"]
    out = []
    for seg in (r.before, r.recent):
        total, idle_rate = counter_rate(series, seg), counter_rate(idle, seg)
        out.append(None if not total or idle_rate is None else max(0.0, 1.0 - idle_rate / total))
    return Change(out[0], out[1])


def _provider_fallbacks(r: _Reader, service: str | None) -> tuple[str, ...]:
    """Sessions whose info says: asked for an accelerator's provider, runs on the CPU's."""
    out = set()
    for s in _sel(r.store, m.ONNX_SESSION_INFO, r.recent, {"service": service} if service else {}):
        get = s.labels.get
        asked = get("requested_provider") or ""
        if get("provider") != m.CPU_PROVIDER or asked not in m.ACCELERATOR_PROVIDERS:
            continue
        nodes = get("cpu_nodes") or ""
        out.add(f"ONNX Runtime session of {get('model') or '?'} {get('version') or ''} on "
                f"{get('service') or '?'} asked for {asked} and runs on {m.CPU_PROVIDER}"
                + (f" (nodes on the CPU: {nodes})" if nodes else ""))
    return tuple(sorted(out))


def _event_fraction(
    r: _Reader, gpu: dict[str, str], bits: set[int], seg: Segment | None = None,
) -> float | None:
    seg = seg or r.recent
    values = [
        v for s in r.series(m.DCGM_CLOCKS_EVENT_REASONS, gpu)
        for t, v in zip(s.t, s.v, strict=True) if seg.start <= t <= seg.end and v == v
    ]
    if not values:
        return None
    return sum(1 for v in values if any(int(v) & b for b in bits)) / len(values)


def _live_link(nvml: Any, now: float, gpu: dict[str, str]) -> Link | None:
    """The link as NVML reports it now, for the focus GPU (matched by UUID) if this host has it."""
    samples: list[Sample] = GpuCollector(nvml=nvml, hostname=gpu.get("Hostname", "")).collect(now)
    mine = [s for s in samples if "UUID" in s.labels and s.labels["UUID"] == gpu.get("UUID")]
    if not mine:
        return None
    by = {s.labels.name: int(s.v) for s in mine}
    return Link(
        by.get(m.DCGM_PCIE_LINK_GEN.name), by.get(m.DCGM_PCIE_MAX_LINK_GEN.name),
        by.get(m.DCGM_PCIE_LINK_WIDTH.name), by.get(m.DCGM_PCIE_MAX_LINK_WIDTH.name), "nvml",
    )


def _link(r: _Reader, gpu: dict[str, str], live: Link | None, commands: Sequence[CommandResult]) -> Link:
    if live is not None and live.gen is not None:
        return live
    vals = [r.last(spec, gpu) for spec in (
        m.DCGM_PCIE_LINK_GEN, m.DCGM_PCIE_MAX_LINK_GEN, m.DCGM_PCIE_LINK_WIDTH, m.DCGM_PCIE_MAX_LINK_WIDTH)]
    if vals[0] is not None:
        g, mg, w, mw = (None if v is None else int(v) for v in vals)
        return Link(g, mg, w, mw, "store")
    for res in commands:
        if res.ok and "-q" in res.argv:
            for link in parse_pcie_query(res.stdout):
                if link.pci_bus_id.lower() == gpu.get("pci_bus_id", "").lower() and link.gen is not None:
                    return Link(link.gen, link.max_gen, link.width, link.max_width, "nvidia-smi")
    return Link()


def gather_evidence(
    store: SeriesSource, *, now: float, since: float, service: str | None = None, gpu: str | None = None,
    nvml: Any = None, runner: CommandRunner | None = None,
) -> Evidence:
    """Read the last ``since`` seconds before ``now``: first third "before", last third "recent"."""
    window = Segment(now - since, now)
    third = since / 3.0
    r = _Reader(store, window, Segment(window.start, window.start + third), Segment(now - third, now))
    focus = _focus_gpu(r, gpu)
    # host and process series of the exporter that served the GPU
    target: dict[str, str] = {k: focus[k] for k in ("job", "instance") if k in focus}
    commands = tuple(runner.run(list(c), timeout=20.0) for c in _COMMANDS) if runner else ()
    live = _live_link(nvml, now, focus) if nvml is not None and focus else None
    topo = next((topology_crossings(c.stdout) for c in commands if c.ok and "topo" in c.argv), [])
    pause = r.rate(m.PYTHON_GC_PAUSE_SECONDS_TOTAL, target)
    replays = counter_increase(r.series(m.DCGM_PCIE_REPLAY, focus), window) if focus else None
    util, util_metric = _utilisation(r, focus) if focus else (Change(), m.DCGM_GPU_UTIL.name)
    return Evidence(
        window=window, before=r.before, recent=r.recent, gpu=focus, service=service,
        gpu_util=util, util_metric=util_metric,
        device_util=r.gauge(m.DCGM_GPU_UTIL, focus) if focus else Change(),
        tensor_active=r.gauge(m.DCGM_PROF_PIPE_TENSOR_ACTIVE, focus) if focus else Change(),
        qps=r.rate(m.REQUESTS_TOTAL, {"service": service} if service else {}),
        process_cpu=r.rate(m.PROCESS_CPU_SECONDS_TOTAL, target),
        host_cpu_busy=_host_cpu_busy(r, target),
        pcie_rx=r.gauge(m.DCGM_PCIE_RX, focus) if focus else Change(),
        pcie_tx=r.gauge(m.DCGM_PCIE_TX, focus) if focus else Change(),
        link=_link(r, focus, live, commands) if focus else Link(),
        pcie_replays=None if replays is None else replays[0],
        fb_used=r.gauge(m.DCGM_FB_USED, focus) if focus else Change(),
        fb_total=r.last(m.DCGM_FB_TOTAL, focus) if focus else None,
        rss=r.gauge(m.PROCESS_RSS, target),
        gc_rate=r.rate(m.PYTHON_GC_COLLECTIONS_TOTAL, target),
        gc_pause=pause,
        thermal_fraction=_event_fraction(r, focus, _THERMAL) if focus else None,
        power_fraction=_event_fraction(r, focus, _POWER) if focus else None,
        thermal_before=_event_fraction(r, focus, _THERMAL, r.before) if focus else None,
        power_before=_event_fraction(r, focus, _POWER, r.before) if focus else None,
        sm_clock=r.gauge(m.DCGM_SM_CLOCK, focus) if focus else Change(),
        temperature=r.gauge(m.DCGM_GPU_TEMP, focus).recent if focus else None,
        power=r.gauge(m.DCGM_POWER_USAGE, focus).recent if focus else None,
        power_limit=r.last(m.DCGM_POWER_LIMIT, focus) if focus else None,
        topology=tuple(topo), commands=commands,
        provider_fallbacks=_provider_fallbacks(r, service),
    )
