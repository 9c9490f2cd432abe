"""Run every benchmark (``benchmarks/bench_*.py``) or the named ones, in one process each.

    python benchmarks/run.py                      # all, printing
    python benchmarks/run.py sdk rules            # bench_sdk.py and bench_rules.py
    python benchmarks/run.py --results            # all, then rewrite benchmarks/RESULTS.md
    python benchmarks/run.py --results storm      # the storm's rows only
    python benchmarks/run.py --results mixed_load -- --minutes 13 --warmup 1   # one benchmark, its options

Each benchmark measures inferwatch and its peer side by side in the same run and prints the
ratio. With ``--results`` the rows each benchmark records (``benchmarks/_results.py``) are
written into ``benchmarks/RESULTS.md`` with the date and commit, the machine and the peers'
versions are stamped above the tables, and the documentation site's copy is regenerated; a
row whose peer is not installed says so. ``make bench`` is ``run.py --results``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import _results  # noqa: E402  (benchmarks/ is not a package)

#: The peers the benchmarks run beside, and how each says its version.
PEERS = {
    "Prometheus": ["prometheus", "--version"],
    "Alertmanager": ["prometheus-alertmanager", "--version"],
    "node_exporter": ["prometheus-node-exporter", "--version"],
    "VictoriaMetrics": ["victoria-metrics", "-version"],
}


def _version(argv: list[str]) -> str | None:
    exe = shutil.which(argv[0])
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = (out.stdout + out.stderr).split()
    said = next((w.lstrip("v") for w in words if w[:1].isdigit() or w[:2] == "v1"), None)
    if said is None:  # VictoriaMetrics' Debian build prints nothing: ask the package
        try:
            said = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", argv[0]],
                                  capture_output=True, text=True, check=False).stdout.strip() or "?"
        except OSError:
            said = "?"
    return said


def _machine() -> str:
    mem = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kib / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores{mem}, "
            f"Python {platform.python_version()}")


def _commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "src"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return (out.stdout.strip() or "unknown") + ("+changes" if dirty else "")


def _write(rows: list[dict[str, str]], ran: list[str]) -> int:
    today = dt.date.today().isoformat()
    commit = _commit()
    results = HERE / "RESULTS.md"
    try:
        measured = f"{today}, {commit.split('+')[0]}"
        text, done = _results.apply(results.read_text(encoding="utf-8"), rows, measured)
    except ValueError as exc:
        print(f"RESULTS.md not changed: {exc}", file=sys.stderr)
        return 1
    peers = ", ".join(f"{name} {v}" if (v := _version(argv)) else f"{name} not installed"
                      for name, argv in PEERS.items())
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    text = _results.stamp(text, f"{today}, commit {commit}, {_machine()}, load average {load} at the end; "
                          f"peers: {peers}. This run: {', '.join(ran)} ({len(done)} rows); "
                          "the other rows keep the date and commit that measured them.")
    results.write_text(text, encoding="utf-8")
    for line in done:
        print(line)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    subprocess.run([sys.executable, "-m", "inferwatch.cli._docgen", str(ROOT)],
                   cwd=ROOT, env=env, check=False)
    print(f"benchmarks/RESULTS.md: {len(done)} rows from {len(ran)} benchmarks written")
    return 0


def split_options(argv: list[str]) -> tuple[list[str], list[str]]:
    """``run.py``'s own arguments and, after ``--``, the options handed to the one benchmark named.

    >>> split_options(["--results", "mixed_load", "--", "--minutes", "13"])
    (['--results', 'mixed_load'], ['--minutes', '13'])
    """
    if "--" not in argv:
        return argv, []
    k = argv.index("--")
    return argv[:k], argv[k + 1:]


def main(argv: list[str]) -> int:
    argv, options = split_options(argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*",
                        help="benchmarks to run, e.g. storm for bench_storm.py (default: all)")
    parser.add_argument("--results", action="store_true",
                        help="rewrite benchmarks/RESULTS.md with what they measure")
    args = parser.parse_args(argv)
    if options and len(args.names) != 1:
        print("options after -- go to one benchmark: name exactly one", file=sys.stderr)
        return 2
    files = sorted(HERE.glob("bench_*.py"))
    if args.names:
        wanted = {f"bench_{name}.py" for name in args.names}
        files = [f for f in files if f.name in wanted]
        missing = wanted - {f.name for f in files}
        if missing:
            print(f"no such benchmark: {', '.join(sorted(missing))}", file=sys.stderr)
            return 2
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        sink = Path(tmp) / "rows.jsonl"
        sink.touch()
        env = {**os.environ, _results.ENV: str(sink)} if args.results else dict(os.environ)
        for f in files:
            print(f"\n=== {f.stem} ===", flush=True)
            proc = subprocess.run([sys.executable, str(f), *options], cwd=ROOT, env=env, check=False)
            if proc.returncode != 0:
                failed.append(f.stem)
        rows = _results.load(sink)
    if failed:
        print(f"failed: {', '.join(failed)} (their rows are not written)", file=sys.stderr)
    code = 0
    if args.results:
        ok = [f.stem.removeprefix("bench_") for f in files if f.stem not in failed]
        rows = [r for r in rows if Path(r["command"].split()[1]).stem not in failed]
        recorded = {Path(r["command"].split()[1]).stem.removeprefix("bench_") for r in rows}
        silent = [name for name in ok if name not in recorded]
        if silent:
            print(f"recorded no row (their rows keep the date and commit that measured them): "
                  f"{', '.join(silent)}")
        code = _write(rows, ok)
    return 1 if failed or code else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
