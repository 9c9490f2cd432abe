"""ONNX Runtime under ``monitor.instrument_onnx``: the cost per run beside the bare session, in one run.

    python benchmarks/bench_onnx.py [--quick]

Side by side, interleaved round by round (so both see the same load), in CPU time of the process:
1. ``session.run`` of a small model (sigmoid(x @ W + b), 5 features, batch 32) built with
   ``onnx.helper``, bare and through the wrapper; the overhead is the difference of the medians;
2. the wrapper alone around a session whose ``run`` returns at once (no model): what the
   wrapper adds, without ONNX Runtime's own variance in the difference;
3. prometheus-client's ``Histogram.observe`` timed around the same bare run, the usual
   hand-written alternative.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto
from onnx import helper as h

import _results
from bench_sdk import _Gate  # the worker-parking aggregator of the SDK benchmark
from inferwatch.config import SdkConfig
from inferwatch.sdk import Monitor, onnx_session


def model_bytes(features: int = 5) -> bytes:
    """The benchmark's model: sigmoid(x @ W + b), any batch size."""
    graph = h.make_graph(
        [h.make_node("MatMul", ["x", "W"], ["z"], name="score"),
         h.make_node("Add", ["z", "b"], ["l"], name="bias"),
         h.make_node("Sigmoid", ["l"], ["y"], name="prob")],
        "logistic", [h.make_tensor_value_info("x", TensorProto.FLOAT, [None, features])],
        [h.make_tensor_value_info("y", TensorProto.FLOAT, [None, 1])],
        [h.make_tensor("W", TensorProto.FLOAT, [features, 1], [0.1] * features),
         h.make_tensor("b", TensorProto.FLOAT, [1], [0.0])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    return bytes(model.SerializeToString())


class NullSession:
    """A session whose ``run`` returns at once: the wrapper's cost, alone."""

    def run(self, output_names: Any, feed: Any, run_options: Any = None) -> list[Any]:
        return []

    def get_providers(self) -> list[str]:
        return ["CPUExecutionProvider"]


class Parked:
    """A monitor whose worker is held between rounds, so a timed loop measures the caller alone."""

    def __init__(self, service: str, calls: int) -> None:
        self.gate = _Gate()
        self.monitor = Monitor(service, "logistic", "v1", config=SdkConfig(queue_size=4 * calls),
                               aggregators=[self.gate])

    def hold(self) -> None:
        """Let the worker aggregate what is queued, then park it again."""
        gate = self.gate
        gate.release.set()
        self.monitor.flush(60)
        gate.entered.clear()
        gate.release.clear()
        self.monitor.observe("gate", None)
        gate.entered.wait(10)

    def close(self) -> None:
        self.gate.release.set()
        self.monitor.close()


def per_call_ns(fn: Callable[[], Any], calls: int, after: Callable[[], Any] | None = None) -> float:
    """Mean CPU ns per call over ``calls`` calls, the cyclic GC off (as ``timeit`` does); ``after`` timed.

    The process's CPU time, not the wall clock: on a shared machine the wall clock charges every
    candidate for the other processes' time slices (the worker thread's aggregation is counted).
    """
    gc.disable()
    t0 = time.process_time_ns()
    for _ in range(calls):
        fn()
    if after is not None:
        after()
    dt = time.process_time_ns() - t0
    gc.enable()
    return dt / calls


def interleaved(cands: dict[str, tuple[Callable[[], Any], Callable[[], Any] | None, Callable[[], Any]]],
                calls: int, rounds: int) -> dict[str, float]:
    """Median over rounds of each candidate's ns per call; candidates alternate within each round.

    A candidate is ``(call, timed_after, untimed_between)``.
    """
    results: dict[str, list[float]] = {name: [] for name in cands}
    order = list(cands)
    for r in range(rounds):
        for name in order[r % len(order):] + order[:r % len(order)]:  # rotated: no candidate always first
            fn, after, between = cands[name]
            results[name].append(per_call_ns(fn, calls, after))
            between()
    return {name: statistics.median(v) for name, v in results.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and rounds (a smoke run)")
    args = parser.parse_args()
    calls, rounds = (500, 5) if args.quick else (5000, 21)
    import onnxruntime as ort
    from prometheus_client import CollectorRegistry, Histogram

    feed = {"x": np.ones((32, 5), np.float32)}

    def make() -> Any:  # one intra-op thread: ONNX Runtime's pool would compete with the load for cores
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        return onnx_session(model_bytes(), providers=["CPUExecutionProvider"], sess_options=opts)

    bare = make()
    real, null, whole = Parked("bench", calls), Parked("bench-null", calls), Parked("bench-all", calls)
    wrapped = real.monitor.instrument_onnx(make())
    null_wrapped = null.monitor.instrument_onnx(NullSession())
    whole.gate.release.set()  # this one aggregates as it goes: its flush is timed
    all_in = whole.monitor.instrument_onnx(make())
    nothing = NullSession()
    hist = Histogram("run_seconds", "run", ["model"], registry=CollectorRegistry()).labels("logistic")

    def prom_run() -> Any:
        t0 = time.perf_counter()
        out = bare.run(None, feed)
        hist.observe(time.perf_counter() - t0)
        return out

    def idle() -> None:
        pass

    real.hold()
    null.hold()
    got = interleaved({
        "bare": (lambda: bare.run(None, feed), None, idle),
        "instrumented": (lambda: wrapped.run(None, feed), None, real.hold),
        "all_in": (lambda: all_in.run(None, feed), lambda: whole.monitor.flush(60), idle),
        "prometheus": (prom_run, None, idle),
        "null_bare": (lambda: nothing.run(None, feed), None, idle),
        "null_wrapped": (lambda: null_wrapped.run(None, feed), None, null.hold),
    }, calls, rounds)
    labels = {"service": "bench", "model": "logistic", "version": "v1", "runtime": "onnxruntime"}
    real.gate.release.set()
    assert real.monitor.flush(60)
    runs = real.monitor.get_sample_value("inferwatch_runtime_run_duration_seconds_count", labels)
    for p in (real, null, whole):
        p.close()
    over, alone = got["instrumented"] - got["bare"], got["null_wrapped"] - got["null_bare"]
    total, prom = got["all_in"] - got["bare"], got["prometheus"] - got["bare"]
    print(f"onnxruntime {ort.__version__}, onnx {onnx.__version__}, model sigmoid(x @ W + b), batch 32, "
          f"{calls} calls x {rounds} rounds, interleaved; {runs:.0f} runs recorded")
    print(f"{'session.run, bare':<50} {got['bare']:>9,.0f} ns/run")
    for name, key, extra in (("session.run, instrument_onnx (caller)", "instrumented", over),
                             ("session.run, instrument_onnx incl. aggregation", "all_in", total),
                             ("session.run + prometheus-client observe", "prometheus", prom)):
        print(f"{name:<50} {got[key]:>9,.0f} ns/run  (+{extra:,.0f} ns)")
    print(f"{'the wrapper alone (a run that returns at once)':<50} {alone:>9,.0f} ns/run  "
          f"(null session {got['null_bare']:,.0f} ns, wrapped {got['null_wrapped']:,.0f} ns)")
    print(f"ratio instrumented / bare: {got['instrumented'] / got['bare']:.3f}; "
          f"incl. aggregation / bare: {got['all_in'] / got['bare']:.3f}")
    _results.record("SDK overhead", "ONNX Runtime `session.run` through `monitor.instrument_onnx` "
                    "(small model, batch 32, CPU)",
                    f"{got['instrumented']:,.0f} ns/run: +{over:,.0f} ns on the caller, "
                    f"+{total:,.0f} ns with the aggregation; the wrapper alone {alone:,.0f} ns",
                    f"the bare session {got['bare']:,.0f} ns/run; timing it with prometheus-client "
                    f"`Histogram.observe` +{prom:,.0f} ns", f"{got['instrumented'] / got['bare']:.2f}")


if __name__ == "__main__":
    main()
