"""The demo's loopback fakes answer as the services they stand for document, and refuse bad requests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from inferwatch.demo import DemoFakes


@pytest.fixture(scope="module")
def fakes() -> Iterator[DemoFakes]:
    f = DemoFakes()
    yield f
    f.stop()


def _event(key: str, **over: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"routing_key": key, "event_action": "trigger", "dedup_key": "k1",
                            "payload": {"summary": "down", "source": "demo", "severity": "critical",
                                        "class": "ServiceUnavailable"}}
    return {**body, **over}


@pytest.mark.parametrize(
    ("over", "status"),
    [
        ({}, 202),                                                       # a valid trigger is accepted
        ({"routing_key": "wrong"}, 400),                                 # unknown integration key
        ({"event_action": "escalate"}, 400),                             # only trigger/acknowledge/resolve
        ({"payload": {"summary": "x", "source": "s", "severity": "p0"}}, 400),  # severity enumerated
        ({"payload": {"summary": "x" * 1025, "source": "s", "severity": "info"}}, 400),  # summary <= 1024
        ({"event_action": "resolve", "dedup_key": ""}, 400),             # resolve needs its dedup_key
        ({"event_action": "resolve", "payload": None}, 202),             # resolve needs no payload
    ],
)
def test_pagerduty_fake_checks_events(fakes: DemoFakes, over: dict[str, Any], status: int) -> None:
    pd = fakes.pagerduty
    r = httpx.post(pd.url + "/v2/enqueue", json=_event(pd.routing_key, **over))
    assert r.status_code == status, r.text
    if status == 202:
        assert r.json() == {"status": "success", "message": "Event processed", "dedup_key": "k1"}
        assert pd.events[-1].event_action == over.get("event_action", "trigger")
    else:
        assert r.json()["status"] == "invalid event"


def test_pagerduty_fake_remembers_the_incident() -> None:
    f = DemoFakes()
    try:
        pd = f.pagerduty
        httpx.post(pd.url + "/v2/enqueue", json=_event(pd.routing_key, dedup_key="abc"))
        assert pd.incidents == {"abc": "triggered"}
        resolve = _event(pd.routing_key, dedup_key="abc", event_action="resolve", payload=None)
        httpx.post(pd.url + "/v2/enqueue", json=resolve)
        assert pd.incidents == {"abc": "resolved"}
        assert [(e.event_action, e.alertname) for e in pd.events] == [
            ("trigger", "ServiceUnavailable"), ("resolve", "ServiceUnavailable")]
    finally:
        f.stop()


MERGE = "application/merge-patch+json"


@pytest.mark.parametrize(
    ("method", "path", "auth", "ctype", "body", "status"),
    [
        ("GET", "default/deployments/demo", True, "", None, 200),            # read the scale
        ("GET", "default/deployments/demo", False, "", None, 401),           # bearer token required
        ("GET", "default/deployments/other", True, "", None, 404),           # unknown deployment
        ("PATCH", "default/deployments/demo", True, "application/json", {"spec": {"replicas": 3}}, 415),
        ("PATCH", "default/deployments/demo", True, MERGE, {"spec": {"replicas": -1}}, 422),  # invalid
        ("DELETE", "default/deployments/demo", True, "", None, 405),         # only GET and PATCH here
    ],
)
def test_kubernetes_fake_checks_requests(
    fakes: DemoFakes, method: str, path: str, auth: bool, ctype: str, body: Any, status: int,
) -> None:
    kube = fakes.kubernetes
    headers = {"Authorization": f"Bearer {kube.token}"} if auth else {}
    if ctype:
        headers["Content-Type"] = ctype
    r = httpx.request(method, f"{kube.url}/apis/apps/v1/namespaces/{path}/scale", headers=headers,
                      json=body)
    assert r.status_code == status, r.text
    assert r.json()["kind"] == ("Scale" if status == 200 else "Status")
    assert kube.replicas == {"default/demo": 1}  # nothing refused changed the state


def test_kubernetes_fake_merge_patch_scales_and_is_recorded() -> None:
    f = DemoFakes()
    try:
        kube = f.kubernetes
        url = f"{kube.url}/apis/apps/v1/namespaces/default/deployments/demo/scale"
        headers = {"Authorization": f"Bearer {kube.token}", "Content-Type": MERGE}
        r = httpx.patch(url, headers=headers, json={"spec": {"replicas": 4}})
        assert r.status_code == 200 and r.json()["spec"]["replicas"] == 4
        httpx.patch(url, headers=headers, json={"spec": {"replicas": 4}})  # no change: not recorded
        assert kube.replicas["default/demo"] == 4
        assert [(c.deployment, c.before, c.after) for c in kube.changes] == [("default/demo", 1, 4)]
    finally:
        f.stop()
