"""The GPU playbook: each recorded cause ranks first; no data says so."""

from __future__ import annotations

import pytest

from inferwatch.collect import FakeGPU, FakeNVML
from inferwatch.diagnose import RecordedRunner, diagnose_gpu, render_text
from inferwatch.model import Labels, Matcher, MatchOp, Sample
from inferwatch.model import metrics as m
from inferwatch.store import MemoryStore

from . import scenario as sc

END = 1_800_000.0


@pytest.mark.parametrize(
    ("change", "cause"),
    [
        (sc.cpu_fallback, "cpu_fallback"),  # process CPU up, host busy, PCIe RX down
        (sc.memory_leak, "memory_leak"),  # framebuffer and RSS grow, GC 30x more often
        (sc.pcie_downgrade, "pcie"),  # link Gen4 x16 -> Gen2 x8, RX pinned at the new ceiling
        (sc.thermal, "throttling"),  # hw_thermal clock event, SM clock 1410 -> 900 MHz
        (sc.starvation, "input_starvation"),  # only PCIe RX fell: the GPU waits for input
        (sc.traffic, "traffic_fell"),  # QPS fell with utilisation: not a GPU problem
    ],
)
def test_the_recorded_cause_ranks_first(change: sc.Change, cause: str) -> None:
    store, _ = sc.record(change, end=END)
    d = diagnose_gpu(store, now=END, since=1800, service="ranker")
    assert d.top is not None
    assert d.top.cause == cause, [(f.cause, f.confidence) for f in d.findings]
    assert d.top.evidence and d.top.next_steps
    second = d.findings[1].confidence
    assert d.top.confidence > second  # a clear winner, not a tie
    assert d.status == "diagnosed"
    assert "90% → 30%" in d.summary


def test_profiling_metrics_are_preferred_to_gpu_util() -> None:
    # GPU_UTIL stays at 100 %: a kernel ran in every sample period (dcgm-exporter#341)
    store, _ = sc.record(sc.cpu_fallback, end=END, gpm=True, util_after=100)
    d = diagnose_gpu(store, now=END, since=1800, service="ranker")
    # rule: SM active (GPM) is what the drop is judged on when it was collected
    assert d.evidence.util_metric == m.DCGM_PROF_SM_ACTIVE.name
    assert d.status == "diagnosed" and d.top is not None and d.top.cause == "cpu_fallback"
    assert "SM active (GPU_UTIL 90% → 100%) 85% → 30%" in d.summary
    assert d.to_json()["utilisation_metric"] == "DCGM_FI_PROF_SM_ACTIVE"
    text = render_text(d)
    assert "GPU_UTIL (kernel ran)" in text and "tensor active" in text


def test_without_profiling_metrics_gpu_util_hides_the_drop() -> None:
    store, _ = sc.record(sc.cpu_fallback, end=END, gpm=False, util_after=100)
    d = diagnose_gpu(store, now=END, since=1800, service="ranker")
    # rule: GPU_UTIL alone is used when no profiling series exist; it saw no drop
    assert d.evidence.util_metric == m.DCGM_GPU_UTIL.name
    assert d.status == "no_drop"


def test_summary_says_qps_unchanged() -> None:
    store, _ = sc.record(sc.starvation, end=END)
    d = diagnose_gpu(store, now=END, since=1800, service="ranker")
    assert "QPS 100.0 → 100.0 (unchanged)" in d.summary
    assert "most likely: input starvation" in d.summary


def test_not_enough_data_when_the_store_is_empty() -> None:
    d = diagnose_gpu(MemoryStore(), now=END, since=1800)
    assert d.status == "not_enough_data" and d.findings == ()
    assert any("DCGM_FI_DEV_GPU_UTIL" in x for x in d.missing)
    assert "not enough data" in render_text(d)


def test_not_enough_data_with_too_few_points() -> None:
    store = MemoryStore()
    labels = Labels.of(m.DCGM_GPU_UTIL.name, gpu="0", UUID="GPU-x")
    store.append([Sample(labels, END - 1700, 90.0), Sample(labels, END - 10, 30.0)])  # one per third
    assert diagnose_gpu(store, now=END, since=1800).status == "not_enough_data"


def test_steady_utilisation_is_no_drop() -> None:
    store, _ = sc.record(None, end=END)
    d = diagnose_gpu(store, now=END, since=1800, service="ranker")
    assert d.status == "no_drop"
    assert d.top is None  # nothing wrong in a healthy recording


def test_live_nvml_link_is_used_when_the_store_lacks_it() -> None:
    store, _ = sc.record(sc.starvation, end=END)
    live = FakeNVML([FakeGPU(util_gpu=30, link_gen=1, link_width=4)])  # same UUID as the recording
    d = diagnose_gpu(store, now=END, since=1800, nvml=live)
    assert d.evidence.link.source == "nvml" and d.evidence.link.downgraded
    assert any("Gen1 x4" in fact for f in d.findings for fact in f.evidence)


