"""Exposition: catalog types and help, and promtool's verdict on the exporter's output."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from inferwatch.collect import (
    CollectLoop,
    FakeGPU,
    FakeNVML,
    GcStats,
    GpuCollector,
    HostCollector,
    ProcessCollector,
    SampleCollector,
)
from inferwatch.model import CATALOG, MetricKind, SimulatedClock


def _exposition() -> str:
    stats = GcStats().install()
    try:
        gpus = [FakeGPU(uuid="GPU-a", pending_xids=[13]),
                FakeGPU(uuid="GPU-b", minor=1, clock_event_reasons=4)]
        gpu = GpuCollector(nvml=FakeNVML(gpus), hostname="h")
        loop = CollectLoop(
            [HostCollector(), ProcessCollector(gc_stats=stats), gpu],
            interval=15.0, clock=SimulatedClock(1000.0),
        )
        loop.tick()
        reg = CollectorRegistry()
        reg.register(SampleCollector(loop.snapshot))
        return generate_latest(reg).decode()
    finally:
        stats.uninstall()


def test_types_and_help_come_from_the_catalog() -> None:
    families = {f.name: f for f in text_string_to_metric_families(_exposition())}
    assert len(families) >= 40
    for name, fam in families.items():
        spec = next(s for s in CATALOG.values() if s.family == name or s.name == name)
        # rule: counters keep their _total name; DCGM's suffix-less counters are untyped
        want = {MetricKind.COUNTER: "counter", MetricKind.GAUGE: "gauge"}.get(spec.kind, "unknown")
        assert fam.type == want, name
        assert fam.documentation == spec.help


# promtool's lint remarks that are inherited from the names we must keep:
# node_exporter's meminfo fields and DCGM's modelName/UUID/Hostname labels are
# camelCase (node_exporter's own output draws the same remarks), and DCGM's
# DCGM_FI_DEV_PCIE_REPLAY_COUNTER contains a type name.
def _inherited(problem: str) -> bool:
    name, _, message = problem.partition(" ")
    if "'snake_case' not 'camelCase'" in message:
        return name.startswith(("node_memory_", "DCGM_FI_")) or "label names" in message
    return name == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER" and "include type 'counter'" in message


def test_promtool_check_metrics_accepts_the_output(require_tool: Callable[..., str]) -> None:
    promtool = require_tool("promtool")
    text = _exposition()
    res = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60,
    )
    problems = [line for line in (res.stdout + res.stderr).splitlines() if line.strip()]
    # rule: exit 0 (clean) or 3 (lint remarks only); 1 would be a parse error
    assert res.returncode in (0, 3), problems
    assert not any("error while linting" in p for p in problems), problems
    assert [p for p in problems if not _inherited(p)] == []
    # and our own names are clean when not carrying DCGM's labels
    assert not any(p.startswith("inferwatch_") and "label names" not in p for p in problems)
