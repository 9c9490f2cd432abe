"""A paced inference loop on the GPU whose preprocessing moves to the CPU (issue #39's induced drop).

Requests arrive at a fixed rate (``--qps``), so QPS stays the same in every phase:

* ``busy``: each request uploads its raw input (pinned memory) and the GPU does both the
  preprocessing (bf16 matrix products, ~``--pre-ms``) and the model (~``--model-ms``).
* ``cpu``: the preprocessing runs on the CPU (torch CPU ops, same length); the GPU runs only the
  model, so it waits for data: SM activity falls while QPS and the upload stay the same.
* ``h2d``: as ``busy`` plus a thread copying a pinned 1 GiB buffer to the GPU without pause
  (PCIe saturated), to compare NVML's PCIe readings with the bytes really moved.

Every request is recorded with the inferwatch SDK (``inferwatch_requests_total{service="gpu-bench"}``)
served on ``--port``. Phases and calibration go to ``--log`` as JSON lines. ``--fake``: no torch,
sleeps stand in for the GPU and a numpy loop for the CPU work (to test the device script here).
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from typing import Any

from inferwatch import Monitor


def _log(path: str, **rec: Any) -> None:
    rec["t"] = time.time()
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(rec) + "\n")
    print("workload:", json.dumps(rec), flush=True)


class Fake:
    """No GPU: the GPU's work is a sleep, the CPU's a busy numpy loop."""

    def __init__(self, args: argparse.Namespace) -> None:
        import numpy as np

        self.np, self.args = np, args
        self.a = np.random.default_rng(0).random((256, 256))

    def calibrate(self) -> dict[str, float]:
        return {"fake": 1.0}

    def gpu(self, ms: float) -> None:
        time.sleep(ms / 1000)

    def cpu(self, ms: float) -> None:
        end = time.perf_counter() + ms / 1000
        while time.perf_counter() < end:
            self.a = self.np.tanh(self.a @ self.a.T / 256)

    def request(self, phase: str) -> None:
        if phase == "cpu":
            self.cpu(self.args.pre_ms)
            self.gpu(self.args.model_ms)
        else:
            self.gpu(self.args.pre_ms + self.args.model_ms)

    def start_copy_loop(self, stop: threading.Event) -> threading.Thread:
        t = threading.Thread(target=stop.wait, daemon=True)
        t.start()
        return t


class Gpu:
    """The real thing: bf16 matrix products on the GPU, torch CPU ops for CPU preprocessing."""

    def __init__(self, args: argparse.Namespace) -> None:
        import torch

        self.torch, self.args = torch, args
        torch.set_num_threads(args.cpu_threads)
        dev = torch.device("cuda")
        self.dev = dev
        n = 8192
        self.w = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        self.x = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        # a raw input per request: 32 MiB of uint8 in pinned memory, uploaded every request
        self.raw = torch.randint(0, 255, (4096, 8192), dtype=torch.uint8).pin_memory()
        self.cpu_in = torch.randn(512, 512)
        self.done = torch.cuda.Event(blocking=True)  # wait without spinning a CPU core
        self.mm_ms = 1.0
        self.cpu_ms = 1.0

    def _mm(self, count: int) -> None:
        y = self.x
        for _ in range(count):
            y = self.w @ y
            y = y * (1 / 90.5)  # 1/sqrt(8192): values stay ~1 (zeros would multiply faster)
        self.x = y

    def _sync(self) -> None:
        self.done.record()
        self.done.synchronize()

    def _cpu_op(self) -> None:
        t = self.torch
        y = t.tanh(self.cpu_in @ self.cpu_in.T / 512)
        self.cpu_in = y + 1e-3

    def calibrate(self) -> dict[str, float]:
        self._mm(10)
        self._sync()
        t0 = time.perf_counter()
        self._mm(50)
        self._sync()
        self.mm_ms = (time.perf_counter() - t0) * 1000 / 50
        for _ in range(3):
            self._cpu_op()
        t0 = time.perf_counter()
        for _ in range(20):
            self._cpu_op()
        self.cpu_ms = (time.perf_counter() - t0) * 1000 / 20
        return {"matmul_ms": self.mm_ms, "cpu_op_ms": self.cpu_ms,
                "tflops": 2 * 8192**3 / (self.mm_ms / 1000) / 1e12}

    def request(self, phase: str) -> None:
        a = self.args
        x = self.raw.to(self.dev, non_blocking=True)  # the same upload in every phase
        if phase == "cpu":
            for _ in range(max(1, round(a.pre_ms / self.cpu_ms))):
                self._cpu_op()
            self._mm(max(1, round(a.model_ms / self.mm_ms)))
        else:
            self._mm(max(1, round((a.pre_ms + a.model_ms) / self.mm_ms)))
        del x
        self._sync()

    def start_copy_loop(self, stop: threading.Event) -> threading.Thread:
        torch = self.torch
        src = torch.empty(1 << 30, dtype=torch.uint8).pin_memory()
        dst = torch.empty(1 << 30, dtype=torch.uint8, device=self.dev)
        stream = torch.cuda.Stream()
        ev = torch.cuda.Event(blocking=True)

        def run() -> None:
            copied, t0 = 0, time.perf_counter()
            with torch.cuda.stream(stream):
                while not stop.is_set():
                    for _ in range(4):
                        dst.copy_(src, non_blocking=True)
                    ev.record(stream)
                    ev.synchronize()
                    copied += 4 << 30
            secs = time.perf_counter() - t0
            _log(self.args.log, event="h2d_copied", bytes=copied, seconds=secs, gbps=copied / secs / 1e9)

        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t


def main() -> int:
    """Run the phases; returns 0."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--phases", default="busy:60,cpu:60,h2d:20")
    p.add_argument("--qps", type=float, default=10.0)
    p.add_argument("--pre-ms", type=float, default=45.0)
    p.add_argument("--model-ms", type=float, default=25.0)
    p.add_argument("--cpu-threads", type=int, default=4)
    p.add_argument("--port", type=int, default=8001)
    p.add_argument("--log", required=True)
    p.add_argument("--fake", action="store_true")
    args = p.parse_args()
    mon = Monitor("gpu-bench", model="matmul")
    server = mon.serve_metrics(args.port)
    work: Fake | Gpu = Fake(args) if args.fake else Gpu(args)
    _log(args.log, event="calibrated", port=server.port, **work.calibrate())
    period = 1.0 / args.qps
    for spec in args.phases.split(","):
        phase, secs = spec.split(":")
        stop = threading.Event()
        copier = work.start_copy_loop(stop) if phase == "h2d" else None
        start = time.time()
        _log(args.log, event="phase", phase=phase, start=start)
        next_at, n, late = time.monotonic(), 0, 0
        while time.time() - start < float(secs):
            t0 = time.perf_counter()
            work.request(phase)
            mon.record_request("/predict", 200, time.perf_counter() - t0)
            n += 1
            next_at += period
            wait = next_at - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            else:
                late += 1
                next_at = time.monotonic()
        stop.set()
        if copier is not None:
            copier.join(10)
        _log(args.log, event="phase_end", phase=phase, start=start, end=time.time(), requests=n, late=late)
    mon.close()
    server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
