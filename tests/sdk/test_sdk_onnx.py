"""ONNX Runtime under ``Monitor.instrument_onnx``: the real onnxruntime wheel on a model built here."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from tests._onnx import GPU_ASK, logistic_model, session
from tests._require import require_module

from inferwatch import ConfigError
from inferwatch.sdk import InstrumentedSession, Monitor, onnx_session

SVC = {"service": "ranker", "model": "ctr", "version": "v3"}
ORT = {**SVC, "runtime": "onnxruntime"}


def _info(m: Monitor) -> dict[str, str]:
    """The labels of the one ``inferwatch_onnx_session_info`` sample."""
    assert m.flush()
    samples = [s for f in m.registry.collect() for s in f.samples if s.name == "inferwatch_onnx_session_info"]
    assert len(samples) == 1, samples
    assert samples[0].value == 1.0
    return dict(samples[0].labels)


def test_every_run_is_timed_with_its_batch_size() -> None:
    with Monitor(**SVC) as m:
        s = m.instrument_onnx(session(["CPUExecutionProvider"]))
        for rows in (1, 3, 3, 40):
            out = s.run(None, {"x": np.ones((rows, 5), np.float32)})
            assert out[0].shape == (rows, 1)  # the session's answer, unchanged
        assert m.flush()
        assert m.get_sample_value("inferwatch_runtime_run_duration_seconds_count", ORT) == 4
        assert m.get_sample_value("inferwatch_runtime_run_duration_seconds_sum", ORT) > 0
        assert m.get_sample_value("inferwatch_runtime_batch_size_sum", ORT) == 47
        assert m.get_sample_value("inferwatch_runtime_batch_size_bucket", {**ORT, "le": "4.0"}) == 3
        assert m.get_sample_value("inferwatch_runtime_run_errors_total", ORT) == 0


def test_the_session_keeps_its_interface() -> None:
    with Monitor(**SVC) as m:
        raw = session(["CPUExecutionProvider"])
        s = m.instrument_onnx(raw, model="other", version="v9")
        assert isinstance(s, InstrumentedSession) and s.session is raw
        assert [i.name for i in s.get_inputs()] == ["x"] and [o.name for o in s.get_outputs()] == ["y"]
        assert s.get_providers() == ["CPUExecutionProvider"]
        s.run(["y"], {"x": np.zeros((2, 5), np.float32)})
        assert m.flush()
        labels = {**ORT, "model": "other", "version": "v9"}
        assert m.get_sample_value("inferwatch_runtime_run_duration_seconds_count", labels) == 1


def test_a_failed_run_reaches_the_caller_and_is_counted() -> None:
    with Monitor(**SVC) as m:
        s = m.instrument_onnx(session(["CPUExecutionProvider"]))
        with pytest.raises(Exception, match=r"(?i)invalid|dimension|type"):
            s.run(None, {"x": np.ones((2, 7), np.float32)})  # 7 features, the model takes 5
        s.run(None, {"x": np.ones((2, 5), np.float32)})
        assert m.flush()
        assert m.get_sample_value("inferwatch_runtime_run_errors_total", ORT) == 1
        assert m.get_sample_value("inferwatch_runtime_run_duration_seconds_count", ORT) == 1


def test_a_session_asked_for_cuda_on_a_cpu_wheel_exports_its_fallback(
        caplog: pytest.LogCaptureFixture) -> None:
    # the CPU wheel has no CUDAExecutionProvider: the session runs on the CPU, which the info says
    with caplog.at_level(logging.WARNING, "inferwatch.sdk"), Monitor(**SVC) as m:
        s = m.instrument_onnx(session(GPU_ASK))
        info = _info(m)
        assert (info["requested_provider"], info["provider"]) == (
            "CUDAExecutionProvider", "CPUExecutionProvider")
        # the placement ONNX Runtime recorded at load time names the nodes on the CPU (bounded)
        nodes = info["cpu_nodes"].split(",")
        assert nodes and "prob" in nodes and len(nodes) <= 9
        assert s.placement is not None and dict(s.placement.counts()) == {"CPUExecutionProvider": len(nodes)}
        assert m.get_sample_value("inferwatch_onnx_session_nodes",
                                  {**SVC, "provider": "CPUExecutionProvider"}) == len(nodes)
    assert "CUDAExecutionProvider" in caplog.text and "not in available provider names" in caplog.text


def test_a_session_that_got_what_it_asked_for_names_no_cpu_nodes() -> None:
    with Monitor(**SVC) as m:
        m.instrument_onnx(session(["CPUExecutionProvider"]))
        info = _info(m)
        assert (info["requested_provider"], info["provider"], info["cpu_nodes"]) == (
            "CPUExecutionProvider", "CPUExecutionProvider", "")


def test_a_plain_session_needs_the_request_given(tmp_path: Path) -> None:
    ort = require_module("onnxruntime")
    with pytest.warns(UserWarning, match="CUDAExecutionProvider"):
        raw = ort.InferenceSession(logistic_model(), providers=GPU_ASK)
    with Monitor(**SVC) as m:
        m.instrument_onnx(raw, requested_providers=[("CUDAExecutionProvider", {"device_id": 0}),
                                                    "CPUExecutionProvider"])
        assert _info(m)["requested_provider"] == "CUDAExecutionProvider"
    with Monitor(**SVC) as m:  # without it ONNX Runtime has forgotten the ask: what it has is the request
        m.instrument_onnx(raw)
        assert _info(m)["requested_provider"] == "CPUExecutionProvider"


def test_the_profile_says_where_each_node_ran(tmp_path: Path) -> None:
    ort = require_module("onnxruntime")
    opts = ort.SessionOptions()
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / "ort")
    with pytest.warns(UserWarning, match="CUDAExecutionProvider"):
        raw = ort.InferenceSession(logistic_model(), opts, providers=GPU_ASK)
    with Monitor(**SVC) as m:
        s = m.instrument_onnx(raw, requested_providers=GPU_ASK)
        assert s.placement is None  # no assignment recorded (a plain session): the profile tells
        assert _info(m)["cpu_nodes"] == ""
        s.run(None, {"x": np.ones((2, 5), np.float32)})
        path = s.end_profiling()
        assert Path(path).exists()
        assert s.placement is not None and s.placement.counts()[0][0] == "CPUExecutionProvider"
        assert "prob" in _info(m)["cpu_nodes"].split(",")


def test_the_profile_read_never_raises(tmp_path: Path) -> None:
    from inferwatch.sdk.runtimes._onnx_placement import from_profile

    bad = tmp_path / "p.json"
    bad.write_text("{not json")
    assert from_profile(str(bad)) is None
    assert from_profile(str(tmp_path / "missing.json")) is None


def test_odd_inputs_cost_the_batch_size_never_the_run() -> None:
    with Monitor(**SVC) as m:
        s = m.instrument_onnx(session(["CPUExecutionProvider"]))
        s.run(None, {"x": [[1.0] * 5] * 2})  # a list: onnxruntime takes it, it has no .shape
        assert m.flush()
        assert m.get_sample_value("inferwatch_runtime_run_duration_seconds_count", ORT) == 1
        assert m.get_sample_value("inferwatch_runtime_batch_size_count", ORT) in (None, 0.0)


def test_io_binding_splits_input_compute_and_output() -> None:
    with Monitor(**SVC) as m:
        s = m.instrument_onnx(session(["CPUExecutionProvider"]))
        b = s.io_binding()
        b.bind_cpu_input("x", np.ones((6, 5), np.float32))
        b.bind_output("y")
        s.run_with_iobinding(b)
        assert b.copy_outputs_to_cpu()[0].shape == (6, 1)
        assert m.flush()
        for phase in ("input", "compute", "output"):
            assert m.get_sample_value("inferwatch_runtime_phase_duration_seconds_count",
                                      {**ORT, "phase": phase}) == 1, phase
        assert m.get_sample_value("inferwatch_runtime_batch_size_sum", ORT) == 6


def test_what_is_not_a_session_is_refused_at_instrument_time() -> None:
    with Monitor(**SVC) as m, pytest.raises(ConfigError, match="not an onnxruntime InferenceSession"):
        m.instrument_onnx(object())


def test_a_missing_model_file_is_onnx_runtimes_error(tmp_path: Path) -> None:
    require_module("onnxruntime")
    with pytest.raises(Exception, match=r"(?i)no such file|doesn't exist|does not exist|load model"):
        onnx_session(tmp_path / "missing.onnx", providers=["CPUExecutionProvider"])


def test_the_default_rule_pages_for_exactly_the_accelerator_providers() -> None:
    # rule: ExecutionProviderFallback's regex and the SDK's list are one list (a provider added to
    # one and not the other would page for nothing, or never)
    import re

    from inferwatch.rules import default_rule_pack
    from inferwatch.sdk import ACCELERATOR_PROVIDERS

    rule = next(r for r in default_rule_pack() if r.name == "ExecutionProviderFallback")
    expr = str(rule.expr)
    found = re.search(r'requested_provider=~"\((.*?)\)ExecutionProvider"', expr)
    assert found, expr
    assert {f"{p}ExecutionProvider" for p in found.group(1).split("|")} == set(ACCELERATOR_PROVIDERS)
    assert 'provider="CPUExecutionProvider"' in expr and rule.tier == "P1"
