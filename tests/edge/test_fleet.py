"""The fleet (issue #52): what agents report of themselves, the fleet table sorted, filtered and paged on
the server, and DeviceSilent counting a site's silent devices in one alert."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferwatch._exceptions import InputError
from inferwatch.config import parse_config
from inferwatch.edge import AgentStats, Batch, encode_batch
from inferwatch.edge import decode_batch as _decode
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.server import build_components
from inferwatch.server.ingest._edge_fleet import fleet_view, parse_fleet_query
from inferwatch.server.ingest._edge_ingest import EdgeIngest

T0 = 1_700_000_000.0


def decode_batch(body: bytes) -> Batch:
    return _decode(body, max_bytes=1 << 20, max_samples=1000)


def test_the_agents_report_of_itself_round_trips_and_bad_fields_are_left_out() -> None:
    stats = AgentStats(backlog=0, version="0.1.0", labels={"site": "berlin"}, sent_at=T0, errors=2,
                       last_error="retry: 503", config_hash="abc")
    batch = Batch("cam-1", "s:1", (Sample(Labels.of("x"), T0, 1.0),), 300.0, stats)
    assert decode_batch(encode_batch(batch)).agent == stats
    odd = AgentStats(version="v" * 500, labels={"site": "x" * 500}, errors=-3)
    got = decode_batch(encode_batch(Batch("cam-1", "s:2", batch.samples, 300.0, odd))).agent
    assert (len(got.version), len(got.labels["site"]), got.errors) == (64, 128, 0)


def _rows(n: int) -> list[dict[str, object]]:
    return [{"device": f"cam-{i:03d}", "labels": {"site": "berlin" if i % 3 else "paris"}, "backlog": i % 7,
             "version": "0.1.0" if i % 2 else "0.0.9", "last_contact": T0 - i, "silence_s": float(i)}
            for i in range(n)]


def test_the_fleet_is_sorted_filtered_and_paged_on_the_server() -> None:
    rows = _rows(200)
    page = fleet_view(rows, **parse_fleet_query({"sort": "backlog", "order": "desc", "filter": "site=paris",
                                                 "page": "2", "per_page": "10"}))
    assert (page["total"], page["devices"], page["pages"], len(page["rows"])) == (67, 200, 7, 10)
    backlogs = [r["backlog"] for r in page["rows"]]
    assert backlogs == sorted(backlogs, reverse=True)
    assert all(r["labels"]["site"] == "paris" for r in page["rows"])
    assert fleet_view(rows, filter="version!=0.1.0 cam-19")["total"] == 5  # cam-190, 192, ..., 198
    assert [r["device"] for r in fleet_view(rows, sort="labels.site", per_page=1)["rows"]] == ["cam-001"]
    for bad, where in [({"sort": "token"}, "sort"), ({"order": "up"}, "order"), ({"page": "0"}, "page"),
                       ({"per_page": "9999"}, "per_page"), ({"page": "x"}, "page")]:
        with pytest.raises(InputError, match=f"^{where}: "):
            parse_fleet_query(bad)


def test_200_devices_of_a_site_going_dark_are_one_device_silent_alert(tmp_path: Path) -> None:
    names = [f"cam-{i:03d}" for i in range(205)]
    tokens = ", ".join(f"{n}: tok-{n}" for n in names)
    cfg = parse_config(f"server: {{data_dir: '{tmp_path}'}}\nstorage: {{type: memory}}\n"
                       f"edge: {{devices: {{{tokens}}}}}\n")
    clock = SimulatedClock(T0)
    comps = build_components(cfg, clock=clock)
    ingest = EdgeIngest(cfg.edge, comps.store, clock, None)

    def upload(name: str, k: int) -> None:
        site = "berlin" if name < "cam-200" else "paris"
        stats = AgentStats(version="0.1.0", labels={"site": site}, sent_at=clock.now() - 2.0)
        batch = Batch(name, f"s:{k}", (Sample(Labels.of("temp"), clock.now(), 40.0),), 120.0, stats)
        ingest.ingest(f"Bearer tok-{name}", encode_batch(batch))

    for k in range(10):  # 10 minutes: every device reports every minute; berlin's 200 stop after 3
        for name in names:
            if k < 3 or name >= "cam-200":
                upload(name, k)
        ingest.watch(clock.now())
        clock.advance(60)
    now = clock.now()
    ingest.watch(now)
    firing = [a for a in comps.evaluator.evaluate(now) if not a.resolved(now)]
    assert [(a.name, a.labels.get("site"), a.value) for a in firing] == [("DeviceSilent", "berlin", 200.0)]
    assert "200 edge devices of site berlin" in firing[0].annotations["summary"]
    rows = fleet_view(ingest.fleet(), filter="site=berlin", sort="silence_s", order="desc")
    assert rows["total"] == 200 and rows["rows"][0]["clock_offset_s"] == 2.0
    assert rows["rows"][0]["version"] == "0.1.0"
    comps.close()
    ingest.close()


def test_the_agent_config_names_the_devices_labels_and_the_agent_reports_them(tmp_path: Path) -> None:
    from inferwatch._exceptions import ConfigError
    from inferwatch.edge import Agent, IngestTarget, parse_agent_config

    raw = {"device": "cam-1", "labels": {"site": "berlin", "rack": 7}, "sources": [{"type": "host"}],
           "spool": {"path": str(tmp_path / "s.sqlite")},
           "upload": {"url": "http://127.0.0.1:1", "token": "x"}}
    cfg = parse_agent_config(raw, source="agent.yml")
    assert cfg.labels == {"site": "berlin", "rack": "7"}
    agent = Agent(cfg, clock=SimulatedClock(T0), sources=[])
    assert isinstance(agent.uploader.target, IngestTarget)
    target = agent.uploader.target
    assert (target.labels, target.clock.now()) == ({"site": "berlin", "rack": "7"}, T0)
    agent.close()
    for labels, where in [({"device": "x"}, "labels.device"), ({"bad-name": "x"}, "labels.bad-name"),
                          ({"site": ["x"]}, "labels.site")]:
        with pytest.raises(ConfigError, match=f"agent.yml: {where}: "):
            parse_agent_config({**raw, "labels": labels}, source="agent.yml")
