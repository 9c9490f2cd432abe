"""An alertmanager.yml read as it is: what it becomes, and every refusal naming file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferwatch._exceptions import ConfigError
from inferwatch.config import (
    DiscardReceiverSpec,
    EmailReceiverSpec,
    SlackReceiverSpec,
    TelegramReceiverSpec,
    WebhookReceiverSpec,
    WeComAppReceiverSpec,
    alertmanager_file_notes,
    load_config,
)

AM = """\
global:
  resolve_timeout: 2m
  smtp_smarthost: 'smtp.example.com:587'
  smtp_from: 'am@example.com'
  smtp_hello: example.com
route:
  receiver: hook
  routes:
    - match: {team: db}
      match_re: {env: 'prod|stage'}
      receiver: mail
      continue: true
      group_by: ['...']
    - matchers: ['severity=~"crit.*"', 'env!="dev"']
      receiver: wechat
      mute_time_intervals: [night]
    - {matchers: [team="void"], receiver: 'null'}
receivers:
  - name: hook
    webhook_configs: [{url: 'http://127.0.0.1:9/hook', http_config: {bearer_token: s3cret}}]
  - name: mail
    email_configs: [{to: 'a@example.com, b@example.com', text: '{{ template "email.default.html" . }}'}]
  - name: wechat
    wechat_configs: [{corp_id: ww1, agent_id: '1000002', api_secret: x, to_user: 'u1|u2'}]
  - name: 'null'
inhibit_rules:
  - {source_match: {severity: critical}, target_match_re: {severity: 'warn.*'}, equal: [alertname]}
time_intervals:
  - name: night
    time_intervals: [{times: [{start_time: '22:00', end_time: '24:00'}], weekdays: ['monday:friday']}]
