"""Pages of the demo's drift incident: the drift and performance alerts that fire, by tier.

Runs ``inferwatch demo --duration 40 --seed 1`` (plain lines) under the current
``PYTHONPATH`` (point it at another checkout for a "before" column) and counts the
FIRING lines of the quality rules from the drift phase (story 17:00) on: P1 alerts
page (the wecom route), P2 alerts go to the 09:00 digest. ``--from-file`` reads a
saved output instead of running the demo.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import _results

FIRING = re.compile(r"\[(\d+):(\d+)\] FIRING\s+(P\d) (\w+): Feature (\w+)"
                    r"|\[(\d+):(\d+)\] FIRING\s+(P\d) (\w+):")
QUALITY = ("FeatureDrift", "EstimatedPerformanceDrop", "RealizedPerformanceDrop", "AnomalousSamplesHigh")
DRIFT_START_S = 17 * 60
ROW = ("P1 drift pages in the demo's drift incident while the accuracy holds (input drift without a loss)")


def count(text: str) -> tuple[dict[str, Counter[str]], dict[str, str]]:
    """Per tier: ``rule[feature]`` -> firings, and the first firing's story time (mm:ss), from 17:00 on."""
    tiers: dict[str, Counter[str]] = {}
    first: dict[str, str] = {}
    for m in FIRING.finditer(text):
        mm, ss, tier, name, feature = (m.group(1, 2, 3, 4, 5) if m.group(1) else m.group(6, 7, 8, 9, 9))
        if int(mm) * 60 + int(ss) < DRIFT_START_S or not name.startswith(QUALITY):
            continue
        key = f"{name}[{feature}]" if m.group(1) else name
        tiers.setdefault(tier, Counter())[key] += 1
        first.setdefault(f"{tier} {name}", f"{mm}:{ss}")
    return tiers, first


def early_pages(text: str, first: dict[str, str]) -> tuple[int, int, str | None]:
    """P1 drift pages before the first performance alert shows the loss, all P1 drift pages (from
    17:00 on), and when the first performance alert came (story time, mm:ss)."""
    losses = [_seconds(v) for k, v in first.items() if "PerformanceDrop" in k]
    loss = min(losses, default=None)
    pages = [int(m.group(1)) * 60 + int(m.group(2)) for m in FIRING.finditer(text)
             if m.group(1) and m.group(3) == "P1" and m.group(4) == "FeatureDrift"]
    pages = [t for t in pages if t >= DRIFT_START_S]
    early = sum(1 for t in pages if loss is None or t < loss)
    return early, len(pages), None if loss is None else f"{loss // 60:02d}:{loss % 60:02d}"


def _seconds(mmss: str) -> int:
    mm, ss = mmss.split(":")
    return int(mm) * 60 + int(ss)


def main(argv: list[str] | None = None) -> int:
    """Run (or read) the demo and print the counts."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--from-file", type=Path)
    ap.add_argument("--save", type=Path, help="keep the demo's output here")
    args = ap.parse_args(argv)
    if args.from_file:
        text = args.from_file.read_text()
    else:
        text = subprocess.run([sys.executable, "-m", "inferwatch", "demo", "--duration", "40", "--seed", "1"],
                              capture_output=True, text=True, timeout=300, check=True).stdout
        if args.save:
            args.save.write_text(text)
    tiers, first = count(text)
    for tier, names in sorted(tiers.items()):
        print(f"{tier}: {sum(names.values())} alerts fired: {', '.join(sorted(names))}")
    print("first firing: " + ", ".join(f"{k} {v}" for k, v in sorted(first.items(), key=lambda kv: kv[1])))
    early, pages, loss = early_pages(text, first)
    _results.record("Model quality and estimated performance", ROW,
                    f"{early} (of {pages} P1 drift pages; the first performance alert at {loss or 'none'})",
                    "main before the fix (8c6b50c): 10 at 19:51", None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
