"""Import time: ``import inferwatch.sdk`` against prometheus-client and the OpenTelemetry SDK.

    python benchmarks/bench_import.py [--runs 11]

Each candidate is imported in a fresh interpreter, ``--runs`` times in turn (so load drifts
alike); the figure is the median wall time of ``python -c "import M"`` minus the median of
``python -c pass`` (the interpreter's own start). A peer that is not installed is skipped.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time

CANDIDATES = (
    ("inferwatch (from inferwatch import Monitor)", "inferwatch", "from inferwatch import Monitor"),
    ("prometheus-client", "prometheus_client", "import prometheus_client"),
    ("opentelemetry-sdk metrics", "opentelemetry.sdk", "import opentelemetry.sdk.metrics"),
)


def _wall_ms(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return (time.perf_counter() - start) * 1000


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def main(argv: list[str]) -> int:
    """Print each candidate's median import time and its ratio to inferwatch's."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args(argv)
    present = [(name, code) for name, module, code in CANDIDATES if _installed(module)]
    times: dict[str, list[float]] = {name: [] for name, _ in present}
    empty: list[float] = []
    for _ in range(args.runs):
        empty.append(_wall_ms("pass"))
        for name, code in present:
            times[name].append(_wall_ms(code))
    base = statistics.median(empty)
    medians = {name: statistics.median(t) - base for name, t in times.items()}
    ours = medians[present[0][0]]
    print(f"import time, median of {args.runs} fresh interpreters, interpreter start "
          f"({base:.0f} ms) subtracted")
    for name, ms in medians.items():
        print(f"   {name:<46} {ms:8.1f} ms   x inferwatch {ms / ours:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
