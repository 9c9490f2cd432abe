"""Run every benchmark (``benchmarks/bench_*.py``) or the named ones, in one process each.

    python benchmarks/run.py            # all
    python benchmarks/run.py sdk rules  # bench_sdk.py and bench_rules.py

Each benchmark measures inferwatch and its peer side by side in the same run
and prints the ratio; the numbers we got are in ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    files = sorted(HERE.glob("bench_*.py"))
    if argv:
        wanted = {f"bench_{name}.py" for name in argv}
        files = [f for f in files if f.name in wanted]
        missing = wanted - {f.name for f in files}
        if missing:
            print(f"no such benchmark: {', '.join(sorted(missing))}", file=sys.stderr)
            return 2
    failed = 0
    for f in files:
        print(f"\n=== {f.stem} ===", flush=True)
        failed += subprocess.run([sys.executable, str(f)], check=False).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
