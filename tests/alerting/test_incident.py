"""One message per incident with the default config, measured with replay (the issue's drift incident)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from inferwatch.alerting import ReplayPipeline
from inferwatch.config import parse_config
from inferwatch.rules import load_rules
from inferwatch.rules._replay import run_replay
from inferwatch.rules._testfile import load_test_file

INCIDENT = Path(__file__).parent / "incident" / "drift_five_features.yml"


def test_five_drifting_features_give_one_message_per_receiver() -> None:
    # rules: quality alerts group by service and model; a higher drift level of a feature
    # inhibits the lower ones; the message says how many alerts it stands for
    config = parse_config("")
    pipeline = ReplayPipeline(config.alerting, {})
    result = run_replay(load_test_file(INCIDENT), load_rules(config), sink=pipeline,
                        on_evaluated=pipeline.evaluated)
    assert result.ok, result.failures
    fired = {(e["alertname"], json.dumps(e["labels"], sort_keys=True))
             for e in result.timeline if e["state"] == "firing"}
    assert len(fired) == 14  # 5 warnings, 5 reviews, 3 rollbacks, 1 anomalous ratio
    firing = [n for n in pipeline.notifications if any(a["status"] == "firing" for a in n["alerts"])]
    assert Counter(n["receiver"] for n in firing) == {"wecom": 1}  # the warnings: all inhibited
    (n,) = firing
    assert n["group_labels"] == {"service": "ranker", "model": "m2"}
    names = Counter(a["alertname"] for a in n["alerts"])
    assert names == {"FeatureDriftRollback": 3, "FeatureDriftReview": 2, "AnomalousSamplesHigh": 1}
    assert "Stands for 14 alerts: 6 shown, 8 muted" in n["notes"][0]


def test_replay_json_lists_the_one_message(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "inferwatch", "replay", str(INCIDENT), "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [n["receiver"] for n in out["notifications"] if n["alerts"][0]["status"] == "firing"] == ["wecom"]
