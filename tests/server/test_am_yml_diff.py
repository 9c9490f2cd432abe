"""Issue 50 #4, differential: one alertmanager.yml, as it is, given to a real Alertmanager 0.25 and to
``inferwatch serve`` (``alerting: {alertmanager_file: ...}``); the same alerts posted to both give the
same notifications at one webhook fake: receivers, grouping (``group_by`` incl. ``'...'``), nested
routes with ``continue``, ``match``/``match_re``/``matchers`` incl. regex and negative, inhibition,
mute and active time intervals (one that always holds, one that never does), and resolution.

The file is the same bytes for both: the fake tells the senders apart by their User-Agent.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from tests._require import require_tool

from export._engines import alertmanager, poll
from inferwatch.alerting.notify.fakes import FakeRequest, LoopbackServer

from ._proc import serve

AM_BINARY = require_tool("prometheus-alertmanager", "alertmanager")  # the oracle: CI must have it
pytestmark = [pytest.mark.slow]
TOKEN = "am-yml-t0ken"
RECEIVERS = ("default", "db", "frontend", "pager", "ml", "muted", "muted-child", "office", "nobody")

AM_YML = """\
global: {{resolve_timeout: 5m}}
route:
  receiver: default
  group_by: [alertname]
  group_wait: 2s
  group_interval: 3s
  repeat_interval: 1h
  routes:
    - matchers: ['team="db"']
      receiver: db
      group_by: [alertname, instance]
      continue: true
    - match_re: {{service: "api|web"}}
      matchers: ['env!="dev"']
      receiver: frontend
      routes:
        - match: {{severity: critical}}
          receiver: pager
    - matchers: ['team=~"ml.*"', 'severity!~"info|debug"']
      receiver: ml
      group_by: ['...']
    - matchers: ['team="night"']
      receiver: muted
      mute_time_intervals: [always]
      routes:
        - matchers: ['sub="child"']
          receiver: muted-child
    - matchers: ['team="office"']
      receiver: office
      active_time_intervals: [never]
    - matchers: ['team="void"']
      receiver: nobody
    - matchers: ['team="chat"']
      receiver: chat
receivers:
{receivers}
  - name: nobody
inhibit_rules:
  - source_matchers: ['severity="critical"']
    target_matchers: ['severity="warning"']
    equal: [alertname, service]
time_intervals:
  - name: always
    time_intervals: [{{times: [{{start_time: '00:00', end_time: '24:00'}}]}}]
  - name: never
    time_intervals: [{{years: ['2001']}}]
