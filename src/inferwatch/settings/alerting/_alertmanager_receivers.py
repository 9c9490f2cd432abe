"""The receivers of an alertmanager.yml as inferwatch receivers, one channel each.

Read: ``webhook_configs``, ``email_configs``, ``pagerduty_configs`` (Events API v2),
``slack_configs``, ``wechat_configs`` (a WeCom application: inferwatch's ``wecom_app``) and
``telegram_configs``, each with Alertmanager's own ``send_resolved`` default and the
``global`` defaults it takes (``smtp_*``, ``slack_api_url``, ``wechat_api_*``...). A
receiver without integrations sends nothing (``discard``). Refused with file, line and
key: another integration (``opsgenie_configs``...), a receiver with more than one
integration, and a message field written as a Go template other than Alertmanager's
default (``{{ template "slack.default.text" . }}``: inferwatch's own message is sent), except
Slack's ``title`` and ``text``, Telegram's and WeChat's ``message``: those are rendered in the
subset of ``config._gotemplate``, calling the definitions of the file's ``templates:`` (outside
the subset, or a template not defined there: refused, naming the construct).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from inferwatch.settings._gotemplate import GoTemplate, GoTemplateError
from inferwatch.settings._yaml_lines import At

__all__ = ["CHANNEL_KEYS", "ReceiverCheck", "translate_receiver"]

ReceiverCheck = Callable[[dict[str, Any]], object]
"""Validates one receiver spec (raises pydantic's ``ValidationError``): the union of every receiver type."""
_DEFAULT_TEMPLATE = re.compile(r'^\s*\{\{\s*template\s+"([a-z_]+\.default\.[A-Za-z_]+)"\s+\.\s*\}\}\s*$')
_HTTP_HARMLESS = {"follow_redirects", "enable_http2"}


def _url_only(raw: dict[str, Any], at: At, key: str) -> str:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise at.error("must be a URL", key)
    return value or ""


def _bearer(raw: dict[str, Any], at: At) -> str | None:
    http = at.key("http_config").mapping(raw.get("http_config"))
    token = None
    for key, value in http.items():
        if key == "bearer_token":
            token = value
        elif key == "authorization" and isinstance(value, dict) and set(value) <= {"type", "credentials"} \
                and value.get("type", "Bearer") == "Bearer":
            token = value.get("credentials")
        elif key not in _HTTP_HARMLESS:
            raise at.key("http_config").error("is not supported by inferwatch (only a bearer token)", key)
    return str(token) if token else None


def _webhook(raw: dict[str, Any], at: At, glob: dict[str, Any]) -> dict[str, Any]:
    out = {"type": "webhook", "url": _url_only(raw, at, "url"), "max_alerts": raw.get("max_alerts", 0)}
    token = _bearer(raw, at)
    return out | ({"bearer_token": token} if token else {})


def _email(raw: dict[str, Any], at: At, glob: dict[str, Any]) -> dict[str, Any]:
    to = raw.get("to", "")
    out: dict[str, Any] = {
        "type": "email", "to": tuple(t.strip() for t in str(to).split(",") if t.strip()),
        "smarthost": raw.get("smarthost", glob.get("smtp_smarthost", "")),
        "from": raw.get("from", glob.get("smtp_from", "inferwatch@localhost")),
        "username": raw.get("auth_username", glob.get("smtp_auth_username", "")),
        "starttls": raw.get("require_tls", glob.get("smtp_require_tls", True)),
    }
    password = raw.get("auth_password", glob.get("smtp_auth_password"))
    return out | ({"password": password} if password else {})


def _pagerduty(raw: dict[str, Any], at: At, glob: dict[str, Any]) -> dict[str, Any]:
    if "service_key" in raw:
        raise at.error("is the Events API v1 key: inferwatch sends Events API v2 (routing_key)",
                       "service_key")
    out: dict[str, Any] = {"type": "pagerduty", "routing_key": raw.get("routing_key")}
    url = raw.get("url", glob.get("pagerduty_url"))
    if url:  # Alertmanager's is the whole enqueue URL; inferwatch's the base
        out["url"] = str(url).split("/v2/enqueue")[0].rstrip("/")
    return out


def _slack(raw: dict[str, Any], at: At, glob: dict[str, Any]) -> dict[str, Any]:
    return {"type": "slack", "webhook_url": raw.get("api_url", glob.get("slack_api_url"))}


def _defined(library: tuple[str, ...]) -> set[str]:
    return set(re.findall(r'\{\{-?\s*(?:define|block)\s+"([^"]+)"', "\n".join(library)))


def _go_fields(raw: dict[str, Any], at: At, fields: dict[str, str], library: tuple[str, ...]
               ) -> dict[str, Any]:
    """The Go-template message fields, rendered by inferwatch; Alertmanager's default (not redefined in the
    templates: files) leaves inferwatch's own message."""
    out: dict[str, Any] = {}
    for key, field in fields.items():
        value = raw.get(key)
        if not isinstance(value, str):
            continue
        default = _DEFAULT_TEMPLATE.match(value)
        if default and default.group(1) not in _defined(library):
            continue
        try:
            GoTemplate(value, library)
        except GoTemplateError as exc:
            raise at.error(f"Go template: {exc}", key) from None
        out[field] = value
    return out | ({"go_templates": library} if out and library else {})


def _wechat(raw: dict[str, Any], at: At, glob: dict[str, Any]) -> dict[str, Any]:
    def ids(key: str) -> tuple[str, ...]:
        return tuple(x for x in str(raw.get(key, "")).split("|") if x)
    agent = str(raw.get("agent_id", "0"))
    if not agent.isdigit():
        raise at.error(f"must be the application's numeric AgentId (got {agent!r})", "agent_id")
    url = str(raw.get("api_url", glob.get("wechat_api_url", "https://qyapi.weixin.qq.com/cgi-bin/")))
    out: dict[str, Any] = {
        "type": "wecom_app", "corp_id": raw.get("corp_id", glob.get("wechat_api_corp_id", "")),
        "agent_id": int(agent), "to_user": ids("to_user") or ("@all",), "to_party": ids("to_party"),
        "to_tag": ids("to_tag"), "url": url.split("/cgi-bin")[0].rstrip("/"),
    }
    secret = raw.get("api_secret", glob.get("wechat_api_secret"))
    return out | ({"secret": secret} if secret else {})


def _telegram(raw: dict[str, Any], at: At, glob: dict[str, Any]) -> dict[str, Any]:
    out = {"type": "telegram", "bot_token": raw.get("bot_token"), "chat_id": str(raw.get("chat_id", "")),
           "disable_notification": raw.get("disable_notifications", False)}
    url = raw.get("api_url", glob.get("telegram_api_url"))
    return out | ({"url": str(url).rstrip("/")} if url else {})


# Each integration: its translation, Alertmanager's send_resolved default, the keys it reads, and its
# message fields (accepted only as Alertmanager's default template: inferwatch's own message is sent).
_CHANNELS: dict[str, tuple[Any, bool, set[str], set[str]]] = {
    "webhook_configs": (_webhook, True, {"url", "max_alerts", "http_config"}, set()),
    "email_configs": (_email, False, {"to", "from", "smarthost", "auth_username", "auth_password",
                                      "require_tls"}, {"html", "text", "subject"}),
    "pagerduty_configs": (_pagerduty, True, {"routing_key", "url", "service_key", "severity"},
                          {"description", "client", "client_url", "class", "component", "group", "details"}),
    "slack_configs": (_slack, False, {"api_url", "channel", "username"},
                      {"title_link", "pretext", "fallback", "footer", "icon_url",
                       "icon_emoji", "color", "mrkdwn_in", "short_fields"}),
    "wechat_configs": (_wechat, False, {"api_secret", "corp_id", "agent_id", "to_user", "to_party", "to_tag",
                                        "api_url", "message_type"}, set()),
    "telegram_configs": (_telegram, True, {"bot_token", "chat_id", "api_url", "disable_notifications",
                                           "parse_mode"}, set()),
}
# the message fields inferwatch renders as Alertmanager does (alertmanager.yml key: spec field)
_RENDERED: dict[str, dict[str, str]] = {"slack_configs": {"title": "title", "text": "text"},
                                        "wechat_configs": {"message": "message"},
                                        "telegram_configs": {"message": "message"}}
CHANNEL_KEYS = tuple(_CHANNELS)
"""The integrations of an alertmanager.yml that inferwatch sends to."""
_OTHER = ("opsgenie_configs", "victorops_configs", "pushover_configs", "sns_configs", "webex_configs",
          "discord_configs", "msteams_configs")


def _integration(key: str, raw: Any, at: At, name: str, glob: dict[str, Any], library: tuple[str, ...],
                 check: ReceiverCheck | None) -> dict[str, Any]:
    build, resolved, keys, messages = _CHANNELS[key]
    rendered = _RENDERED.get(key, {})
    raw = at.mapping(raw)
    for k, value in raw.items():
        if k in rendered:
            continue
        if k in messages:
            if isinstance(value, str) and not _DEFAULT_TEMPLATE.match(value):
                raise at.error("a Go template other than Alertmanager's default is not rendered by "
                               "inferwatch (its own message is sent): remove it, or use the default", k)
        elif k not in keys and k != "send_resolved":
            raise at.error(f"is not supported by inferwatch's {key.removesuffix('_configs')} "
                           f"(read: {', '.join(sorted(keys | {'send_resolved'}))})", k)
    spec = {"name": name, "send_resolved": raw.get("send_resolved", resolved), **build(raw, at, glob),
            **_go_fields(raw, at, rendered, library)}
    try:
        if check is not None:
            check(spec)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = next((str(p) for p in reversed(err["loc"]) if isinstance(p, str) and p in spec), None)
        raise at.error(err["msg"].removeprefix("Value error, "), field) from None
    return spec


def translate_receiver(raw: Any, at: At, glob: dict[str, Any], library: tuple[str, ...] = (),
                       check: ReceiverCheck | None = None) -> dict[str, Any]:
    """One ``receivers`` entry as an inferwatch receiver spec (a dict for ``alerting.receivers``);
    ``library`` holds the texts of the file's ``templates:``; ``check`` validates it, so that an error
    names its line."""
    raw = at.mapping(raw)
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise at.error("a receiver needs a name")
    found = []
    for key, value in raw.items():
        if key == "name":
            continue
        if key in _OTHER:
            raise at.error(f"receiver {name!r}: {key} is not supported by inferwatch (it sends to "
                           f"{', '.join(CHANNEL_KEYS)}; its own wecom, dingtalk, feishu, voice and SMS "
                           "receivers are in inferwatch's config)", key)
        if key not in _CHANNELS:
            raise at.error(f"receiver {name!r}: unknown key", key)
        for i, item in enumerate(at.key(key).sequence(value)):
            found.append(_integration(key, item, at.key(key).item(i), name, glob, library, check))
    if len(found) > 1:
        raise at.error(f"receiver {name!r} has {len(found)} integrations: inferwatch sends a receiver to one "
                       "channel; split it into receivers of one each and route to them with continue: true")
    return found[0] if found else {"name": name, "type": "discard"}
