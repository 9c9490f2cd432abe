"""Actions: once per firing episode, idempotent, outcome recorded; Kubernetes and degrade fakes."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from alerting.conftest import alert
from alerting.fakes import FakeKube, FakeService, Handler, Request
from inferwatch import ConfigError
from inferwatch.alerting import Pipeline, RecordingNotifier, StateDB
from inferwatch.config import parse_config

Fake = Callable[[Handler], FakeService]


def pipeline(yaml: str, db: StateDB | None = None) -> tuple[Pipeline, RecordingNotifier]:
    cfg = parse_config(yaml).alerting
    rec = RecordingNotifier("phone")
    recs = {r.name: rec for r in cfg.effective_receivers()}
    return Pipeline(cfg, db=db, notifiers=recs, rng=random.Random(0)), rec


def _scale_out(url: str, extra: str) -> str:
    """Only a scale-out action on P0 (namespace prod, token kt) against the fake API at ``url``."""
    return ("alerting: {route: {receiver: phone, group_wait: 0s, group_interval: 1m}, "
            "default_actions: false, actions: [{name: scale_out, type: kubernetes_scale, "
            f"matchers: ['tier=\"P0\"'], namespace: prod, api_server: '{url}', token: kt, {extra}}}]}}")


def test_scale_out_once_per_episode_bounded_by_max(fake: Fake, tmp_path: Path) -> None:
    kube = FakeKube("kt", {"prod/ranker": 2})
    svc = fake(kube)
    yaml = _scale_out(svc.url, "max_replicas: 3")
    db = f"{tmp_path}/a.db"
    p, rec = pipeline(yaml, StateDB(db))
    down = alert("ServiceUnavailable", tier="P0", severity="critical")
    for t in range(0, 600, 60):  # many flushes, one episode
        p.send([down], now=t)
        p.tick(t)
    assert kube.replicas["prod/ranker"] == 3
    (r,) = [x for x in p.act.records() if x.action == "scale_out"]
    assert r.outcome == "scaled deployment prod/ranker from 2 to 3 replicas" and r.ok
    assert "action scale_out (fire): scaled deployment prod/ranker" in rec.sent[0].notes[0]
    p.db.close()
    p2, _ = pipeline(yaml, StateDB(db))  # restart: same episode, no second scale
    p2.send([down], now=700)
    assert len([q for q in svc.requests if q.method == "PATCH"]) == 1
    # a new episode scales again, but never past max_replicas
    p2.send([alert("ServiceUnavailable", start=800, tier="P0", severity="critical")], now=800)
    assert kube.replicas["prod/ranker"] == 3
    assert p2.act.records()[-1].outcome == "deployment prod/ranker already at 3 replicas (max 3)"


def test_scale_out_with_kubeconfig_credentials(fake: Fake, tmp_path: Path) -> None:
    kube = FakeKube("from-kubeconfig", {"default/ranker": 1})
    svc = fake(kube)
    kc = tmp_path / "config"
    kc.write_text(f"""apiVersion: v1
