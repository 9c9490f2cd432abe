"""The exporter end to end on loopback, the collect loop, and the CLI verb."""

from __future__ import annotations

import threading

import httpx
import pytest

from inferwatch.cli import main
from inferwatch.collect import CollectLoop, Exporter, FakeGPU, FakeNVML, HostCollector
from inferwatch.model import Sample, SimulatedClock
from inferwatch.model import metrics as m


def test_serves_host_process_and_gpu_metrics() -> None:
    exp = Exporter(interval=15.0, nvml=FakeNVML([FakeGPU(util_gpu=42)]))
    port = exp.serve("127.0.0.1", 0)
    try:
        r = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10)
    finally:
        exp.close()
    assert r.status_code == 200
    body = r.text
    assert 'node_cpu_seconds_total{cpu="0",mode="idle"}' in body
    assert "inferwatch_process_resident_memory_bytes" in body
    assert 'inferwatch_python_gc_collections_total{generation="2"}' in body
    util = [line for line in body.splitlines() if line.startswith("DCGM_FI_DEV_GPU_UTIL{")]
    assert len(util) == 1 and util[0].endswith(" 42.0")
    assert 'inferwatch_gpu_collector_up{reason=""} 1.0' in body


class _Boom:
    name = "boom"

    def collect(self, now: float) -> list[Sample]:
        raise RuntimeError("sensor gone")


def test_gpu_can_be_switched_off() -> None:
    exp = Exporter(interval=15.0, gpu=False)
    port = exp.serve("127.0.0.1", 0)
    try:
        body = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    finally:
        exp.close()
    assert "node_load1" in body and "inferwatch_gpu_collector_up" not in body


def test_loop_keeps_the_others_when_one_collector_fails() -> None:
    clock = SimulatedClock(100.0)
    loop = CollectLoop([_Boom(), HostCollector()], interval=15.0, clock=clock)
    loop.tick()
    names = {s.labels.name for s in loop.snapshot()}
    assert m.NODE_LOAD1.name in names
    durations = {s.labels["collector"] for s in loop.snapshot() if s.labels.name == m.COLLECT_DURATION.name}
    assert durations == {"boom", "host"}
    assert all(s.t == 100.0 for s in loop.snapshot())


def test_loop_thread_collects_each_interval_and_stops() -> None:
    ticks = threading.Event()

    class Counting:
        name = "count"
        n = 0

        def collect(self, now: float) -> list[Sample]:
            Counting.n += 1
            if Counting.n >= 3:
                ticks.set()
            return []

    loop = CollectLoop([Counting()], interval=0.01)
    loop.start()
    try:
        assert ticks.wait(60), "the loop did not collect three times"
    finally:
        loop.stop(timeout=10)
    assert loop._thread is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["exporter", "--port", "70000"], "not a TCP port"),  # rule: port range checked
        (["exporter", "--port", "0", "--pid", "999999999"], "no such process"),  # rule: pid must exist
    ],
)
def test_cli_bad_arguments_are_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_busy_port_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    exp = Exporter(interval=15.0, nvml=FakeNVML([]))
    port = exp.serve("127.0.0.1", 0)
    try:
        assert main(["exporter", "--port", str(port)]) == 2
    finally:
        exp.close()
    assert "cannot listen on 127.0.0.1" in capsys.readouterr().err
