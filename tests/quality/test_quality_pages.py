"""Issue #29's benchmark as a test: the new user's setup pages only for what happened.

Runs ``benchmarks/bench_quality_pages.py`` (real ``uvicorn --workers 2``, compressed time,
the scraped series replayed through the default rules and notification pipeline) and checks
its counts. About 15 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_quality_pages.py"


def test_two_workers_shift_and_outage_page_exactly_once_each() -> None:
    proc = subprocess.run([sys.executable, str(BENCH), "--json"], capture_output=True, text=True, timeout=300,
                          env={**os.environ}, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["workers_that_served"] == 2
    # rule: healthy traffic (a nearly empty first window included) notifies no one
    assert got["notifications_before_shift"] == 0, got["before_shift"]
    # rule: the shift of age and income is one drift notification per receiver, naming both
    assert got["drift_notifications"] == {"wecom": ["FeatureDriftReview[age,income]"]}
    # rule: the outage pages once, and the page stays up when the traffic stops
    assert got["p0_pages"] == 1
    assert got["p0_resolved_while_traffic_stopped"] == 0
    assert got["rollback_for_unmoved_features"] == []
