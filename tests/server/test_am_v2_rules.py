"""Issue 15 #3, the rules behind the API v2 on a simulated clock (no processes): Alertmanager's
silence update rules, filter semantics, alert states, group order, postable alert validation."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from inferwatch.alerting import Pipeline, PipelineHandles, RecordingNotifier, Silence, rfc3339
from inferwatch.config import Secret, parse_config
from inferwatch.model import SimulatedClock, alertmanager_fingerprint, parse_matcher
from inferwatch.server.api._alerting_api import alerting_routes
from inferwatch.server.api._am_api import filter_matches, parse_postable_alerts

T0 = 1_800_000_000.0
AUTH = {"Authorization": "Bearer tok"}
CONFIG = """
alerting:
  route: {receiver: terminal, group_by: [alertname], group_wait: 0s,
          routes: [{matchers: ['tier="P0"'], receiver: phone, continue: true},
                   {matchers: ['alertname="Down"'], receiver: terminal}]}
  inhibit_rules: [{source_matchers: ['severity="critical"'], target_matchers: ['severity="warning"'],
                   equal: [alertname]}]
"""


@pytest.fixture
def api() -> Iterator[tuple[TestClient, Pipeline, SimulatedClock]]:
    clock = SimulatedClock(T0)
    p = Pipeline(parse_config(CONFIG).alerting, clock=clock, actions=[],
                 notifiers={"terminal": RecordingNotifier("terminal"), "phone": RecordingNotifier("phone")})
    with TestClient(Starlette(routes=alerting_routes(PipelineHandles.of(p), Secret("tok")))) as c:
        yield c, p, clock


def _silence(p: Pipeline, matchers: str, start: float, end: float) -> Silence:
    return p.silences.set(Silence.new(matchers, start, end, "ops", "why"), T0)


@pytest.mark.parametrize(("change", "same_id"), [
    # Alertmanager's canUpdate: only what does not rewrite the past keeps the id
    ({"ends_at": T0 + 7200}, True),                      # active: a new end
    ({"comment": "longer"}, True),                      # active: a new comment
    ({"starts_at": T0 - 60}, False),                    # active: a new start
    ({"matchers": 'service="other"'}, False),           # other matchers
])
def test_updating_an_active_silence(api, change: dict[str, object], same_id: bool) -> None:  # type: ignore[no-untyped-def]
    _, p, _ = api
    old = _silence(p, 'service="ranker"', T0, T0 + 3600)
    fields = {"matchers": 'service="ranker"', "starts_at": T0, "ends_at": T0 + 3600, "created_by": "ops",
              "comment": "why", **change}
    new = p.silences.set(Silence.new(id=old.id, **fields), T0 + 10)  # type: ignore[arg-type]
    assert (new.id == old.id) is same_id
    if not same_id:  # the old one ended now; the new one starts no earlier than now
        assert p.silences.get(old.id).state(T0 + 10) == "expired"  # type: ignore[union-attr]
        assert new.starts_at >= T0 + 10


def test_updating_an_expired_silence_creates_a_new_one(api) -> None:  # type: ignore[no-untyped-def]
    _, p, _ = api
    old = _silence(p, 'service="ranker"', T0, T0 + 60)
    new = p.silences.set(Silence.new('service="ranker"', T0 + 100, T0 + 200, "ops", "again", id=old.id),
                         T0 + 100)
    assert new.id != old.id and p.silences.get(new.id).state(T0 + 100) == "active"  # type: ignore[union-attr]


@pytest.mark.parametrize(("matcher", "labels", "hit"), [
    # an empty value: = and =~ match an absent label, != and !~ match a present one
    ('team=""', {"a": "1"}, True),
    ('team=""', {"team": "x"}, False),
    ('team!=""', {"team": "x"}, True),
    ('team!=""', {"a": "1"}, False),
    ('team=~"x|y"', {"team": "y"}, True),
    ('team!~"x"', {"team": "x"}, False),
])
def test_filter_semantics(matcher: str, labels: dict[str, str], hit: bool) -> None:
    assert filter_matches([parse_matcher(matcher)], labels) is hit


def test_alert_states_receivers_and_groups(api) -> None:  # type: ignore[no-untyped-def]
    c, _, clock = api
    body = [{"labels": {"alertname": "Down", "severity": "warning", "tier": "P0", "instance": "b"}},
            {"labels": {"alertname": "Down", "severity": "warning", "instance": "a"}},
            {"labels": {"alertname": "Down", "severity": "critical"}},
            {"labels": {"alertname": "Slow", "severity": "warning"}, "endsAt": rfc3339(T0 - 1)}]
    assert c.post("/api/v2/alerts", json=body, headers=AUTH).status_code == 200
    alerts = {a["labels"].get("instance", a["labels"]["severity"]): a for a in c.get("/api/v2/alerts").json()}
    assert set(alerts) == {"a", "b", "critical"}  # the resolved one is not listed
    critical_fp = alertmanager_fingerprint({"alertname": "Down", "severity": "critical"})
    assert alerts["a"]["status"] == {"inhibitedBy": [critical_fp], "silencedBy": [], "state": "suppressed"}
    assert [r["name"] for r in alerts["b"]["receivers"]] == ["phone", "terminal"]  # continue: both routes
    assert alerts["b"]["updatedAt"] == rfc3339(T0) and alerts["b"]["endsAt"] == rfc3339(T0 + 300)
    groups = c.get("/api/v2/alerts/groups").json()
    # same group labels: by receiver name; alerts by instance, those without one last
    assert [(g["receiver"]["name"], [a["labels"].get("instance") for a in g["alerts"]]) for g in groups] == [
        ("phone", ["b"]), ("terminal", ["a", "b", None])]
    phone = c.get("/api/v2/alerts", params={"receiver": "ph.*"}).json()
    assert [a["labels"]["instance"] for a in phone] == ["b"]
    assert len(c.get("/api/v2/alerts", params={"inhibited": "false"}).json()) == 1
    clock.advance(301)  # not re-sent within resolve_timeout: resolved, gone from the API
    assert c.get("/api/v2/alerts").json() == []


@pytest.mark.parametrize(("body", "error"), [
    ({"labels": {"a": "b"}}, "expected a JSON list"),
    ([{"labels": {}}], "at least one label pair"),
    ([{"labels": {"a": ""}}], "at least one label pair"),  # empty values are dropped first
    ([{"labels": {"1a": "b"}}], "invalid label name"),
    ([{"labels": {"a": 1}}], "expected an object of strings"),
    ([{"labels": {"a": "b"}, "startsAt": "soon"}], "startsAt: not an RFC 3339 time"),
    ([{"labels": {"a": "b"}, "startsAt": rfc3339(T0), "endsAt": rfc3339(T0 - 5)}],
     "start time must be before"),
])
def test_bad_postable_alerts_name_the_problem(body: object, error: str) -> None:
    if isinstance(body, list):
        good, errors = parse_postable_alerts(body, T0)
        assert not good and error in errors[0]
    else:
        with pytest.raises(Exception, match=error):
            parse_postable_alerts(body, T0)


def test_a_bad_alert_does_not_stop_the_good_ones(api) -> None:  # type: ignore[no-untyped-def]
    c, _, _ = api
    r = c.post("/api/v2/alerts", json=[{"labels": {}}, {"labels": {"alertname": "Ok"}}], headers=AUTH)
    assert r.status_code == 400 and "alerts[0]" in r.json()
    assert [a["labels"] for a in c.get("/api/v2/alerts").json()] == [{"alertname": "Ok"}]
    assert c.post("/api/v2/alerts", json=[{"labels": {"a": "b"}}]).status_code == 401


def test_silence_list_is_filtered_and_sorted_as_alertmanager_does(api) -> None:  # type: ignore[no-untyped-def]
    c, p, clock = api
    late = _silence(p, 'a="1"', T0, T0 + 7200)
    soon = _silence(p, 'a="1"', T0, T0 + 3600)
    pending = _silence(p, 'b="2"', T0 + 60, T0 + 120)
    gone = _silence(p, 'b="2"', T0, T0 + 1)
    clock.advance(2)
    assert [s["id"] for s in c.get("/api/v2/silences").json()] == [soon.id, late.id, pending.id, gone.id]
    filtered = c.get("/api/v2/silences", params={"filter": 'b="2"'}).json()
    assert [s["id"] for s in filtered] == [pending.id, gone.id]
    assert c.get("/api/v2/silences", params={"filter": 'b=~"2"'}).json() == []  # the operator must match too
    assert c.get(f"/api/v2/silence/{soon.id}").json()["endsAt"] == rfc3339(T0 + 3600)
    assert p.silences.silenced_by({"a": "1"}, T0 + 2) == tuple(sorted((soon.id, late.id)))
