"""WeCom application messages against the fake API: token cache and refresh, shape, limit, errors."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from alerting.conftest import alert
from alerting.fakes import FakeService, Handler
from alerting.fakes_cn import FakeWeComApp
from alerting.test_robots_cn import many, note
from inferwatch._exceptions import ConfigError, NotifyError
from inferwatch.alerting import HttpClient
from inferwatch.alerting.notify._wecom_app import WECOM_APP_MAX_BYTES, WeComAppNotifier
from inferwatch.config import WeComAppReceiverSpec, parse_config
from inferwatch.model import SimulatedClock

Fake = Callable[[Handler], FakeService]
CORP, SECRET, AGENT = "ww0123456789abcdef", "APP-SECRET-0123456789abcdefghij", 1000002


def app(svc: FakeService, clock: SimulatedClock, secret: str = SECRET, **kw: object) -> WeComAppNotifier:
    kw.setdefault("to_user", ("zhangsan", "lisi"))
    spec = WeComAppReceiverSpec(name="ops", corp_id=CORP, agent_id=AGENT, secret=secret, url=svc.url,  # type: ignore[arg-type]
                                **kw)
    return WeComAppNotifier(spec, HttpClient(), "http://dash", clock=clock)


def setup(fake: Fake, **kw: object) -> tuple[FakeWeComApp, FakeService, SimulatedClock]:
    clock = SimulatedClock(1000.0)
    api = FakeWeComApp(CORP, SECRET, AGENT, {"zhangsan", "lisi", "wangwu"}, clock.now, **kw)  # type: ignore[arg-type]
    return api, fake(api), clock


def test_token_is_cached_until_expiry(fake: Fake) -> None:
    api, svc, clock = setup(fake)
    n = app(svc, clock)
    for _ in range(3):
        n.notify(note(alert()))
    assert api.gettoken_calls == 1 and len(api.delivered) == 3
    clock.advance(7200 - 299)  # within the last 5 minutes of the token: a new one first
    n.notify(note(alert()))
    assert api.gettoken_calls == 2 and len(api.delivered) == 4


@pytest.mark.parametrize("how", ["expired", "revoked"])
def test_stale_token_is_refreshed_and_the_send_repeated(fake: Fake, how: str) -> None:
    # rule: 42001 (expired) and 40014 (invalid) mean a new token, not a failed notification
    api, svc, clock = setup(fake)
    n = app(svc, clock)
    n.notify(note(alert()))
    if how == "expired":
        api.expire_all()
    else:
        api.tokens.clear()
    n.notify(note(alert()))
    assert api.gettoken_calls == 2 and len(api.delivered) == 2
    codes = [r.path for r in svc.requests]
    assert codes == ["/cgi-bin/gettoken", "/cgi-bin/message/send", "/cgi-bin/message/send",
                     "/cgi-bin/gettoken", "/cgi-bin/message/send"]


def test_body_addresses_users_parties_and_tags(fake: Fake) -> None:
    api, svc, clock = setup(fake)
    app(svc, clock, to_user=("zhangsan", "nobody"), to_party=("2",), to_tag=("7",)).notify(note(alert()))
    body = svc.requests[-1].json()
    assert (body["touser"], body["toparty"], body["totag"]) == ("zhangsan|nobody", "2", "7")
    assert body["msgtype"] == "markdown" and body["agentid"] == AGENT
    assert api.delivered[0][0] == ["zhangsan"]


def test_an_alertmanager_message_template_is_sent_instead(fake: Fake) -> None:
    # rule: wechat_configs.message from an alertmanager.yml, rendered on Alertmanager's data
    api, svc, clock = setup(fake)
    app(svc, clock, message="{{ .CommonLabels.alertname }} ({{ len .Alerts.Firing }} firing)").notify(
        note(alert()))
    assert api.delivered[0][1] == "HighLatency (1 firing)"


def test_markdown_cut_to_2048_bytes_of_chinese(fake: Fake) -> None:
    api, svc, clock = setup(fake)
    spec_lang = {"language": "zh-CN"}
    app(svc, clock, **spec_lang).notify(many(100))
    content = api.delivered[0][1]
    assert WECOM_APP_MAX_BYTES - 120 < len(content.encode()) <= WECOM_APP_MAX_BYTES
    assert content.splitlines()[-2].startswith("… 还有 ") and content.endswith("[查看面板](http://dash)")


@pytest.mark.parametrize(("secret", "corp", "code", "retryable"), [
    ("wrong-secret-value-000", CORP, 40001, False), (SECRET, "ww-wrong", 40013, False)])
def test_gettoken_errors_are_final_and_secret_free(fake: Fake, secret: str, corp: str, code: int,
                                                   retryable: bool) -> None:
    _, svc, clock = setup(fake)
    spec = WeComAppReceiverSpec(name="ops", corp_id=corp, agent_id=AGENT, secret=secret, url=svc.url,  # type: ignore[arg-type]
                                to_user=("zhangsan",))
    with pytest.raises(NotifyError) as e:
        WeComAppNotifier(spec, HttpClient(), clock=clock).notify(note(alert()))
    assert str(code) in str(e.value) and e.value.retryable is retryable and secret not in str(e.value)


def test_rate_limit_retried_and_no_recipient_final(fake: Fake) -> None:
    _, svc, clock = setup(fake, per_minute=1)
    n = app(svc, clock)
    n.notify(note(alert()))
    with pytest.raises(NotifyError) as e:
        n.notify(note(alert()))
    assert e.value.retryable and "45009" in str(e.value)
    clock.advance(61)
    with pytest.raises(NotifyError) as e:
        app(svc, clock, to_user=("nobody",)).notify(note(alert()))
    assert not e.value.retryable and "81013" in str(e.value)


def test_no_token_or_secret_in_logs(fake: Fake, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    api, svc, clock = setup(fake)
    n = app(svc, clock, to_user=("zhangsan", "nobody"))
    n.notify(note(alert()))
    api.expire_all()
    n.notify(note(alert()))
    assert "nobody" in caplog.text  # the missed recipient is named
    assert SECRET not in caplog.text and not any(t in caplog.text for t in api.tokens)


def test_config_needs_a_recipient() -> None:
    with pytest.raises(ConfigError, match="needs at least one of to_user, to_party, to_tag"):
        parse_config("alerting: {receivers: [{name: a, type: wecom_app, corp_id: ww1, agent_id: 1, "
                     "secret: s}]}")
