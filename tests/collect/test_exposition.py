"""Exposition: catalog types and help, and promtool's verdict on the exporter's output."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
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

H200 = Path(__file__).parent / "fixtures" / "h200"


def _exposition() -> str:
    stats = GcStats().install()
    try:
        hopper = {1: 90.0, 2: 80.0, 3: 30.0, 5: 60.0, 10: 20.0, 20: 100.0, 21: 300.0, 60: 0.0, 61: 0.0}
        gpus = [FakeGPU(uuid="GPU-a", pending_xids=[13], gpm=hopper),
                FakeGPU(uuid="GPU-b", minor=1, clock_event_reasons=4)]
        gpu = GpuCollector(nvml=FakeNVML(gpus), hostname="h")
        loop = CollectLoop(
            [HostCollector(), ProcessCollector(gc_stats=stats), gpu],
            interval=15.0, clock=SimulatedClock(1000.0),
        )
        loop.tick()
        loop.tick()  # GPM metrics need two samples
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


@pytest.mark.parametrize("source", ["fake", "h200-busy", "h200-h2d"])
def test_promtool_check_metrics_accepts_the_output(require_tool: Callable[..., str], source: str) -> None:
    promtool = require_tool("promtool")
    # the fake's, and what the exporter served on a real H200 (GPM on)
    text = _exposition() if source == "fake" else (H200 / f"exposition-{source[5:]}.prom").read_text()
    assert "DCGM_FI_PROF_SM_ACTIVE" in text
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
