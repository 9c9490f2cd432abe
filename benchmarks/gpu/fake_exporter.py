"""The device script's stand-in for ``inferwatch exporter`` here (no GPU): FakeNVML following the workload.

The fake GPU keeps GPU_UTIL at 100 % (a kernel runs in every sample period) while SM activity
follows the phase the workload logged: busy 70 %, cpu 25 %, h2d 70 % with PCIe RX near 50 GB/s.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchmarks.gpu.measure import fake_nvml

from inferwatch.collect import Exporter

PHASES = {  # phase -> GPM SM util %, tensor %, PCIe RX MiB/s
    "busy": (70.0, 65.0, 330.0), "cpu": (25.0, 23.0, 330.0), "h2d": (70.0, 65.0, 48000.0),
}


def _phase(log: Path) -> str:
    phase = "busy"
    if log.exists():
        for line in log.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("event") == "phase":
                phase = rec["phase"]
    return phase


def main() -> int:
    """Serve until killed."""
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=9400)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--phase-log", required=True)
    args = p.parse_args()
    nv = fake_nvml()
    gpu = nv.gpus[0]
    gpu.util_gpu = 100
    exp = Exporter(interval=1.0, pid=args.pid, nvml=nv)
    exp.serve("127.0.0.1", args.port)
    print(f"fake exporter on :{args.port} watching pid {args.pid}", flush=True)
    while True:
        sm, tensor, rx = PHASES.get(_phase(Path(args.phase_log)), PHASES["busy"])
        gpu.gpm = {**(gpu.gpm or {}), 2: sm, 5: tensor, 21: rx}
        time.sleep(0.5)


if __name__ == "__main__":
    raise SystemExit(main())
