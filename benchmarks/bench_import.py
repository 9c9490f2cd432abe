"""Import time: ``import inferwatch.sdk`` against prometheus-client and the OpenTelemetry SDK.

    python benchmarks/bench_import.py [--runs 11] [--before DIR]

Each candidate is imported in a fresh interpreter, ``--runs`` times in turn (so load drifts
alike); the figure is the median wall time of ``python -c "import M"`` minus the median of
``python -c pass`` (the interpreter's own start), with the median CPU time (user + system of
the child) beside it, which a shared machine's load moves less than the wall time. ``modules``
is how many modules the import adds to ``sys.modules``. ``--before DIR`` also measures the
inferwatch found in ``DIR`` (another checkout's ``src``, e.g. ``git archive REF src`` unpacked),
in the same rounds, as the before of a change. A peer that is not installed is skipped.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field

import _results

OURS = "from inferwatch import Monitor"
CANDIDATES = (
    ("inferwatch (from inferwatch import Monitor)", "inferwatch", OURS),
    ("prometheus-client", "prometheus_client", "import prometheus_client"),
    ("opentelemetry-sdk metrics", "opentelemetry.sdk", "import opentelemetry.sdk.metrics"),
)
TARGET_MS = 150.0
"""Issue #30: ``import inferwatch.sdk`` under 150 ms on a quiet machine."""


@dataclass
class Candidate:
    """One import to time, in an interpreter with ``env``; its wall and CPU times, ms."""

    name: str
    code: str
    env: dict[str, str]
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def run(self) -> None:
        """One fresh interpreter running ``code``."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", self.code], check=True, env=self.env)
        self.wall.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)

    def modules(self) -> int:
        """How many modules are in ``sys.modules`` after ``code``."""
        probe = f"{self.code}\nimport sys\nprint(len(sys.modules))"
        out = subprocess.run([sys.executable, "-c", probe], check=True, env=self.env,
                             capture_output=True, text=True)
        return int(out.stdout)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def candidates(before: str | None) -> list[Candidate]:
    """Ours first, then the ``--before`` tree's, then the installed peers."""
    env = dict(os.environ)
    present = [Candidate(name, code, env) for name, module, code in CANDIDATES if _installed(module)]
    if before is not None:
        src = os.path.abspath(before)
        present.insert(1, Candidate("inferwatch before (--before)", OURS, {**env, "PYTHONPATH": src}))
    return present


def main(argv: list[str]) -> int:
    """Print each candidate's median import time and its ratio to inferwatch's."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--before", metavar="DIR", help="also time the inferwatch under DIR (a src tree)")
    args = parser.parse_args(argv)
    if args.before is not None and not os.path.isdir(os.path.join(args.before, "inferwatch")):
        parser.error(f"--before {args.before}: no inferwatch package in that directory")
    present = candidates(args.before)
    empty = Candidate("python -c pass", "pass", dict(os.environ))
    for _ in range(args.runs):
        empty.run()
        for c in present:
            c.run()
    base_wall, base_cpu = statistics.median(empty.wall), statistics.median(empty.cpu)
    base_modules = empty.modules()
    ours = statistics.median(present[0].wall) - base_wall
    print(f"import time, median of {args.runs} fresh interpreters, interpreter start "
          f"({base_wall:.0f} ms wall, {base_cpu:.0f} ms CPU, {base_modules} modules) subtracted; "
          f"load average {os.getloadavg()[0]:.2f}")
    if args.before is not None:
        print(f"   --before tree: {os.path.abspath(args.before)}")
    print(f"   {'':<46} {'wall ms':>9} {'CPU ms':>8} {'modules':>8}   x inferwatch")
    for c in present:
        wall = statistics.median(c.wall) - base_wall
        cpu = statistics.median(c.cpu) - base_cpu
        print(f"   {c.name:<46} {wall:9.1f} {cpu:8.1f} {c.modules() - base_modules:8d}   {wall / ours:8.2f}")
    verdict = "OK" if ours < TARGET_MS else "over (a loaded machine? see the CPU column)"
    print(f"   target: inferwatch < {TARGET_MS:.0f} ms on a quiet machine -> {ours:.1f} ms {verdict}")
    peers = {c.name: statistics.median(c.wall) - base_wall for c in present[1:] if "before" not in c.name}
    prom, otel = peers.get("prometheus-client"), peers.get("opentelemetry-sdk metrics")
    _results.record("SDK overhead", "Import time, `from inferwatch import Monitor`",
                    f"{ours:.1f} ms ({present[0].modules() - base_modules} modules)",
                    (f"`import prometheus_client` {prom:.1f} ms; "
                     f"`import opentelemetry.sdk.metrics` {otel:.1f} ms") if prom and otel else None,
                    f"{ours / prom:.2f}; {ours / otel:.2f}" if prom and otel else None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
