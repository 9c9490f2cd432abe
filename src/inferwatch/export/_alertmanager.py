"""``alertmanager.yml``: inferwatch's route tree, timers, inhibitions and receivers on Alertmanager.

Receivers that Alertmanager has an integration for are written as that
integration (PagerDuty, e-mail, Slack, webhook). The others go to inferwatch's
Alertmanager receiver, ``POST /api/v1/alertmanager``, which delivers them with
inferwatch's own notifiers: the WeCom group robot (Alertmanager's
``wechat_configs`` speaks the WeCom *application* API with a corp id and
agent, not the robot webhook), Twilio calls, the terminal and the P2 digest;
DingTalk and Feishu robots and Alibaba Cloud / Tencent Cloud voice and SMS,
which Alertmanager has no integration for; and WeCom application messages,
so that they carry inferwatch's messages (``alerting.language``, byte
limits, the token refresh) rather than Alertmanager's default template.
Actions (scale-out, degrade, rollback) run in inferwatch too: for each, a
first route with the action's matchers and ``continue: true`` sends the
alerts to the ``inferwatch-actions`` receiver, so the rest of the tree routes
exactly as inferwatch's own router does.

Secrets in the inferwatch config (routing keys, passwords, the API token) are
written into the file, which is therefore created with mode 0600.
"""

from __future__ import annotations

from typing import Any

from inferwatch.alerting import Route
from inferwatch.config import Config, RouteSpec, SlackReceiverSpec
from inferwatch.export._behind import behind_alertmanager_config
from inferwatch.export._files import ExportedFile, dump_yaml
from inferwatch.export._native import is_native, native_receiver
from inferwatch.export._options import ExportOptions
from inferwatch.model import format_duration

__all__ = ["ACTIONS_RECEIVER", "TOKEN_FILE", "alertmanager_config", "export_alertmanager"]

ACTIONS_RECEIVER = "inferwatch-actions"
# Without server.api_token the server generates one into <data_dir>/api_token; the
# exported config reads it from a file of that name beside alertmanager.yml.
TOKEN_FILE = "api_token"
WEBHOOK_PATH = "/api/v1/alertmanager"


def _to_inferwatch(config: Config, opts: ExportOptions) -> dict[str, Any]:
    token = config.server.api_token
    auth = {"credentials": token.reveal()} if token is not None else {"credentials_file": TOKEN_FILE}
    # Always with resolved: inferwatch ends the alert (and undoes degrade) on it.
    return {"webhook_configs": [{"send_resolved": True, "url": opts.server_url(config) + WEBHOOK_PATH,
                                 "http_config": {"authorization": auth}}]}


def _receivers(config: Config, opts: ExportOptions) -> list[dict[str, Any]]:
    if any(r.name == ACTIONS_RECEIVER for r in config.alerting.effective_receivers()):
        raise ValueError(f"receiver name {ACTIONS_RECEIVER!r} is the export's own: rename that receiver")
    out = []
    for spec in config.alerting.effective_receivers():
        body = native_receiver(spec) if is_native(spec) else _to_inferwatch(config, opts)
        out.append({"name": spec.name, **body})
    if config.alerting.effective_actions():
        out.append({"name": ACTIONS_RECEIVER, **_to_inferwatch(config, opts)})
    return out


def _route(spec: RouteSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if spec.receiver:
        out["receiver"] = spec.receiver
    if spec.matchers:
        out["matchers"] = list(spec.matchers)
    if spec.group_by is not None:
        out["group_by"] = list(spec.group_by)
    for key in ("group_wait", "group_interval", "repeat_interval"):
        value = getattr(spec, key)
        if value is not None:
            out[key] = format_duration(value)
    if spec.continue_:
        out["continue"] = True
    for key in ("mute_time_intervals", "active_time_intervals"):
        if getattr(spec, key):
            out[key] = list(getattr(spec, key))
    if spec.routes:
        out["routes"] = [_route(child) for child in spec.routes]
    return out


def _root_route(config: Config) -> dict[str, Any]:
    root = _route(config.alerting.route)
    # The root's options as inferwatch's router resolves them (its defaults are Alertmanager's),
    # written out so that the file says them.
    opts = Route.build(config.alerting.route).options
    root["group_by"] = list(opts.group_by)
    for key in ("group_wait", "group_interval", "repeat_interval"):
        root[key] = format_duration(getattr(opts, key))
    action_routes = [
        {"receiver": ACTIONS_RECEIVER, "matchers": list(a.matchers), "group_wait": "0s", "continue": True}
        for a in config.alerting.effective_actions()
    ]
    root["routes"] = [*action_routes, *root.get("routes", [])]
    if not root["routes"]:
        del root["routes"]
    return root


def _inhibit_rules(config: Config) -> list[dict[str, Any]]:
    return [{"source_matchers": list(r.source_matchers), "target_matchers": list(r.target_matchers),
             **({"equal": list(r.equal)} if r.equal else {})} for r in config.alerting.inhibit_rules]


def _template_files(config: Config) -> list[str]:
    """The Go template definitions native receivers call (Slack's title/text from an alertmanager.yml)."""
    out: list[str] = []
    for r in config.alerting.receivers:
        if isinstance(r, SlackReceiverSpec) and is_native(r):
            out += [text for text in r.go_templates if text not in out]
    return out


def alertmanager_config(config: Config, opts: ExportOptions) -> dict[str, Any]:
    """``alertmanager.yml`` as a dict."""
    out: dict[str, Any] = {
        "global": {"resolve_timeout": format_duration(config.alerting.resolve_timeout)},
        "route": _root_route(config),
        "inhibit_rules": _inhibit_rules(config),
        "receivers": _receivers(config, opts),
    }
    if not out["inhibit_rules"]:
        del out["inhibit_rules"]
    if config.alerting.time_intervals:
        out["time_intervals"] = [t.model_dump(exclude_defaults=True) for t in config.alerting.time_intervals]
    if _template_files(config):
        out["templates"] = ["templates/*.tmpl"]  # relative to the alertmanager.yml, as Alertmanager reads it
    return out


def export_alertmanager(config: Config, opts: ExportOptions) -> list[ExportedFile]:
    """``alertmanager.yml`` and the config of the inferwatch server behind it."""
    templates = [ExportedFile(f"templates/inferwatch-{i:02d}.tmpl", text,
                              "Go template definitions the Slack receivers' title and text call")
                 for i, text in enumerate(_template_files(config))]  # in order: a later file overrides
    return [
        ExportedFile("alertmanager.yml", dump_yaml(alertmanager_config(config, opts)),
                     "Alertmanager: route tree, timers, inhibitions, receivers (native or via inferwatch)",
                     secret=True),
        ExportedFile("inferwatch-behind-alertmanager.yaml", dump_yaml(behind_alertmanager_config(config)),
                     "config of the inferwatch server that receives Alertmanager's webhook: "
                     "no scraping or rules, native receivers only logged, actions and the rest delivered",
                     secret=True),
        *templates,
    ]
