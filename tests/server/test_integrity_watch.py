"""Issue 59 #2: while the server runs, a daily quick_check finds a file damaged meanwhile and says so."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock
from inferwatch.server import build
from inferwatch.server._integrity import CHECK_EVERY_S

BOUND_S = 60.0


def _damage_first_table_page(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file, where the damage goes
        (page,) = db.execute("SELECT min(pageno) FROM dbstat WHERE name NOT LIKE 'sqlite_%'").fetchone()
        size = db.execute("PRAGMA page_size").fetchone()[0]
    with path.open("r+b") as f:
        f.seek((page - 1) * size)
        f.write(bytes([0x3C]) * size)


def test_a_file_damaged_while_running_is_found_by_the_daily_check(tmp_path: Path) -> None:
    clock = SimulatedClock(50_000.0)
    cfg = parse_config(f"server: {{data_dir: '{tmp_path}', evaluation_interval: 15s}}\n")
    parts = build(cfg, clock=clock, announce=lambda line: None)
    server = parts.server
    health = server.components.health
    assert health is not None and health.watch is not None and health.damage == []
    try:
        server.tick(50_000.0)
        _damage_first_table_page(tmp_path / "outcomes.sqlite")
        server.tick(50_015.0)  # not due yet: the check runs once a day
        health.watch.wait(BOUND_S)
        assert health.damage == []
        clock.set(50_000.0 + CHECK_EVERY_S)
        server.tick(clock.now())  # due: the check runs on its own thread
        health.watch.wait(BOUND_S)
        assert [d.file for d in health.damage] == ["outcomes.sqlite"]
        server.tick(clock.now() + 15)
        firing = [a for a in server.components.evaluator.active() if a.alertname == "DataFileDamaged"]
        assert [a.labels["file"] for a in firing] == ["outcomes.sqlite"]
    finally:
        parts.stop()
