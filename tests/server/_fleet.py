"""A fleet of five real replica processes (``fleet_app.py``) on loopback, and a ``serve`` config
scraping them with one outlier rule (issue 55)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

APP = Path(__file__).with_name("fleet_app.py")
HEALTHY = (0.20, 0.21, 0.19, 0.22, 0.20)
# the peer rule with the member's own history: a step that stays for the window (5 s) pages. A step is
# seen while the window is all after it and most of ``before`` still before it: with ``before: 3s`` that
# was a 1.5 s slot, which a loaded CI run's late rounds missed; 20 s leaves ~10 s
STEP_RULE = ("    - name: ReplicaStep\n      dimension: service\n      tier: P1\n"
             "      outlier: {expr: app_p99_seconds, peers_by: [model], member: instance, tolerance: 2,\n"
             "                min_deviation: 0.1, direction: above,\n"
             "                change: {window: 5s, before: 20s, tolerance: 2.75, spread_over: 1m}}\n"
             "      for: 10s\n")


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[list[tuple[str, Path]]]:
    """The members' addresses (their ``instance``) and control files (write a P99 to slow one)."""
    procs, members = [], []
    try:
        for i, v in enumerate(HEALTHY):
            control = tmp_path / f"replica{i}.txt"
            control.write_text(str(v))
            p = subprocess.Popen([sys.executable, str(APP), str(control)], stdout=subprocess.PIPE, text=True)
            procs.append(p)
            assert p.stdout is not None
            members.append((f"127.0.0.1:{int(p.stdout.readline())}", control))
        yield members
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=30)
            if p.stdout is not None:
                p.stdout.close()


def fleet_config(members: list[tuple[str, Path]], hook: str, data: Path, step_rule: bool = False) -> str:
    """Scrape every member each second, evaluate each second, page through a webhook at ``hook``
    (``step_rule``: a second rule, ``ReplicaStep``, the same judged with ``change:``)."""
    targets = ", ".join(f"{{job: replica, url: 'http://{m}/metrics', interval: 1s}}" for m, _ in members)
    return (f"server: {{data_dir: '{data}', evaluation_interval: 1s}}\n"
            f"scrape: {{targets: [{targets}]}}\n"
            "rules:\n  default_pack: false\n  rules:\n"
            "    - name: ReplicaSlow\n      dimension: service\n      tier: P1\n"
            "      outlier: {expr: app_p99_seconds, peers_by: [model], member: instance, tolerance: 3,\n"
            "                min_deviation: 0.1, direction: above}\n"
            "      for: 10s\n"
            "      annotations: {peers: '{{ $peers }}', median: '{{ $median }}'}\n"
            + (STEP_RULE if step_rule else "") +
            "alerting:\n"
            "  route: {receiver: hook, group_by: [alertname, instance], group_wait: 0s, group_interval: 1s}\n"
            f"  receivers: [{{name: hook, type: webhook, url: '{hook}/hook'}}]\n")
