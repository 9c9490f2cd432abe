"""Server side: EdgeDeviceOffline (no data and no heartbeat for 1.5 heartbeats, P1) and EdgeBufferDropping
(P2),
on a simulated clock, through the real ingest handler, store and rule evaluator."""

from __future__ import annotations

from pathlib import Path

from inferwatch.config import parse_config
from inferwatch.edge import AgentStats, Batch, encode_batch
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.server import build_components
from inferwatch.server.ingest._edge_ingest import EdgeIngest

T0 = 1_700_000_000.0


def _firing(comps: object, now: float) -> list[tuple[str, str, str]]:
    alerts = comps.evaluator.evaluate(now)  # type: ignore[attr-defined]
    return sorted((a.name, a.labels["device"], a.labels["tier"]) for a in alerts if not a.resolved(now))


def test_offline_after_a_heartbeat_and_a_half_and_dropping_when_the_spool_drops(tmp_path: Path) -> None:
    cfg = parse_config(f"server: {{data_dir: '{tmp_path}'}}\nstorage: {{type: memory}}\n"
                       "edge: {devices: {cam-1: tok1, cam-2: tok2}}\n")
    clock = SimulatedClock(T0)
    comps = build_components(cfg, clock=clock)
    ingest = EdgeIngest(cfg.edge, comps.store, clock, None)
    dropped = Labels.of("inferwatch_edge_spool_dropped_total", reason="bytes")

    def upload(device: str, token: str, n: int, drops: float) -> None:
        t = clock.now()
        samples = (Sample(Labels.of("temp"), t, 40.0), Sample(dropped, t, drops))
        ingest.ingest(f"Bearer {token}", encode_batch(Batch(device, f"s:{n}", samples, 120.0, AgentStats())))

    for k in range(20):  # 20 minutes: cam-1 reports every minute, cam-2 stops after 5
        upload("cam-1", "tok1", k, 0.0 if k < 10 else 50.0 + k)
        if k < 5:
            upload("cam-2", "tok2", k, 0.0)
        ingest.watch(clock.now())
        clock.advance(60)
    now = clock.now()
    ingest.watch(now)
    # cam-2: silent since minute 4 = 16 min > 1.5 x its 2 min heartbeat; cam-1 dropped after minute 10
    want = [("EdgeBufferDropping", "cam-1", "P2"), ("EdgeDeviceOffline", "cam-2", "P1")]
    assert _firing(comps, now) == want
    comps.close()
    ingest.close()


def test_no_edge_rules_without_devices() -> None:
    from inferwatch.rules import load_rules

    names = [r.name for r in load_rules(parse_config(""))]
    assert "EdgeDeviceOffline" not in names and "EdgeBufferDropping" not in names
