"""The demo service: /predict, the admin switches, 4xx (never 500) on bad bodies, /metrics."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from starlette.testclient import TestClient

from inferwatch.demo import FEATURES, DemoService, FeatureGenerator, train_model
from inferwatch.sdk import Monitor, read_sample

ROW = {"age": 30, "income_k": 55.5, "session_s": 200, "clicks_7d": 4, "price": 40}


@pytest.fixture
def service() -> Iterator[DemoService]:
    rng = np.random.default_rng(7)
    model = train_model(FeatureGenerator(rng), n=1000)
    with Monitor("demo", "ctr-logreg", "v1") as monitor:
        yield DemoService(model, monitor, rng)


def test_predict_scores_a_row(service: DemoService) -> None:
    with TestClient(service.app) as client:
        r = client.post("/predict", json={"features": ROW})
    body = r.json()
    assert r.status_code == 200 and body["path"] == "full"
    assert 0 <= body["score"] <= 1
    assert body["confidence"] == pytest.approx(max(body["score"], 1 - body["score"]))


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"{not json", "not valid JSON"),                             # unparsable body
        (b"[1, 2]", "must be a JSON object"),                        # wrong top-level type
        (b'{"rows": {}}', "'features' must be an object"),           # features missing
        (b'{"features": {"age": 1}}', "features.income_k: missing"),  # a feature missing
        (b'{"features": {"age": "old", "income_k": 1, "session_s": 1, "clicks_7d": 1, "price": 1}}',
         "features.age: expected a finite number"),                  # non-numeric feature
    ],
)
def test_bad_predict_bodies_get_400_naming_the_problem(
    service: DemoService, body: bytes, fragment: str,
) -> None:
    with TestClient(service.app) as client:
        r = client.post("/predict", content=body)
    assert r.status_code == 400
    assert fragment in r.json()["error"]


@pytest.mark.parametrize(
    ("faults", "code"),
    [
        ({"unavailable_ratio": 1.0}, 503),   # every request shed
        ({"error_ratio": 1.0}, 500),         # every request fails in the model
        ({"latency_ms": 1.0}, 200),          # slow but fine
    ],
)
def test_faults_switch_changes_answers(service: DemoService, faults: dict[str, Any], code: int) -> None:
    with TestClient(service.app) as client:
        state = client.post("/admin/faults", json=faults).json()
        assert all(state["faults"][k] == v for k, v in faults.items())
        codes = {client.post("/predict", json={"features": ROW}).status_code for _ in range(5)}
    assert codes == {code}


@pytest.mark.parametrize(
    "body",
    [
        {"latency_ms": -1},          # negative latency
        {"error_ratio": 1.5},        # ratio above 1
        {"unavailable_ratio": "x"},  # not a number
        {"latency": 10},             # unknown field
    ],
)
def test_bad_faults_get_400_and_change_nothing(service: DemoService, body: dict[str, Any]) -> None:
    with TestClient(service.app) as client:
        r = client.post("/admin/faults", json=body)
        assert r.status_code == 400 and "error" in r.json()
        assert client.get("/admin/state").json()["faults"] == {
            "latency_ms": 0.0, "error_ratio": 0.0, "unavailable_ratio": 0.0}


def test_degrade_switch_uses_the_cheap_path_and_skips_injected_latency(service: DemoService) -> None:
    with TestClient(service.app) as client:
        client.post("/admin/faults", json={"latency_ms": 60_000})  # would time out the test if used
        assert client.post("/admin/degrade", json={"enabled": True}).json()["degraded"] is True
        assert client.post("/predict", json={"features": ROW}).json()["path"] == "cheap"
        assert client.post("/admin/degrade", json={"enabled": "yes"}).status_code == 400
        assert client.get("/admin/state").json()["degraded"] is True
        assert client.post("/admin/degrade", json={"enabled": False}).json()["degraded"] is False


def test_requests_show_up_on_metrics(service: DemoService) -> None:
    with TestClient(service.app) as client:
        for _ in range(3):
            client.post("/predict", json={"features": ROW})
        client.post("/predict", content=b"x")
        text = client.get("/metrics").text
    labels = {"service": "demo", "model": "ctr-logreg", "version": "v1", "route": "/predict"}
    assert read_sample(text, "inferwatch_requests_total", {**labels, "code": "200"}) == 3.0
    assert read_sample(text, "inferwatch_requests_total", {**labels, "code": "400"}) == 1.0
    assert list(FEATURES) == service.state()["model"]["features"]
