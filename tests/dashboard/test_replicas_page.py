"""The Replicas page (issue 48) in a real headless Chromium, against two real ``inferwatch serve`` over a real
PostgreSQL: both replicas, which one leads, the lease, the database's state (and when it goes away), the
journal, in English and in Chinese."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from tests._postgres import PostgresCluster
from tests.server._proc import start_serve

from alerting.ha.conftest import poll, postgres  # noqa: F401 - the fixture
from alerting.test_serve_oncall import _stop
from dashboard.conftest import Watched

pytestmark = [pytest.mark.tools, pytest.mark.slow]
TIMEOUT_MS = 60_000


def _config(tmp_path: Path, name: str, db: str) -> Path:
    cfg = tmp_path / f"{name}.yml"
    cfg.write_text(f"""
server: {{data_dir: '{tmp_path / name}', api_token: t0ken-for-the-replicas-page, evaluation_interval: 1s}}
ha: {{database: '{db}', replica: {name}, lease: 2s}}
rules: {{default_pack: false}}
alerting: {{default_actions: false, route: {{receiver: terminal}}}}
""")
    return cfg


def test_the_replicas_page_shows_both_the_leader_and_the_database(
        tmp_path: Path, postgres: PostgresCluster, page: Watched) -> None:  # noqa: F811
    db = postgres.new_database()
    a, url_a = start_serve(_config(tmp_path, "a", db))
    b = None
    try:
        with httpx.Client(timeout=30) as c:
            ha = lambda url: c.get(f"{url}/api/v1/ha").json()["data"]  # noqa: E731
            assert poll(lambda: ha(url_a)["delivering"])  # A leads before B starts
            b, url_b = start_serve(_config(tmp_path, "b", db))
            assert poll(lambda: len(ha(url_b)["replicas"]) == 2)
        p = page.page
        p.goto(f"{url_b}/#/replicas")
        p.wait_for_selector("body[data-rendered='replicas'] tr[data-replica='a']", timeout=TIMEOUT_MS)
        assert p.locator("section.ha-summary [data-stat='replica'] b").inner_text() == "b"
        assert p.locator("section.ha-summary [data-stat='role'] b").inner_text() == "follower"
        assert p.locator("section.ha-summary [data-stat='holder'] b").inner_text() == "a"
        assert p.locator("section.ha-summary [data-stat='journal'] b").inner_text() == "0"
        assert p.locator("[data-stat='database'] b").get_attribute("data-state") == "up"
        rows = p.locator("table.replicas tr[data-replica]")
        assert rows.count() == 2 and p.locator("tr[data-leader='true']").get_attribute("data-replica") == "a"
        assert "(this one)" in p.locator("tr[data-replica='b']").inner_text()
        assert p.locator("#nav a.active").inner_text() == "Replicas"
        page.shot("replicas")
        # in Chinese, and the database going away shows on the next redraw
        p.evaluate("localStorage.setItem('inferwatch.lang', 'zh-CN')")
        p.reload()
        p.wait_for_selector("html[lang='zh-CN'] body[data-rendered='replicas'] tr[data-replica='a']",
                            timeout=TIMEOUT_MS)
        assert p.locator("main h2").inner_text() == "副本"
        assert p.locator("tr[data-leader='true'] .badge").inner_text() == "主副本（发送）"
        postgres.stop()
        try:
            p.wait_for_selector("[data-stat='database'] b[data-state='down']", timeout=TIMEOUT_MS)
            assert "数据库不可达" in p.locator("section.ha-summary p.msg").inner_text()
            page.shot("replicas-database-down-zh-CN")
        finally:
            postgres.start()
        p.wait_for_selector("[data-stat='database'] b[data-state='up']", timeout=TIMEOUT_MS)
        assert page.take() == []
    finally:
        errors = _stop(a) + (_stop(b) if b is not None else "")
    assert "Traceback" not in errors, errors
