"""The demo: a real small model (on ONNX Runtime where the ``onnx`` extra is installed) behind
Starlette, instrumented with the SDK, a load generator, and a scripted story (normal -> latency
-> outage -> drift -> provider fallback) on compressed time.

``run_demo(DemoOptions(...), DemoComponents(...))`` is what ``inferwatch demo`` runs;
``DemoComponents`` is where the embedded server, alerts and drift views plug in.
"""

from inferwatch.demo._alerts import AlertView
from inferwatch.demo._dashboard import DashboardPart
from inferwatch.demo._fakes import DemoFakes, FakeKubernetes, FakePagerDuty, PageEvent, ScaleChange
from inferwatch.demo._live import LiveStats, Snapshot, bucket_quantile
from inferwatch.demo._loadgen import LoadGenerator
from inferwatch.demo._model import FEATURES, FeatureGenerator, LogisticModel, Prediction, train_model
from inferwatch.demo._onnx_model import OnnxModel, onnx_model
from inferwatch.demo._pipeline import PipelineView
from inferwatch.demo._quality import DriftView, quality_components
from inferwatch.demo._runner import (
    DemoClock,
    DemoComponents,
    DemoContext,
    DemoOptions,
    DemoPart,
    DemoReport,
    PhaseStats,
    run_demo,
)
from inferwatch.demo._serve import ServerThread
from inferwatch.demo._service import DemoService, Faults
from inferwatch.demo._story import DEFAULT_STORY, Phase, Story

__all__ = [
    "DEFAULT_STORY",
    "FEATURES",
    "AlertView",
    "DashboardPart",
    "DemoClock",
    "DemoComponents",
    "DemoContext",
    "DemoFakes",
    "DemoOptions",
    "DemoPart",
    "DemoReport",
    "DemoService",
    "DriftView",
    "FakeKubernetes",
    "FakePagerDuty",
    "Faults",
    "FeatureGenerator",
    "LiveStats",
    "LoadGenerator",
    "LogisticModel",
    "OnnxModel",
    "PageEvent",
    "Phase",
    "PhaseStats",
    "PipelineView",
    "Prediction",
    "ScaleChange",
    "ServerThread",
    "Snapshot",
    "Story",
    "bucket_quantile",
    "onnx_model",
    "quality_components",
    "run_demo",
    "train_model",
]
