"""No secret leaks: not into the log (with -v), the API answers, alerting.sqlite, errors or notes.

Each test looks for the secret itself in every place it could end up, and checks
that the thing that would have carried it (an HTTP log line, a failure record,
an action outcome, a config error) is there, so a test cannot pass by silence.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from alerting.conftest import alert
from alerting.fakes import FakeService, Handler, Reply, Request, slack_handler, wecom_handler
from inferwatch._exceptions import ConfigError
from inferwatch.alerting import HttpClient, Pipeline, PipelineHandles, RecordingNotifier, StateDB
from inferwatch.alerting.notify import build_notifier
from inferwatch.cli._main import main
from inferwatch.config import Secret, SlackReceiverSpec, WeComReceiverSpec, parse_config
from inferwatch.model import SimulatedClock
from inferwatch.server.api._alerting_api import alerting_routes

Fake = Callable[[Handler], FakeService]
WECOM_KEY = "WECOM-KEY-5f3a9c1e"
SLACK_PATH = "/services/T0SECRET1/B0SECRET2/SLACKPATHSECRET3"
BEARER = "BEARER-TOKEN-77e1a0"
HOOK_TOK = "HOOK-QUERY-TOKEN-91"
PD_SECRET = "PDROUTINGKEYSECRET00000000000042"  # 32 characters
TWILIO_TOKEN = "TWILIO-AUTH-TOKEN-3c"
ACTION_PASS, ACTION_TOK, ACTION_BEARER = "ACTION-PASS-123", "ACTION-TOK-456", "ACTION-BEARER-789"
API_TOKEN = "api-token-123"


def echo(status: int) -> Handler:
    """A receiver that refuses the request and echoes it, credentials first (text/plain)."""
    def h(r: Request) -> Reply:
        query = "&".join(f"{k}={v[0]}" for k, v in r.query.items())
        auth = r.headers.get("authorization", "")
        text = f"bad request: {r.path}?{query} auth={auth} body={r.body.decode()}"
        return status, {"Content-Type": "text/plain"}, text.encode()
    return h


def _everywhere(p: Pipeline, caplog: pytest.LogCaptureFixture, data: Path) -> str:
    """The log, both API answers and every byte of the state files, as one text to search."""
    with TestClient(Starlette(routes=alerting_routes(PipelineHandles.of(p), Secret(API_TOKEN)))) as c:
        api = c.get("/api/v1/notifications").text + c.get("/api/v1/actions").text
    p.db.close()
    files = b"".join(f.read_bytes() for f in sorted(data.iterdir()) if f.is_file())
    return caplog.text + api + files.decode("latin-1")


@pytest.fixture
def verbose(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """What ``inferwatch -v`` would log: everything at DEBUG."""
    caplog.set_level(logging.DEBUG)
    yield caplog


def test_http_request_log_shows_neither_the_wecom_key_nor_the_slack_url(fake: Fake, verbose) -> None:  # type: ignore[no-untyped-def]
    robot = fake(wecom_handler(WECOM_KEY))
    slack = fake(slack_handler(SLACK_PATH))
    http = HttpClient()
    build_notifier(WeComReceiverSpec(name="w", key=WECOM_KEY, url=robot.url), http, "", None).notify(
        _one())
    build_notifier(SlackReceiverSpec(name="s", webhook_url=slack.url + SLACK_PATH), http, "", None).notify(
        _one())
    lines = [r.getMessage() for r in verbose.records if r.name == "httpx"]
    assert len(lines) == 2 and all("HTTP Request: POST http://127.0.0.1:" in x for x in lines)
    assert WECOM_KEY not in verbose.text and "SLACKPATHSECRET3" not in verbose.text


def test_cli_verbose_logging_is_filtered_too(verbose, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # `inferwatch -v ...` puts the filter on httpx's logger itself (before any scrape or receiver runs)
    httpx_log = logging.getLogger("httpx")
    for f in list(httpx_log.filters):
        httpx_log.removeFilter(f)
    assert main(["-v", "config", "check", str(_write(tmp_path, "server: {}"))]) == 0
    httpx_log.info('HTTP Request: %s %s "%s %d %s"', "POST",
                   f"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={WECOM_KEY}", "HTTP/1.1", 200, "OK")
    assert 'HTTP Request: POST https://qyapi.weixin.qq.com/… "HTTP/1.1 200 OK"' in verbose.text
    assert WECOM_KEY not in verbose.text


def _one():  # type: ignore[no-untyped-def]
    from alerting.test_receivers import note

    return note(alert())


def test_a_receiver_echoing_the_request_leaks_no_credential(fake: Fake, verbose, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    svc = fake(echo(400))
    names = ["wecom", "hook", "pd", "slack", "call"]
    routes = ", ".join(f"{{matchers: ['alertname=~\".+\"'], receiver: {n}, continue: true}}" for n in names)
    cfg = parse_config(f"""
alerting:
  route: {{receiver: terminal, group_wait: 0s, routes: [{routes}]}}
  default_actions: false
  receivers:
    - {{name: wecom, type: wecom, key: {WECOM_KEY}, url: '{svc.url}', max_attempts: 1}}
    - {{name: hook, type: webhook, url: '{svc.url}/hook?tok={HOOK_TOK}', bearer_token: {BEARER},
       max_attempts: 1}}
    - {{name: pd, type: pagerduty, routing_key: {PD_SECRET}, url: '{svc.url}', max_attempts: 1}}
    - {{name: slack, type: slack, webhook_url: '{svc.url}{SLACK_PATH}', max_attempts: 1}}
    - {{name: call, type: twilio, account_sid: AC1, auth_token: {TWILIO_TOKEN}, from: '+15550001',
       to: ['+15550002'], url: '{svc.url}', max_attempts: 1}}