PCIE_Q = """
==============NVSMI LOG==============
GPU 00000000:3B:00.0
    PCI
        GPU Link Info
            PCIe Generation
                Max                       : 4
                Current                   : 1
            Link Width
                Max                       : 16x
                Current                   : 16x
"""
TOPO = "\tGPU0\tNIC0\nGPU0\t X \tSYS\nNIC0\tSYS\t X \n"


def test_nvidia_smi_output_is_evidence() -> None:
    store, _ = sc.record(sc.starvation, end=END)
    # a store without link series: the playbook falls back to nvidia-smi -q
    stripped = MemoryStore()
    link_names = {m.DCGM_PCIE_LINK_GEN.name, m.DCGM_PCIE_MAX_LINK_GEN.name,
                  m.DCGM_PCIE_LINK_WIDTH.name, m.DCGM_PCIE_MAX_LINK_WIDTH.name}
    for name in (n for n in store.label_values("__name__") if n not in link_names):
        for s in store.select([Matcher("__name__", MatchOp.EQ, name)], END - 1800, END):
            stripped.append(Sample(s.labels, float(t), float(v)) for t, v in zip(s.t, s.v, strict=True))
    runner = RecordedRunner({"nvidia-smi topo -m": TOPO, "nvidia-smi -q": PCIE_Q})
    d = diagnose_gpu(stripped, now=END, since=1800, runner=runner)
    assert runner.calls == ["nvidia-smi topo -m", "nvidia-smi -q"]
    assert d.evidence.link.source == "nvidia-smi" and d.evidence.link.gen == 1
    assert d.evidence.topology == ("GPU0: SYS",)
    pcie = next(f for f in d.findings if f.cause == "pcie")
    assert pcie.confidence > 0 and any("topo" in fact for fact in pcie.evidence)


def test_report_and_json_agree() -> None:
    store, _ = sc.record(sc.memory_leak, end=END)
    d = diagnose_gpu(store, now=END, since=1800, service="ranker")
    text, js = render_text(d), d.to_json()
    assert js["causes"][0]["cause"] == "memory_leak"
    assert "1. memory leak with frequent garbage collection" in text
    assert js["gpu"]["UUID"] == "GPU-00000000-0000-0000-0000-000000000000"
    assert js["evidence"]["fb_used"]["recent"] > js["evidence"]["fb_used"]["before"]


def _sessions(store: MemoryStore, asked: str, runs_on: str, model: str = "ctr") -> None:
    """The SDK's ONNX Runtime session info over the last ten minutes, scraped every 15 s."""
    labels = Labels({"__name__": m.ONNX_SESSION_INFO.name, "service": "ranker", "model": model,
                     "version": "v3", "requested_provider": asked, "provider": runs_on,
                     "cpu_nodes": "score,prob" if asked != runs_on else "", "job": "ranker"})
    store.append([Sample(labels, END - 600 + 15 * i, 1.0) for i in range(41)])


def test_an_onnx_session_on_the_cpu_is_the_evidence_of_a_cpu_fallback() -> None:
    # only PCIe RX fell (input starvation, alone) until the runtime says it runs on the CPU
    store, _ = sc.record(sc.starvation, end=END)
    assert diagnose_gpu(store, now=END, since=1800).top.cause == "input_starvation"  # type: ignore[union-attr]
    _sessions(store, "CUDAExecutionProvider", "CPUExecutionProvider")
    d = diagnose_gpu(store, now=END, since=1800, service="ranker")
    assert d.top is not None and d.top.cause == "cpu_fallback", [(f.cause, f.confidence) for f in d.findings]
    assert d.top.title == "inference fell back to the CPU (ONNX Runtime execution provider)"
    want = "asked for CUDAExecutionProvider and runs on CPUExecutionProvider (nodes on the CPU: score,prob)"
    assert any(want in fact for fact in d.top.evidence)
    assert any("get_available_providers" in step for step in d.top.next_steps)
    assert "ExecutionProviderFallback" in render_text(d)


def test_a_session_that_asked_for_the_cpu_is_no_evidence() -> None:
    store, _ = sc.record(sc.starvation, end=END)
    _sessions(store, "CPUExecutionProvider", "CPUExecutionProvider")
    _sessions(store, "CUDAExecutionProvider", "CUDAExecutionProvider", model="det")  # got its GPU
    d = diagnose_gpu(store, now=END, since=1800, service="ranker")
    assert d.evidence.provider_fallbacks == ()
    assert d.top is not None and d.top.cause == "input_starvation"
