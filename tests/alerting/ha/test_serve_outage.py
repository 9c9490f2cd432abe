"""A real ``inferwatch serve`` over a real PostgreSQL that is stopped for two minutes while a P0 fires.

At ``--speed 20`` (the lease of 15 s, ``HADatabaseFailing``'s minute and the two minutes of the
outage pass in seconds): the page still arrives, the self-alert fires, ``/api/v1/ha`` shows the
database down and the journal waiting, and what was done through the API during the outage (an
acknowledgement, a silence, the history) is in the database once it is back, the journal empty.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from tests._postgres import PostgresCluster
from tests.server._proc import start_serve

from alerting.ha.conftest import poll
from alerting.test_serve_oncall import BOUND_S, Hooks, _stop

pytestmark = pytest.mark.slow
TOKEN = "t0ken-for-ha-outage"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_with_postgresql_stopped_the_page_arrives_and_nothing_is_lost(
        tmp_path: Path, postgres: PostgresCluster) -> None:
    db = postgres.new_database()
    hooks = Hooks()
    cfg = tmp_path / "a.yml"
    cfg.write_text(f"""
server: {{data_dir: '{tmp_path / "a"}', api_token: {TOKEN}, evaluation_interval: 10s}}
ha: {{database: '{db}', replica: a, lease: 15s}}
alerting:
  default_actions: false
  receivers: [{{name: first, type: webhook, url: '{hooks.url}/first'}}]
  route: {{receiver: first, group_by: [alertname], group_wait: 0s, group_interval: 1h,
          routes: [{{matchers: ['alertname=~"HADatabaseFailing|Outage"'], receiver: first}}]}}
""")
    proc, url = start_serve(cfg, "--speed", "20")
    try:
        with httpx.Client(timeout=BOUND_S) as c:
            assert poll(lambda: c.get(f"{url}/api/v2/status").json()["cluster"]["peers"])
            ha = lambda: c.get(f"{url}/api/v1/ha").json()["data"]  # noqa: E731
            stopped = ha()["now"]  # the server's clock (20 times real time)
            postgres.stop()
            try:
                labels = {"alertname": "Outage", "tier": "P0", "service": "ranker"}
                alert = {"status": "firing", "labels": labels, "annotations": {"summary": "Outage on ranker"}}
                r = c.post(f"{url}/api/v1/alertmanager", headers=AUTH,
                           json={"version": "4", "alerts": [alert]})
                assert r.status_code == 200, r.text
                # the page arrives with the database gone; so does the self-alert about it
                assert hooks.wait(lambda got: any(b["groupLabels"]["alertname"] == "Outage" for _, b in got))
                assert hooks.wait(lambda got: any(b["groupLabels"]["alertname"] == "HADatabaseFailing"
                                                  for _, b in got))
                ack = c.post(f"{url}/api/v1/alerts/ack", headers=AUTH,
                             json={"matchers": ['alertname="Outage"'], "by": "oncall"})
                assert ack.status_code == 200, ack.text
                sil = c.post(f"{url}/api/v2/silences", headers=AUTH, json={
                    "matchers": [{"name": "alertname", "value": "Later", "isRegex": False}],
                    "startsAt": "2000-01-01T00:00:00Z", "endsAt": "2100-01-01T00:00:00Z",
                    "createdBy": "ops", "comment": "made during the outage"})
                assert sil.status_code == 200, sil.text
                # the outage as the dashboard shows it: the database down, what waits in the journal
                down = ha()
                assert down["database"]["state"] == "down" and down["journal"]["pending"] > 0, down
                assert poll(lambda: ha()["now"] >= stopped + 120)  # two minutes of the server's clock
            finally:
                postgres.start()

            def written_back() -> tuple[list[Any], list[Any], set[str]]:
                with psycopg.connect(db) as conn:
                    acks = conn.execute('SELECT "by" FROM acks').fetchall()
                    silences = conn.execute("SELECT created_by FROM silences").fetchall()
                    kinds = {str(k) for (k,) in conn.execute("SELECT DISTINCT kind FROM history")}
                return acks, silences, kinds
            assert poll(lambda: written_back()[0] and written_back()[1])
            written_back_at = poll(lambda: (h := ha())["journal"]["pending"] == 0 and h)
            acks, silences, kinds = written_back()
            # who, as the API records them (with the credential that made them)
            assert [str(a).startswith("oncall") for (a,) in acks] == [True]
            assert [str(b).startswith("ops") for (b,) in silences] == [True]
            assert {"firing", "notified", "acknowledged"} <= kinds, kinds
    finally:
        err = _stop(proc)
        hooks.service.stop()
    assert "Traceback" not in err, err
    assert written_back_at["journal"]["pending"] == 0 and written_back_at["database"]["state"] == "up"
    assert "is back" in err and "writes of the outage written back" in err
