"""The demo on ONNX Runtime: the trained model as an ONNX graph, served through instrument_onnx; its
fallback chapter (a session asking for a GPU provider this machine lacks) pages once."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest
from tests._require import require_module

from inferwatch.alerting import NotificationRecord
from inferwatch.demo import (
    AlertView,
    DemoComponents,
    DemoOptions,
    FeatureGenerator,
    OnnxModel,
    Phase,
    PipelineView,
    Story,
    run_demo,
    train_model,
)
from inferwatch.sdk import Monitor

require_module("onnxruntime")
RULE = "ExecutionProviderFallback"


def test_the_onnx_model_scores_as_the_numpy_one_on_both_paths() -> None:
    gen = FeatureGenerator(np.random.default_rng(3))
    model = train_model(gen, n=1000)
    with Monitor("demo", "ctr-logreg", "v1") as m:
        onnx = OnnxModel(model, m)
        for x in gen.sample(20):
            for cheap in (False, True):
                want, got = model.predict(x, cheap=cheap), onnx.predict(x, cheap=cheap)
                assert got.score == pytest.approx(want.score, abs=1e-5) and got.path == want.path
        assert m.flush()
        assert m.get_sample_value("inferwatch_runtime_run_duration_seconds_count", {
            "service": "demo", "model": "ctr-logreg", "version": "v1", "runtime": "onnxruntime"}) == 40
        assert onnx.describe()["providers"] == ["CPUExecutionProvider"]
        onnx.ask_accelerator(True)  # the CPU wheel has no CUDA: the session falls back
        assert onnx.describe()["requested_providers"] != ["CPUExecutionProvider"]
        assert onnx.describe()["providers"] == ["CPUExecutionProvider"]


def test_the_fallback_chapter_pages_once() -> None:
    # Story minutes at x40 are 1.5 s of wall time; the rule holds `for: 1m` after the first scrape
    # of the redeployed session (scrapes and evaluations every 15 story seconds), so it fires near
    # 150 s; 360 story seconds after the chapter's start leave ~6 s of wall time to spare (a loaded
    # runner's starved scrape restarts the `for`, as in test_demo_alerts).
    story = Story.of([Phase("normal", 0.0), Phase("fallback", 60.0, accelerator=True)], end_s=420.0)
    pipeline = PipelineView()
    view = AlertView(forward=pipeline)
    out = io.StringIO()
    run_demo(DemoOptions(duration_s=10.5, speed=40.0, rate=30.0, threads=4, refresh_s=0.5, story=story),
             DemoComponents(parts=[pipeline, view]), out=out, tty=False)
    fired = [t for t, name, state in view.events if name == RULE and state == "firing"]
    assert len(fired) == 1 and fired[0] > 60.0, view.events  # once, after the redeploy
    text = out.getvalue()
    assert f"FIRING   P1 {RULE}: ctr-logreg v1 of demo asked for" in text, text
    assert "and runs on the CPU" in text
    # one notification for the episode: the P1 route's chat receiver (shown in the terminal here,
    # the demo has no WeCom key), no repeat within the story
    sent = [r for r in pipeline.records if isinstance(r, NotificationRecord)
            and any(a["alertname"] == RULE for g in r.groups for a in g["alerts"])]
    assert [(r.receiver, r.kind) for r in sent] == [("wecom", "alerts")], pipeline.records


def test_without_onnxruntime_the_demo_serves_numpy_with_one_note() -> None:
    # a user without the extra: onnxruntime cannot be imported (None in sys.modules blocks it)
    code = ("import sys; sys.modules['onnxruntime'] = None\n"
            "from inferwatch.cli import main\n"
            "sys.exit(main(['demo', '--duration', '2', '--rate', '20', '--seed', '1']))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    notes = [line for line in r.stdout.splitlines() if "onnxruntime is not installed" in line]
    assert len(notes) == 1 and "serving the numpy model" in notes[0], r.stdout
    assert "phase fallback" in r.stdout  # the chapter still plays, with nothing to show