templates: ['/etc/alertmanager/*.tmpl']
"""


def _load(tmp_path: Path, am: str, own: str = "") -> object:
    (tmp_path / "alertmanager.yml").write_text(am)
    (tmp_path / "inferwatch.yml").write_text(f"alerting:\n  alertmanager_file: alertmanager.yml\n{own}")
    return load_config(tmp_path / "inferwatch.yml").alerting


def test_the_file_becomes_routes_receivers_inhibitions_and_intervals(tmp_path: Path) -> None:
    a = _load(tmp_path, AM)
    assert a.route.group_by == ()  # Alertmanager's root without group_by: one group, not inferwatch's
    db, crit, _void = a.route.routes
    assert db.matchers == ('team="db"', 'env=~"prod|stage"') and db.continue_ and db.group_by == ("...",)
    assert crit.matchers == ('severity=~"crit.*"', 'env!="dev"') and crit.mute_time_intervals == ("night",)
    hook, mail, wechat, null = a.receivers
    assert isinstance(hook, WebhookReceiverSpec) and hook.send_resolved and hook.bearer_token is not None
    assert isinstance(mail, EmailReceiverSpec) and not mail.send_resolved  # each integration's own default
    assert mail.to == ("a@example.com", "b@example.com") and mail.smarthost == "smtp.example.com:587"
    assert isinstance(wechat, WeComAppReceiverSpec) and wechat.agent_id == 1000002
    assert wechat.to_user == ("u1", "u2") and wechat.url == "https://qyapi.weixin.qq.com"
    assert isinstance(null, DiscardReceiverSpec)
    (rule,) = a.inhibit_rules
    assert rule.source_matchers == ('severity="critical"',)
    assert rule.target_matchers == ('severity=~"warn.*"',)
    assert a.resolve_timeout == 120.0 and a.time_intervals[0].name == "night"
    notes = alertmanager_file_notes(a.alertmanager_file)
    assert [n.split(": ", 1)[0].rsplit(":", 1)[1] for n in notes] == ["5"]  # templates: read (none match)
    assert "global.smtp_hello is not read" in notes[0]


@pytest.mark.parametrize(("change", "line", "says"), [
    # an integration inferwatch does not have: refused by name
    (("  - name: 'null'\n", "  - name: 'null'\n    opsgenie_configs: [{api_key: k}]\n"), 26,
     "receivers[3].opsgenie_configs: receiver 'null': opsgenie_configs is not supported"),
    # a Go template that is not Alertmanager's default
    (('text: \'{{ template "email.default.html" . }}\'', "text: '{{ .CommonLabels.team }}'"), 22,
     "receivers[1].email_configs[0].text: a Go template"),
    # two integrations in one receiver
    (("  - name: 'null'\n",
      "  - name: 'null'\n    webhook_configs: [{url: 'http://a'}, {url: 'http://b'}]\n"), 25,
     "has 2 integrations"),
    ((" receiver: 'null'}", " receiver: nobody}"), 17, "route.routes[2].receiver: unknown receiver 'nobody'"),
    (("mute_time_intervals: [night]", "mute_time_intervals: [day]"), 16, "unknown time interval 'day'"),
    (("continue: true", "contine: true"), 12, "route.routes[0].contine: is not a route key"),
    (("matchers: ['severity=~\"crit.*\"', 'env!=\"dev\"']", "matchers: ['=~bad']"), 14,
     "route.routes[1].matchers[0]: not a list of matchers"),
    (("end_time: '24:00'", "end_time: '21:00'"), 29,
     "time_intervals[0]: time_intervals[0].times[0].end_time"),
    (("templates:", "template:"), 31, "template: is not a key of alertmanager.yml"),
    (("resolve_timeout: 2m", "resolve_timeout: soon"), 2, "global.resolve_timeout"),
    # Slack's title and text are rendered: a construct outside the subset is named
    (("  - name: 'null'\n", "  - name: 'null'\n    slack_configs: [{api_url: 'http://s', "
      "text: '{{ range $a := .Alerts }}{{ end }}'}]\n"), 26,
     "receivers[3].slack_configs[0].text: Go template: variables"),
])
def test_what_cannot_be_honoured_is_refused_with_file_line_and_key(
        tmp_path: Path, change: tuple[str, str], line: int, says: str) -> None:
    assert change[0] in AM
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, AM.replace(change[0], change[1]))
    assert f"alertmanager.yml:{line}: " in str(err.value) and says in str(err.value), str(err.value)


def test_the_file_and_own_routes_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="route given both here and by alertmanager_file"):
        _load(tmp_path, AM, "  route: {receiver: terminal}\n")
    (tmp_path / "inferwatch.yml").write_text("alerting: {alertmanager_file: missing.yml}\n")
    with pytest.raises(ConfigError, match=r"missing\.yml: the alertmanager\.yml not found"):
        load_config(tmp_path / "inferwatch.yml")


def test_slack_title_and_text_are_kept_as_go_templates(tmp_path: Path) -> None:
    am = AM.replace("  - name: 'null'\n", "  - name: 'null'\n  - name: chat\n    slack_configs: [{api_url: "
                    "'http://s', title: '{{ .CommonLabels.alertname }}',\n"
                    "      text: '{{ template \"slack.default.text\" . }}'}]\n")
    chat = _load(tmp_path, am).receivers[-1]
    assert isinstance(chat, SlackReceiverSpec)
    assert chat.title == "{{ .CommonLabels.alertname }}"
    assert chat.text is None  # Alertmanager's default template: inferwatch's own message


TEAM_TMPL = """{{ define "team.title" }}[{{ .Status }}] {{ .CommonLabels.alertname }}{{ end }}
{{ define "team.text" }}{{ range .Alerts }}{{ .Labels.instance }} {{ end }}{{ end }}
"""


def test_templates_files_give_the_definitions_the_message_fields_call(tmp_path: Path) -> None:
    # rule: templates: globs relative to the file; Slack title/text, Telegram and WeChat message rendered
    (tmp_path / "tmpl").mkdir()
    (tmp_path / "tmpl" / "team.tmpl").write_text(TEAM_TMPL)
    am = AM.replace("templates: ['/etc/alertmanager/*.tmpl']", "templates: ['tmpl/*.tmpl']").replace(
        "  - name: 'null'\n", "  - name: 'null'\n  - name: chat\n    slack_configs: [{api_url: 'http://s', "
        "title: '{{ template \"team.title\" . }}', text: '{{ template \"slack.default.text\" . }}'}]\n"
        "  - name: tg\n    telegram_configs: [{bot_token: t, chat_id: 42, "
        "message: '{{ template \"team.text\" . }}'}]\n"
        "  - name: wx\n    wechat_configs: [{corp_id: ww1, agent_id: '1', api_secret: x, "
        "message: '{{ .CommonLabels.alertname }}: {{ template \"team.text\" . }}'}]\n")
    *_, chat, tg, wx = _load(tmp_path, am).receivers
    assert isinstance(chat, SlackReceiverSpec) and chat.text is None  # the default: inferwatch's message
    assert chat.go_templates == (TEAM_TMPL,)
    data = {"Status": "firing", "CommonLabels": {"alertname": "Slow"},
            "Alerts": [{"Labels": {"instance": "h1"}}, {"Labels": {"instance": "h2"}}]}
    assert (template := chat.go_template("title")) is not None and template.render(data) == "[firing] Slow"
    assert isinstance(tg, TelegramReceiverSpec) and (msg := tg.go_template("message")) is not None
    assert msg.render(data) == "h1 h2 "
    assert isinstance(wx, WeComAppReceiverSpec) and (msg := wx.go_template("message")) is not None
    assert msg.render(data) == "Slow: h1 h2 "


@pytest.mark.parametrize(("tmpl", "field", "says"), [
    (TEAM_TMPL, '{{ template "team.nope" . }}', 'Go template: template "team.nope" is not defined'),
    ('{{ define "x" }}{{ $v := 1 }}{{ end }}', "x", "team.tmpl: Go template: variables"),
])
def test_a_template_it_cannot_render_is_refused_naming_it(
        tmp_path: Path, tmpl: str, field: str, says: str) -> None:
    (tmp_path / "team.tmpl").write_text(tmpl)
    am = AM.replace("templates: ['/etc/alertmanager/*.tmpl']", "templates: ['*.tmpl']").replace(
        "  - name: 'null'\n", "  - name: 'null'\n  - name: tg\n    telegram_configs: [{bot_token: t, "
        f"chat_id: 42, message: '{field}'}}]\n")
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, am)
    assert says in str(err.value) and "alertmanager.yml:" in str(err.value), str(err.value)
