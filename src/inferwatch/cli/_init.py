"""``inferwatch init``: write a commented ``inferwatch.yaml`` that scrapes one app and routes P0/P1/P2."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from pathlib import Path
from typing import Any

from inferwatch.cli._init_text import EXTERNAL_URL, FIELD_HELP, LANGUAGES, P1_ROUTE, QUESTIONS, TEMPLATES

__all__ = ["APP_FIELDS", "RECEIVER_KEYS", "add_parser", "default_language", "default_timezone", "render"]

# receiver type -> the field its one credential goes in (terminal needs none)
RECEIVER_KEYS: dict[str, str | None] = {
    "terminal": None, "wecom": "key", "pagerduty": "routing_key", "slack": "webhook_url",
    "dingtalk": "url", "feishu": "url", "webhook": "url",
}
# receivers with several fields: (flag, field) in the order asked; --key is the secret one; all but
# --rounds are needed. Voice calls page P0 only (a P1 at 3 a.m. is a message, not a call).
APP_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "wecom_app": (("account", "corp_id"), ("app_id", "agent_id"), ("key", "secret"), ("to", "to_user")),
    "aliyun_voice": (("account", "access_key_id"), ("key", "access_key_secret"), ("template", "tts_code"),
                     ("to", "to"), ("rounds", "rounds")),
    "aliyun_sms": (("account", "access_key_id"), ("key", "access_key_secret"), ("sign_name", "sign_name"),
                   ("template", "template_code"), ("to", "to")),
    "tencent_voice": (("account", "secret_id"), ("key", "secret_key"), ("app_id", "voice_sdk_app_id"),
                      ("template", "template_id"), ("to", "to"), ("rounds", "rounds")),
    "tencent_sms": (("account", "secret_id"), ("key", "secret_key"), ("app_id", "sms_sdk_app_id"),
                    ("sign_name", "sign_name"), ("template", "template_id"), ("to", "to")),
}
_INTS, _LISTS = {"agent_id", "rounds"}, {"to", "to_user"}
_FLAGS = ("account", "app_id", "template", "sign_name", "to", "rounds")
DEFAULT_URL = "http://127.0.0.1:8000/metrics"

def add_parser(sub: Any) -> None:
    """Register ``init``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "init", help="write a starter inferwatch.yaml for your app",
        description="Write a commented inferwatch.yaml that scrapes your app's /metrics with the "
        "default rule pack and routes P0 and P1 to one receiver, P2 to a daily digest. With no "
        "flags on a terminal it asks; otherwise the flags (or their defaults) are used. The file "
        "passes `inferwatch config check`; `inferwatch serve` in the same directory finds it.")
    p.add_argument("--url", help=f"your app's metrics URL (default {DEFAULT_URL})")
    p.add_argument("--job", help="the job label for it (default: app)")
    p.add_argument("--receiver", choices=sorted({*RECEIVER_KEYS, *APP_FIELDS}),
                   help="where P0/P1 go (default terminal: printed, no credentials needed); a voice "
                   "receiver calls for P0 only")
    p.add_argument("--key", help="the receiver's credential: wecom key, pagerduty routing_key, "
                   "slack webhook_url, dingtalk/feishu/webhook url, wecom_app secret, aliyun "
                   "access_key_secret, tencent secret_key")
    p.add_argument("--account", metavar="ID",
                   help="wecom_app corp_id, aliyun access_key_id, tencent secret_id")
    p.add_argument("--app-id", metavar="ID", help="wecom_app agent_id, tencent voice/sms SdkAppId")
    p.add_argument("--template", metavar="CODE", help="aliyun tts_code/template_code, tencent template_id")
    p.add_argument("--sign-name", metavar="NAME",
                   help="aliyun_sms/tencent_sms: the approved signature (签名)")
    p.add_argument("--to", metavar="A,B",
                   help="wecom_app: user ids; voice/sms: mobile numbers (comma-separated)")
    p.add_argument("--rounds", metavar="N", help="voice: calls per number while unanswered (1-5); each "
                   "call's answer is checked (confirm: true), an unanswered P0 escalates at once")
    p.add_argument("--secret", help="dingtalk/feishu: the robot's signing secret (加签); never printed")
    p.add_argument("--at-mobiles", metavar="N1,N2", help="dingtalk: mobile numbers to @ (comma-separated)")
    p.add_argument("--at-all", action="store_true", help="dingtalk: @everyone in the group")
    p.add_argument("--external-url", metavar="URL",
                   help="the dashboard's URL as people open it; acknowledgement links in messages need it")
    p.add_argument("--language", choices=LANGUAGES, help="language of the messages, the questions and the "
                   "file's comments (default: from the system locale; zh-CN for a zh_* locale, else en)")
    p.add_argument("--timezone", metavar="ZONE", help="IANA time zone of times in messages and of the digest "
                   "(default: the system's zone, e.g. Asia/Shanghai)")
    p.add_argument("--listen", help="the server's host:port (default 127.0.0.1:9464)")
    p.add_argument("--output", "-o", default="inferwatch.yaml", metavar="FILE",
                   help="where to write (default ./inferwatch.yaml)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p.set_defaults(func=_init)


def _init(args: argparse.Namespace) -> int:
    from inferwatch._exceptions import InputError

    out = Path(args.output)
    if out.exists() and not args.force:
        raise InputError(f"{out}: already exists (--force overwrites it)")
    flags = (args.url, args.job, args.receiver, args.key, args.listen, args.language, args.timezone,
             args.secret, args.at_mobiles, args.external_url, *(getattr(args, f) for f in _FLAGS))
    if all(f is None for f in flags) and not args.at_all and sys.stdin.isatty():
        _ask(args)
    language = args.language or default_language()
    text = render(url=args.url or DEFAULT_URL, job=args.job or "app", receiver=args.receiver or "terminal",
                  key=args.key, listen=args.listen or "127.0.0.1:9464", language=language,
                  timezone=args.timezone or default_timezone(), secret=args.secret,
                  at_mobiles=_mobiles(args.at_mobiles), at_all=args.at_all, external_url=args.external_url,
                  fields={f: getattr(args, f) for f in _FLAGS if getattr(args, f) is not None})
    _validate(text, out)
    out.write_text(text, encoding="utf-8")
    if args.secret or args.key:
        out.chmod(0o600)  # credentials: readable by their owner only
    print(_written(out, args.url or DEFAULT_URL, args.receiver or "terminal", language, args.rounds))
    return 0


def _written(out: Path, where: str, to: str, language: str, rounds: str | None) -> str:
    """The one line saying what was written (and, for Tencent's confirmed calls, where its callback goes)."""
    zh = language == "zh-CN"
    tiers = f"P0 -> {to}, P1 -> terminal" if to.endswith("_voice") else f"P0/P1 -> {to}"
    line = (f"已写入 {out}: 抓取 {where}, {tiers}, P2 -> 每日汇总; 下一步: inferwatch serve" if zh else
            f"wrote {out}: scrapes {where}, {tiers}, P2 -> daily digest; next: inferwatch serve")
    if to == "tencent_voice" and rounds:
        line += ("\n在腾讯云语音消息控制台把呼叫状态回调地址设为 " if zh
                 else "\nset the status callback URL in Tencent's VMS console to ")
        line += "<external_url>/api/v1/alerts/voice/tencent"
    return line


def default_language(env: dict[str, str] | None = None) -> str:
    """zh-CN when the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``) is Chinese, else en."""
    env = dict(os.environ) if env is None else env
    locale = next((env[k] for k in ("LC_ALL", "LC_MESSAGES", "LANG") if env.get(k)), "")
    return "zh-CN" if locale.lower().startswith("zh") else "en"


def default_timezone(env: dict[str, str] | None = None, localtime: Path = Path("/etc/localtime")) -> str:
    """The system's IANA zone: ``$TZ``, else the zone ``/etc/localtime`` links to, else UTC."""
    env = dict(os.environ) if env is None else env
    tz = env.get("TZ", "").lstrip(":")
    if tz and "/" in tz and _known_zone(tz):
        return tz
    try:
        target = str(localtime.resolve())
    except OSError:
        return "UTC"
    _, sep, name = target.partition("zoneinfo/")
    return name if sep and _known_zone(name) else "UTC"


def _known_zone(name: str) -> bool:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _ask(args: argparse.Namespace) -> None:
    """Prompt for what the flags did not say (only on a terminal); credentials are read without echo."""
    guess = default_language()  # the first question is already in the system's language
    lang = _answer(QUESTIONS[guess]["language"].format(default=guess)) or guess
    args.language = lang if lang in LANGUAGES else guess
    q = QUESTIONS[args.language]
    args.timezone = _answer(q["timezone"].format(default=default_timezone())) or None
    args.url = _answer(q["url"].format(default=DEFAULT_URL)) or None
    kinds = "/".join(sorted({*RECEIVER_KEYS, *APP_FIELDS}))
    args.receiver = _answer(q["receiver"].format(kinds=kinds)) or None
    field = RECEIVER_KEYS.get(args.receiver or "terminal")
    if args.receiver in APP_FIELDS:
        _ask_fields(args, args.receiver, args.language)
    elif field:
        args.key = _secret(q["key"].format(receiver=args.receiver, field=field)) or None
    if args.receiver in ("dingtalk", "feishu"):
        args.secret = _secret(q["secret"].format(receiver=args.receiver)) or None
    if args.receiver == "dingtalk":
        args.at_mobiles = _answer(q["at_mobiles"]) or None
        args.at_all = _answer(q["at_all"]).lower() in ("y", "yes", "是")
    args.external_url = _answer(q["external_url"]) or None


def _ask_fields(args: argparse.Namespace, receiver: str, language: str) -> None:
    """The fields of a WeCom application or a cloud voice/SMS receiver, the secret one without echo."""
    for flag, field in APP_FIELDS[receiver]:
        prompt = QUESTIONS[language]["field"].format(receiver=receiver, field=field,
                                                     help=FIELD_HELP[language][field])
        setattr(args, flag, (_secret(prompt) if flag == "key" else _answer(prompt)) or None)


def _answer(prompt: str) -> str:
    try:
        return input(prompt).strip()
    except EOFError:  # answers piped in ran out: the rest take their defaults
        print()
        return ""


def _secret(prompt: str) -> str:
    """A credential typed without echo on a terminal (piped answers are read as lines)."""
    if sys.stdin.isatty() and hasattr(sys.stdin, "fileno"):
        try:
            sys.stdin.fileno()
        except (OSError, ValueError):  # a test's stand-in terminal: read it as a line
            return _answer(prompt)
        return getpass.getpass(prompt).strip()
    return _answer(prompt)


def _mobiles(text: str | None) -> tuple[str, ...]:
    return tuple(m.strip() for m in (text or "").split(",") if m.strip())


def render(*, url: str, job: str, receiver: str, key: str | None, listen: str, language: str = "en",
           timezone: str = "UTC", secret: str | None = None, at_mobiles: tuple[str, ...] = (),
           at_all: bool = False, external_url: str | None = None,
           fields: dict[str, str] | None = None) -> str:
    """The config text in ``language``; ``key`` goes into the receiver type's credential field,
    ``fields`` (flag -> value: account, app_id, template, sign_name, to, rounds) into its others."""
    from inferwatch._exceptions import InputError

    kinds = sorted({*RECEIVER_KEYS, *APP_FIELDS})
    if receiver not in kinds:
        raise InputError(f"--receiver: unknown type {receiver!r} (one of {', '.join(kinds)})")
    if language not in TEMPLATES:
        raise InputError(f"--language: unknown language {language!r} (one of {', '.join(LANGUAGES)})")
    if not _known_zone(timezone):
        raise InputError(f"--timezone: unknown time zone {timezone!r} (an IANA name, e.g. Asia/Shanghai)")
    if secret and receiver not in ("dingtalk", "feishu"):
        raise InputError(f"--secret: only the dingtalk and feishu robots sign (not {receiver})")
    if (at_mobiles or at_all) and receiver != "dingtalk":
        raise InputError(f"--at-mobiles/--at-all: only for the dingtalk receiver (not {receiver})")
    spec = f"{{name: oncall, type: {receiver}"
    if receiver in APP_FIELDS:
        spec += _app_fields(receiver, {**(fields or {}), **({"key": key} if key else {})})
    else:
        spec += _robot_fields(receiver, key, fields or {})
    spec += f", secret: {_q(secret)}" if secret else ""
    spec += f", at_mobiles: [{', '.join(_q(m) for m in at_mobiles)}]" if at_mobiles else ""
    spec += ", at_all: true" if at_all else ""
    with_url, without = EXTERNAL_URL[language]
    ext = with_url.format(url=_q(external_url)) if external_url else without
    voice = receiver.endswith("_voice")  # P1 is not phoned; a text message is short enough for it
    # JSON strings are YAML double-quoted scalars: any URL or key is quoted safely
    return TEMPLATES[language].format(
        listen=_q(listen), listen_raw=listen, job=_q(job), url=_q(url), receiver=spec + "}",
        language=_q(language), timezone=_q(timezone), external_url=ext,
        p1=P1_ROUTE[language][voice], digest_to="terminal" if _phone(receiver) else "oncall")


def _phone(receiver: str) -> bool:
    """A call or a text message: no P1, no digest (they go to the terminal until a chat receiver is added)."""
    return receiver.endswith(("_voice", "_sms"))


def _robot_fields(receiver: str, key: str | None, fields: dict[str, str]) -> str:
    from inferwatch._exceptions import InputError

    field = RECEIVER_KEYS[receiver]
    if field is None and key:
        raise InputError(f"--key: the {receiver} receiver takes no credential")
    if field is not None and not key:
        raise InputError(f"--key: the {receiver} receiver needs its {field}")
    if fields:
        flag = next(iter(fields))
        raise InputError(f"--{flag.replace('_', '-')}: not a field of the {receiver} receiver "
                         f"(only of {', '.join(sorted(APP_FIELDS))})")
    return f", {field}: {_q(key or '')}" if field else ""


def _app_fields(receiver: str, given: dict[str, str]) -> str:
    """`, field: value` for each of the receiver's fields, checked; voice ``rounds`` turns ``confirm`` on."""
    from inferwatch._exceptions import InputError

    names = dict(APP_FIELDS[receiver])
    extra = sorted(set(given) - set(names))
    if extra:
        raise InputError(f"--{extra[0].replace('_', '-')}: not a field of the {receiver} receiver "
                         f"(it takes {', '.join('--' + f.replace('_', '-') for f in names)})")
    out = ""
    for flag, field in APP_FIELDS[receiver]:
        value = (given.get(flag) or "").strip()
        if not value:
            if flag == "rounds":
                continue
            raise InputError(f"--{flag.replace('_', '-')}: the {receiver} receiver needs its {field}")
        if field in _INTS and not value.isdigit():
            raise InputError(f"--{flag.replace('_', '-')}: {field} is a whole number (got {value!r})")
        if field in _LISTS:
            items = [_e164(x) if receiver.startswith("tencent") else x for x in _mobiles(value)]
            out += f", {field}: [{', '.join(_q(x) for x in items)}]"
        else:
            out += f", {field}: {value if field in _INTS else _q(value)}"
        out += ", confirm: true" if field == "rounds" else ""
    return out


def _e164(number: str) -> str:
    """A mainland mobile number as Tencent wants it (+86...); any other form is left to the config check."""
    return "+86" + number if len(number) == 11 and number.isdigit() and number.startswith("1") else number


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _validate(text: str, out: Path) -> None:
    """Every check `config check` makes, before anything is written."""
    from inferwatch.config import parse_config
    from inferwatch.server import preflight

    preflight(parse_config(text, source=str(out)))
