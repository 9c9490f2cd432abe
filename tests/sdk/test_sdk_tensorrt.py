"""TensorRT under ``Monitor.instrument_tensorrt``, on a fake with TensorRT 10's interface (no GPU here)."""

from __future__ import annotations

import pytest
from fake_tensorrt import FakeBuilder, FakeBuilderConfig, FakeClock, FakeEngine, FakeStream

from inferwatch import ConfigError, InferwatchError
from inferwatch.sdk import Monitor, build_tensorrt_engine

SVC = {"service": "detector", "model": "yolo", "version": "v8"}
TRT = {**SVC, "runtime": "tensorrt"}


def test_execute_async_v3_until_the_stream_is_done_is_timed_in_phases() -> None:
    clock = FakeClock()
    stream = FakeStream(clock, compute_s=0.004)
    ctx = FakeEngine().create_execution_context()
    ctx.clock = clock
    with Monitor(**SVC, clock=clock) as m:
        c = m.instrument_tensorrt(ctx, synchronize=stream.synchronize)
        c.set_input_shape("input", (8, 3, 640, 640))  # the context's own method, passed through
        assert c.execute_async_v3(7) is True
        assert ctx.enqueued == [7] and stream.waits == 1
        assert m.flush()
        assert m.get_sample_value("inferwatch_runtime_run_duration_seconds_sum", TRT) == pytest.approx(0.0041)
        assert m.get_sample_value("inferwatch_runtime_phase_duration_seconds_sum",
                                  {**TRT, "phase": "enqueue"}) == pytest.approx(0.0001)
        assert m.get_sample_value("inferwatch_runtime_phase_duration_seconds_sum",
                                  {**TRT, "phase": "compute"}) == pytest.approx(0.004)
        assert m.get_sample_value("inferwatch_runtime_batch_size_sum", TRT) == 8
        assert m.get_sample_value("inferwatch_tensorrt_device_memory_bytes", SVC) == 48 << 20


def test_without_a_stream_wait_only_the_enqueue_is_timed() -> None:
    clock = FakeClock()
    ctx = FakeEngine().create_execution_context()
    ctx.clock = clock
    with Monitor(**SVC, clock=clock) as m:
        c = m.instrument_tensorrt(ctx)
        c.execute_async_v3(0)
        assert m.flush()
        assert m.get_sample_value("inferwatch_runtime_run_duration_seconds_sum", TRT) == pytest.approx(0.0001)
        assert m.get_sample_value("inferwatch_runtime_phase_duration_seconds_count",
                                  {**TRT, "phase": "compute"}) is None
        assert m.get_sample_value("inferwatch_runtime_batch_size_count", TRT) is None  # no shape set


def test_a_refused_enqueue_is_an_error() -> None:
    ctx = FakeEngine().create_execution_context()
    ctx.fail = True
    with Monitor(**SVC) as m:
        assert m.instrument_tensorrt(ctx).execute_async_v3(0) is False
        assert m.flush()
        assert m.get_sample_value("inferwatch_runtime_run_errors_total", TRT) == 1


def test_the_build_time_and_workspace_are_exported() -> None:
    clock = FakeClock()
    build = build_tensorrt_engine(FakeBuilder(clock, build_s=42.0), object(), FakeBuilderConfig(2 << 30),
                                  clock=clock.monotonic)
    assert (build.plan, build.seconds, build.workspace_bytes) == (b"plan", 42.0, 2 << 30)
    with Monitor(**SVC) as m:
        m.instrument_tensorrt(FakeEngine().create_execution_context(), build=build)
        assert m.get_sample_value("inferwatch_tensorrt_engine_build_seconds", SVC) == 42.0
        assert m.get_sample_value("inferwatch_tensorrt_workspace_bytes", SVC) == 2 << 30


def test_a_failed_build_says_so() -> None:
    clock = FakeClock()
    with pytest.raises(InferwatchError, match=r"building the engine failed after 3\.0s"):
        build_tensorrt_engine(FakeBuilder(clock, build_s=3.0, fail=True), object(), FakeBuilderConfig(),
                              clock=clock.monotonic)


def test_what_is_not_a_context_is_refused() -> None:
    with Monitor(**SVC) as m, pytest.raises(ConfigError, match="not a TensorRT execution context"):
        m.instrument_tensorrt(object())