""").alerting
    data = tmp_path / "data"
    data.mkdir()
    p = Pipeline(cfg, db=StateDB(data / "alerting.sqlite"), clock=SimulatedClock(0), actions=[],
                 rng=random.Random(0), notifiers={"terminal": RecordingNotifier("terminal")})
    p.send([alert()], now=0)
    p.tick(1)  # sending may be left to the tick
    failed = {r.receiver: r.error for r in p.records.recent() if r.status == "failed"}
    assert sorted(failed) == sorted(names) and all("HTTP 400: bad request" in e for e in failed.values())
    assert "<secret>" in failed["hook"] and "<secret>" in failed["pd"]  # the echo is kept, redacted
    seen = _everywhere(p, verbose, data)
    for secret in (WECOM_KEY, BEARER, HOOK_TOK, PD_SECRET, "SLACKPATHSECRET3", TWILIO_TOKEN):
        assert secret not in seen, secret
    import base64

    assert base64.b64encode(f"AC1:{TWILIO_TOKEN}".encode()).decode() not in seen


def test_action_urls_with_credentials_are_never_shown_whole(fake: Fake, verbose, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ok = fake(lambda r: (200, {}, b"{}"))
    bad = fake(echo(500))
    host_ok, host_bad = ok.url.removeprefix("http://"), bad.url.removeprefix("http://")
    cfg = parse_config(f"""
alerting:
  route: {{receiver: terminal, group_wait: 0s}}
  default_actions: false
  actions:
    - {{name: scale, type: http, matchers: ['alertname="HighLatency"'],
       url: 'http://admin:{ACTION_PASS}@{host_ok}/scale?tok={ACTION_TOK}'}}
    - {{name: degrade, type: degrade, matchers: ['alertname="HighLatency"'], bearer_token: {ACTION_BEARER},
       url: 'http://admin:{ACTION_PASS}@{host_bad}/admin/degrade?tok={ACTION_TOK}'}}
""").alerting
    data = tmp_path / "data"
    data.mkdir()
    rec = RecordingNotifier("terminal")
    p = Pipeline(cfg, db=StateDB(data / "alerting.sqlite"), clock=SimulatedClock(0),
                 notifiers={"terminal": rec}, rng=random.Random(0))
    p.send([alert()], now=0)
    p.tick(1)  # sending may be left to the tick
    outcomes = {r.action: r.outcome for r in p.act.records()}
    assert outcomes["scale"] == f"POST http://{host_ok}/scale -> 200"
    failed = f"failed: POST http://{host_bad}/admin/degrade: HTTP 500: bad request"
    assert outcomes["degrade"].startswith(failed)
    assert ok.requests[0].headers["authorization"].startswith("Basic ")  # the credentials were still sent
    notes = " ".join(note for n in rec.sent for note in n.notes)
    assert "action scale (fire)" in notes and "action degrade (fire)" in notes
    seen = _everywhere(p, verbose, data) + notes
    for secret in (ACTION_PASS, ACTION_TOK, ACTION_BEARER):
        assert secret not in seen, secret


def _write(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "inferwatch.yaml"
    f.write_text(text)
    return f


@pytest.mark.parametrize("receiver", [
    "{name: r, type: wecomm, key: CK-SECRET-1}",                   # unknown type
    "{name: r, key: CK-SECRET-1}",                                 # no type
    "{name: r, type: wecom, key: CK-SECRET-1, bogus: 1}",          # unknown field beside it
    "{name: r, type: pagerduty, routing_key: CK-SECRET-1}",        # wrong length
    "{name: r, type: webhook, url: 'http://u:CK-SECRET-1@h/x', max_alerts: -1}",  # other field
])
def test_config_errors_never_print_a_secret(receiver: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    text = f"alerting: {{receivers: [{receiver}]}}"
    with pytest.raises(ConfigError) as e:
        parse_config(text)
    assert "receivers[0]" in str(e.value) and "CK-SEC" not in str(e.value)
    assert main(["config", "check", str(_write(tmp_path, text))]) == 2
    err = capsys.readouterr().err
    assert "receivers[0]" in err and "CK-SEC" not in err and "Traceback" not in err


def test_secret_never_stringifies() -> None:
    s = Secret("hunter2")
    shown = [str(s), repr(s), f"{s}", "{}".format(s), "%s" % (s,), format(s, ""), str([s]), str({"k": s})]  # noqa: UP031, UP032
    assert all("hunter2" not in x for x in shown) and set(shown[:6]) == {"<secret>"}
    assert "hunter2" not in parse_config("alerting: {receivers: [{name: w, type: wecom, key: hunter2}]}"
                                         ).model_dump_json()


@pytest.mark.parametrize(("url", "shown"), [
    ("https://user:pw@example.com:8443/hook?tok=abc#frag", "https://example.com:8443/hook"),
    ("http://[::1]:9000/a?b=c", "http://[::1]:9000/a"),
    ("http://h:notaport/x", "<url>"),          # unparsable: nothing of it is shown
    ("no scheme user:pw@h", "<url>"),
])
def test_redact_url(url: str, shown: str) -> None:
    from inferwatch.settings._redact import redact_url

    assert redact_url(url) == shown


@pytest.mark.parametrize("echoed", [
    "k=a/b+c d&x",          # raw
    "k=a%2Fb%2Bc%20d&x",    # URL-quoted (path style)
    "k=a%2Fb%2Bc+d&x",      # URL-quoted (form style)
    '{"k": "a/b+c d"}',     # inside JSON
])
def test_redact_text_catches_encoded_echoes(echoed: str) -> None:
    from inferwatch.settings._redact import redact_text

    out = redact_text(echoed, ["a/b+c d"])
    assert "<secret>" in out and "b+c" not in out and "%2B" not in out
