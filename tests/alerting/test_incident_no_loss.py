"""Issue 36: the drift incident on a model whose estimated accuracy holds pages no drift tier."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from inferwatch.alerting import ReplayPipeline
from inferwatch.config import parse_config
from inferwatch.rules import load_rules
from inferwatch.rules._replay import run_replay
from inferwatch.rules._testfile import load_test_file

INCIDENT = Path(__file__).parent / "incident"


def _notified(name: str) -> tuple[set[str], list[dict[str, object]]]:
    config = parse_config("")
    pipeline = ReplayPipeline(config.alerting, {})
    result = run_replay(load_test_file(INCIDENT / name), load_rules(config), sink=pipeline,
                        on_evaluated=pipeline.evaluated)
    assert result.ok, result.failures
    fired = {e["alertname"] for e in result.timeline if e["state"] == "firing"}
    firing = [n for n in pipeline.notifications if any(a["status"] == "firing" for a in n["alerts"])]
    return fired, firing


def test_drift_without_a_loss_reaches_the_digest_not_the_pager() -> None:
    fired, firing = _notified("drift_five_features_no_loss.yml")
    assert fired == {"FeatureDriftWarning", "AnomalousSamplesHigh"}  # no Review, no Rollback
    paged = {a["alertname"] for n in firing if n["receiver"] == "wecom" for a in n["alerts"]}
    assert paged == {"AnomalousSamplesHigh"}  # the only P1 left (repeated every 4h) is not a drift tier
    # the 09:00 digest, delivered to the terminal: the five warnings, unmuted (no higher tier fires)
    (digest,) = [n for n in firing if n["receiver"] == "terminal"]
    assert digest["t"] == 9 * 3600.0
    assert Counter(a["alertname"] for a in digest["alerts"]) == {"FeatureDriftWarning": 5}


def test_the_same_drift_without_an_estimator_still_pages() -> None:
    _, firing = _notified("drift_five_features.yml")
    paged = Counter(a["alertname"] for n in firing if n["receiver"] == "wecom" for a in n["alerts"])
    assert paged == {"FeatureDriftRollback": 3, "FeatureDriftReview": 2, "AnomalousSamplesHigh": 1}