templates: ['*.tmpl']
"""


def _alert(**labels: str) -> dict[str, Any]:
    return {"labels": {"alertname": "X", **labels}, "annotations": {"summary": f"{labels}"}}


ALERTS = [
    _alert(team="db", instance="db1"),
    _alert(team="db", instance="db2", alertname="Slow"),
    _alert(service="api", env="prod", severity="warning"),      # frontend; inhibited by the next
    _alert(service="api", env="prod", severity="critical"),     # pager (nested)
    _alert(service="web", env="dev", severity="critical"),      # env!="dev" misses: default
    _alert(service="webx", env="prod"),                          # anchored regex misses: default
    _alert(team="ml-core", severity="page", instance="g1"),     # ml, a group per label set
    _alert(team="ml-core", severity="page", instance="g2"),
    _alert(team="ml-core", severity="info"),                    # negative regex misses: default
    _alert(team="night", alertname="N"),                        # muted
    _alert(team="night", sub="child", alertname="N"),           # the child of a muted route: sent
    _alert(team="office", alertname="O"),                       # outside its active intervals
    _alert(team="void", alertname="V"),                         # a receiver with no integrations
    _alert(team="chat", alertname="C", instance="c1"),          # Slack, with Go templates
    _alert(team="chat", alertname="C", instance="c2"),
]
SLACK_TITLE = '[{{ .Status | toUpper }}{{ if eq .Status "firing" }}:{{ .Alerts.Firing | len }}{{ end }}] ' \
    '{{ .CommonLabels.alertname }} {{ .GroupLabels.SortedPairs }}'
SLACK_TEXT = '{{ template "team.lines" . }}{{ join "," .CommonLabels.Values }} {{ len .Alerts.Resolved }}'
# the file's templates: (relative to it, read by both): the text calls these definitions
TEAM_TMPL = """Outside a definition: never sent.
{{ define "team.line" }}{{ .Labels.instance | toUpper }}: {{ .Annotations.summary }} since {{- " " -}}
{{ .StartsAt }}{{ end }}
{{ define "team.lines" }}{{ range .Alerts }}{{ template "team.line" . }}
{{ end }}{{ end }}
"""



class Webhook:
    """Records each POST as (sender, receiver path, body)."""

    def __init__(self) -> None:
        self.got: list[tuple[str, str, dict[str, Any]]] = []
        self.first_round = 0  # how many inferwatch sent before any alert resolved
        self._lock = threading.Lock()
        self.server = LoopbackServer(self._handle).start()

    def _handle(self, req: FakeRequest) -> tuple[int, dict[str, str], bytes]:
        sender = "am" if req.headers.get("user-agent", "").startswith("Alertmanager") else "iw"
        with self._lock:
            self.got.append((sender, req.path.strip("/"), req.json()))
        return 200, {"Content-Type": "application/json"}, b"{}"

    def of(self, sender: str) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            return [(path, body) for s, path, body in self.got if s == sender]


def summary(path: str, body: dict[str, Any]) -> tuple[Any, ...]:
    """What both must agree on: not the external URL, nor a firing alert's endsAt (when each received it),
    nor groupKey (inferwatch's names the route by its place, ``{}/{team="db"}/0``; Alertmanager's by its
    sorted matchers, ``{}/{team="db"}``: the groups themselves are the same, by receiver and labels)."""
    alerts = sorted((a["status"], json.dumps(a["labels"], sort_keys=True),
                     json.dumps(a["annotations"], sort_keys=True), _time(a["startsAt"]), a["fingerprint"],
                     _time(a["endsAt"]) if a["status"] == "resolved" else 0.0) for a in body["alerts"])
    return (path, body["receiver"], body["status"], json.dumps(body["groupLabels"], sort_keys=True),
            json.dumps(body["commonLabels"], sort_keys=True),
            json.dumps(body["commonAnnotations"], sort_keys=True),
            body["version"], body["truncatedAlerts"], tuple(alerts))


# The first round: 2 db groups, pager, 2 ml groups, a default group, the muted route's child, chat (the
# frontend's warning inhibited); then pager and db resolved, and the frontend's warning no longer inhibited.
FIRST = Counter({("db", "firing"): 2, ("ml", "firing"): 2, ("pager", "firing"): 1, ("default", "firing"): 1,
                 ("muted-child", "firing"): 1, ("chat", ""): 1})
THEN = Counter({("pager", "resolved"): 1, ("db", "resolved"): 1, ("frontend", "firing"): 1})


def _has(hook: Webhook, who: str, wanted: Counter[tuple[str, str]]) -> bool:
    got = Counter((p, b.get("status", "")) for p, b in hook.of(who))
    return not wanted - got


def _time(text: str) -> float:
    """RFC 3339 as seconds (Alertmanager writes Go's shortest fraction, ``.81Z``; inferwatch ``.810Z``)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _iso(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@pytest.fixture(scope="module")
def sent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhook]:
    tmp = tmp_path_factory.mktemp("am-yml")
    hook = Webhook()
    receivers = "\n".join(f"  - name: {r}\n    webhook_configs: [{{url: '{hook.server.url}/{r}'}}]"
                          for r in RECEIVERS if r != "nobody")
    receivers += (f"\n  - name: chat\n    slack_configs: [{{api_url: '{hook.server.url}/chat', "
                  f"title: {json.dumps(SLACK_TITLE)}, text: {json.dumps(SLACK_TEXT)}}}]")
    (tmp / "alertmanager.yml").write_text(AM_YML.format(receivers=receivers))
    (tmp / "team.tmpl").write_text(TEAM_TMPL)
    iw_config = (f"storage: {{type: memory}}\nserver: {{api_token: {TOKEN}, data_dir: '{tmp / 'data'}'}}\n"
                 "rules: {default_pack: false}\nalerting: {alertmanager_file: alertmanager.yml, "
                 "default_actions: false}\n")
    # started now: an older alert is flushed at once (no group_wait, in both), before an inhibitor that
    # learns its sources asynchronously (Alertmanager's) may have seen the critical one
    start = datetime.now(UTC)
    alerts = [{**a, "startsAt": _iso(start)} for a in ALERTS]
    with alertmanager(AM_BINARY, tmp / "alertmanager.yml", tmp) as am, serve(iw_config, tmp) as iw, \
            httpx.Client(base_url=am.url, timeout=10) as a, \
            httpx.Client(base_url=iw.url, timeout=10, headers={"Authorization": f"Bearer {TOKEN}"}) as i:
        for c in (a, i):
            assert c.post("/api/v2/alerts", json=alerts).status_code == 200
        poll(lambda: all(_has(hook, who, FIRST) for who in ("am", "iw")), timeout=60,
             what="the first notifications of both")
        hook.first_round = len(hook.of("iw"))
        ended = [{**alerts[3], "endsAt": _iso(datetime.now(UTC) - timedelta(seconds=1))},
                 {**alerts[0], "endsAt": _iso(datetime.now(UTC) - timedelta(seconds=1))}]
        for c in (a, i):
            assert c.post("/api/v2/alerts", json=ended).status_code == 200
        poll(lambda: all(_has(hook, who, FIRST + THEN) for who in ("am", "iw")), timeout=60,
             what="the resolved notifications of both")
        yield hook
    hook.server.stop()
    assert not any("Traceback" in line for line in iw.lines), "".join(iw.lines)