kind: Config
current-context: dev
contexts: [{{name: dev, context: {{cluster: c1, user: u1}}}}]
clusters: [{{name: c1, cluster: {{server: '{svc.url}'}}}}]
users: [{{name: u1, user: {{token: from-kubeconfig}}}}]
""")
    p, _ = pipeline("alerting: {route: {receiver: phone, group_wait: 0s}, default_actions: false, actions: "
                    f"[{{name: s, type: kubernetes_scale, matchers: ['tier=\"P0\"'], kubeconfig: '{kc}'}}]}}")
    p.send([alert(tier="P0", severity="critical")], now=0)
    assert kube.replicas["default/ranker"] == 2


def test_no_kubernetes_credentials_is_recorded_not_raised(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("KUBECONFIG", "/nonexistent")
    monkeypatch.setenv("HOME", "/nonexistent")
    p, rec = pipeline("alerting: {route: {receiver: phone, group_wait: 0s}}")
    p.send([alert("ServiceUnavailable", tier="P0", severity="critical")], now=0)
    outcomes = [r.outcome for r in p.act.records()]
    assert outcomes[0].startswith("skipped: no Kubernetes credentials (would scale deployment default/ranker")
    assert len(rec.sent) == 1


def test_degrade_on_fire_and_restore_on_resolve(fake: Fake) -> None:
    seen: list[Request] = []

    def admin(r: Request) -> tuple[int, dict[str, str], bytes]:
        seen.append(r)
        return (200, {}, b"{}") if r.path == "/admin/degrade" else (404, {}, b"")

    svc = fake(admin)
    p, _ = pipeline("alerting: {route: {receiver: phone, group_wait: 0s, group_interval: 1m}, actions: "
                    f"[{{name: degrade, type: degrade, matchers: ['alertname=\"SevereLatency\"'], "
                    f"url: '{svc.url}/admin/degrade'}}]}}")
    p.send([alert("SevereLatency")], now=0)
    p.send([alert("SevereLatency")], now=30)
    p.send([alert("SevereLatency", end=90)], now=90)
    p.tick(120)
    assert [r.json() for r in seen] == [{"enabled": True}, {"enabled": False}]
    assert [r.phase for r in p.act.records()] == ["fire", "resolve"]


def test_rollback_not_enabled_is_a_recommendation_in_the_notification() -> None:
    p, rec = pipeline("alerting: {route: {receiver: phone, group_wait: 0s}}")
    # rule: rollback runs only when enabled; otherwise the notification recommends it
    p.send([alert("FeatureDriftRollback", dimension="quality", model="ranker-v7")], now=0)
    (n,) = rec.sent
    assert any("rollback of ranker-v7 to the previous version recommended" in x for x in n.notes)


def test_failed_action_is_recorded_and_notification_still_sent(fake: Fake) -> None:
    svc = fake(lambda r: (500, {}, b"boom"))
    p, rec = pipeline("alerting: {route: {receiver: phone, group_wait: 0s}, actions: "
                      f"[{{name: hook, type: http, matchers: ['tier=\"P1\"'], url: '{svc.url}/x'}}]}}")
    p.send([alert()], now=0)
    r = next(x for x in p.act.records() if x.action == "hook")
    assert not r.ok and r.outcome.startswith("failed:") and len(rec.sent) == 1


def test_rollback_runs_once_per_model_however_many_features_drift() -> None:
    # rule: once_per (service, model) within the cooldown: five drifted features of one model
    # make one recommendation; the other episodes are recorded as deduplicated, without a note
    p, rec = pipeline("alerting: {route: {receiver: phone, group_wait: 0s, group_by: [alertname]}}")
    drifts = [alert("FeatureDriftRollback", dimension="quality", model="ranker-v7", feature=f"f{i}")
              for i in range(5)]
    p.send([*drifts, alert("FeatureDriftRollback", dimension="quality", model="ranker-v8", feature="f0")],
           now=0)
    notes = [x for n in rec.sent for x in n.notes if "rollback" in x]
    assert len([x for x in notes if "ranker-v7" in x]) == 1
    assert len([x for x in notes if "ranker-v8" in x]) == 1
    outcomes = [r.outcome for r in p.act.records() if r.action == "rollback"]
    assert len(outcomes) == 6
    dedup = [o for o in outcomes if o.startswith("deduplicated:")]
    assert len(dedup) == 4
    assert all("model='ranker-v7'" in o and "once per 1h" in o for o in dedup)


def test_scale_out_storm_across_instances_is_one_step_per_cooldown(fake: Fake, tmp_path: Path) -> None:
    # rule: a P0 storm on three instances of one service scales once; the cooldown is kept in
    # SQLite (a restart inside it does not scale again); after it, a new episode scales again
    kube = FakeKube("kt", {"prod/ranker": 2})
    svc = fake(kube)
    yaml = _scale_out(svc.url, "max_replicas: 9, cooldown: 10m")
    db = f"{tmp_path}/a.db"
    p, _ = pipeline(yaml, StateDB(db))
    storm = [alert("ServiceUnavailable", tier="P0", severity="critical", instance=f"10.0.0.{i}:9000")
             for i in range(3)]
    p.send(storm, now=0)
    assert kube.replicas["prod/ranker"] == 3
    p.db.close()
    p2, _ = pipeline(yaml, StateDB(db))
    late = {"tier": "P0", "severity": "critical"}
    p2.send([alert("ServiceUnavailable", start=300, instance="10.0.0.9:9000", **late)], now=300)
    assert kube.replicas["prod/ranker"] == 3  # inside the 10 minutes
    p2.send([alert("ServiceUnavailable", start=700, instance="10.0.0.1:9000", **late)], now=700)
    assert kube.replicas["prod/ranker"] == 4
    patches = [q for q in svc.requests if q.method == "PATCH"]
    assert len(patches) == 2


def test_once_per_names_labels() -> None:
    with pytest.raises(ConfigError, match="once_per"):
        parse_config("alerting: {actions: [{name: r, type: rollback, once_per: ['not-a-label']}]}")


@pytest.mark.parametrize("action", [
    "{name: d, type: degrade, url: 'http://x/admin', once_per: [service]}",
    "{name: h, type: http, url: 'http://x/on', resolve_url: 'http://x/off', once_per: [service]}",
    "{name: c, type: command, argv: [/bin/true], resolve_argv: [/bin/true], once_per: [service]}",
])
def test_once_per_is_refused_for_actions_that_undo_themselves(action: str) -> None:
    # rule: the first of several alerts to resolve would undo the shared run for all of them
    with pytest.raises(ConfigError, match="once_per: not supported"):
        parse_config(f"alerting: {{actions: [{action}]}}")


def test_the_default_scale_out_takes_only_p0_alerts_with_a_service() -> None:
    # TargetDown (job/instance, no service) used to run scale_out and record "placeholder {service}"
    from inferwatch.config import AlertingConfig
    from inferwatch.model import Labels, matches_all, parse_matchers

    scale = next(a for a in AlertingConfig().effective_actions() if a.name == "scale_out")
    matchers = parse_matchers(scale.matchers)
    assert matches_all(matchers, Labels({"alertname": "ServiceUnavailable", "tier": "P0", "service": "demo"}))
    assert not matches_all(matchers, Labels({"alertname": "TargetDown", "tier": "P0", "job": "demo"}))
    assert not matches_all(matchers, Labels({"alertname": "SevereLatency", "tier": "P1", "service": "demo"}))
