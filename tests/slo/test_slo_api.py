"""``/api/v1/slos`` and the SLO parts of ``/api/v1/rules`` through Starlette's TestClient (simulated time)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pytest
from starlette.testclient import TestClient

from inferwatch.config import parse_config
from inferwatch.model import Labels, Sample, SimulatedClock, parse_matchers
from inferwatch.server import Server, build_components, create_app
from inferwatch.server.api._slo_api import slo_routes
from inferwatch.store import MemoryStore

Client = tuple[TestClient, Server, SimulatedClock]

OK = Labels({"__name__": "inferwatch_requests_total", "service": "ranker", "code": "200"})
BAD = Labels({"__name__": "inferwatch_requests_total", "service": "ranker", "code": "500"})


@pytest.fixture
def client() -> Iterator[Client]:
    clock = SimulatedClock(0.0)
    store = MemoryStore()
    # an hour at 600 requests a minute, the last 10 minutes with 2 % failing (20x the budget)
    bad = [12.0 * max(0, i - 50) for i in range(61)]
    store.append([s for i in range(61)
                  for s in (Sample(OK, i * 60.0, 600.0 * i - bad[i]), Sample(BAD, i * 60.0, bad[i]))])
    cfg = parse_config("storage: {type: memory}\nrules: {default_pack: false}\n"
                       "slos: [{service: ranker, type: availability, objective: 99.9}]")
    server = Server(build_components(cfg, clock=clock, store=store), clock=clock)
    with TestClient(create_app(server, extra_routes=slo_routes(server)), raise_server_exceptions=False) as c:
        yield c, server, clock
    server.stop()


def test_slos_show_the_sli_budget_and_burn_per_window(client: Client) -> None:
    c, server, clock = client
    for i in range(61):
        clock.set(i * 60.0)
        server.components.evaluator.evaluate(i * 60.0)
    body = c.get("/api/v1/slos").json()
    assert body["status"] == "success"
    (slo,) = body["data"]
    assert (slo["id"], slo["objective"], slo["period"]) == ("ranker-availability", 99.9, "30d")
    assert slo["sli"] == pytest.approx(0.98)
    windows = {w["window"]: w["burn_rate"] for w in slo["windows"]}
    assert windows["5m"] == pytest.approx(20.0) and windows["1h"] == pytest.approx(10 / 60 * 20, rel=0.05)
    assert slo["burning"] == ["ticket"]  # 5m at 20x but 1h at 3.3x: no page yet; 2h and 1d over 3x
    assert slo["budget_remaining"] < 1.0
    # rule: the budget rests on the hour observed, and the status says how much of 30 days that is
    assert slo["data_coverage"] == pytest.approx(3600 / (30 * 86400), rel=0.05)
    assert slo["observed_seconds"] == pytest.approx(3600, rel=0.05)
    assert [a["alertname"] for a in slo["alerts"]] == ["SLORankerAvailabilityTicket"]
    before = c.get("/api/v1/slos", params={"time": "2700"}).json()["data"][0]  # at 45 min: all clean
    assert before["sli"] == pytest.approx(1.0) and before["burning"] == []


def test_rules_lists_the_recordings_in_sloths_groups(client: Client) -> None:
    c, _, _ = client
    groups = c.get("/api/v1/rules").json()["data"]["groups"]
    assert [g["name"] for g in groups] == ["inferwatch", "sloth-slo-sli-recordings-ranker-availability",
                                           "sloth-slo-meta-recordings-ranker-availability"]
    assert [r["name"] for r in groups[0]["rules"]] == [
        "SLORankerAvailabilityFastBurn", "SLORankerAvailabilitySlowBurn", "SLORankerAvailabilityTicket"]
    assert {r["type"] for r in groups[1]["rules"]} == {"recording"}
    only_alerts = c.get("/api/v1/rules", params={"type": "alert"}).json()["data"]["groups"]
    assert [g["name"] for g in only_alerts] == ["inferwatch"]
    only_records = c.get("/api/v1/rules", params={"type": "record"}).json()["data"]["groups"]
    assert only_records[0]["rules"] == [] and len(only_records) == 3


def test_a_bad_time_is_a_400(client: Client) -> None:
    c, _, _ = client
    r = c.get("/api/v1/slos", params={"time": "yesterday"})
    assert r.status_code == 400 and r.json()["status"] == "error"


def test_recorded_series_go_through_the_given_appender() -> None:
    # serve hands the remote-write tee: recorded SLO series reach the remotes like scraped ones
    from inferwatch.rules import Evaluator
    from inferwatch.slo import load_rule_set

    class Tee:
        def __init__(self, store: MemoryStore) -> None:
            self.store, self.names = store, set()

        def append(self, samples: Iterable[Sample]) -> None:
            batch = list(samples)
            self.store.append(batch)
            self.names |= {s.labels.get("__name__") for s in batch}

    store = MemoryStore()
    store.append([Sample(OK, t, t) for t in (0.0, 60.0)])
    tee = Tee(store)
    rs = load_rule_set(parse_config("slos: [{service: ranker, type: availability, objective: 99.9}]"))
    Evaluator([], store, clock=SimulatedClock(60.0), recordings=rs.recordings, record_to=tee).evaluate(60.0)
    assert {"slo:sli_error:ratio_rate5m", "slo:sli_error:ratio_rate30d", "sloth_slo_info"} <= tee.names
    # no 5xx series at all (the service never failed): the SLI is 100 %, not missing
    five = store.select(parse_matchers('__name__="slo:sli_error:ratio_rate5m"'), 0.0, 60.0)
    assert five and list(five[0].v) == [0.0]