def test_the_same_notifications_reach_the_webhook(sent: Webhook) -> None:
    am = sorted(summary(p, b) for p, b in sent.of("am") if p != "chat")
    iw = sorted(summary(p, b) for p, b in sent.of("iw") if p != "chat")
    order = {who: [(p, b["status"], sorted(a["labels"].get("instance", "") for a in b["alerts"]))
                   for p, b in sent.of(who) if p != "chat"] for who in ("am", "iw")}
    assert [s[:2] for s in am] == [s[:2] for s in iw], order  # the same receivers, as many times
    assert am == iw


def test_routes_grouping_inhibition_and_time_intervals_did_what_the_file_says(sent: Webhook) -> None:
    # rule: the differential could agree on nothing; these say it agreed on the interesting cases
    firing = [(p, b) for p, b in sent.of("iw") if p != "chat" and b["status"] == "firing"]
    paths = sorted(p for p, _ in firing)
    assert paths.count("db") == 2 and paths.count("ml") == 2 and "pager" in paths
    assert not {"muted", "office", "nobody"} & set(paths)
    assert "muted-child" in paths  # Alertmanager 0.25 does not pass a route's mute intervals to its children
    got = [(p, b) for p, b in sent.of("iw") if p != "chat"]
    resolved = sorted(p for p, b in got if b["status"] == "resolved")
    assert resolved == ["db", "pager"]
    # the frontend's warning was inhibited by the critical: it came only after the critical resolved
    order = [(p, b.get("status")) for p, b in sent.of("iw")]  # chat too: first_round counts it
    assert ("frontend", "firing") in order[sent.first_round:]
    assert ("frontend", "firing") not in order[:sent.first_round]



def test_slack_go_templates_render_the_same_text(sent: Webhook) -> None:
    # rule: the title and text of an alertmanager.yml's slack_configs, rendered as Alertmanager renders them,
    # the text through the definitions of the file's templates: (define, template, range inside)
    am, iw = ([b["attachments"][0] for p, b in sent.of(who) if p == "chat"] for who in ("am", "iw"))
    assert len(am) == len(iw) == 1
    assert (am[0]["title"], am[0]["text"]) == (iw[0]["title"], iw[0]["text"])
    assert iw[0]["title"] == '[FIRING:2] C [{alertname C}]' and iw[0]["text"].startswith("C1: ")
