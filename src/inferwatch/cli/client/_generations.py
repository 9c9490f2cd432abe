"""``inferwatch generations worst``: the lowest-scored recent generations of a running server.

Reads ``GET /api/v1/generations/worst``; one line a generation (its time in
``alerting.timezone``, route, model, prompt version, score, generation id, trace id), the
heading in ``alerting.language``; with tracing configured the trace's URL follows.
"""

from __future__ import annotations

import argparse
from typing import Any

from inferwatch.cli._common import add_config_arg, print_json
from inferwatch.cli.client._client import add_server_args, call, since_start
from inferwatch.cli.client._words import local_time

__all__ = ["GENERATION_WORDS", "add_parser", "generation_line"]

GENERATION_WORDS: dict[str, dict[str, str]] = {
    "en": {"trace": "TRACE", "time": "TIME", "route": "ROUTE", "model": "MODEL", "prompt": "PROMPT",
           "score": "SCORE", "gid": "GENERATION",
           "none": "no generation scored {score!r} since {since} (the SDK puts the generation id on its "
                   "scores when record_score gets generation_id=)"},
    "zh-CN": {"trace": "追踪", "time": "时间", "route": "路由", "model": "模型", "prompt": "提示版本",
              "score": "分数", "gid": "生成 ID",
              "none": "自 {since} 以来没有评分为 {score!r} 的生成（record_score 带上 "
                      "generation_id= 时 SDK 会把生成 ID 附在分数上）"},
}
"""``generations worst``'s fixed words in each language of ``alerting.language``."""


def add_parser(sub: Any) -> None:
    """Register ``generations`` and its ``worst``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "generations", help="the worst-scored recent generations (a running server)",
        description="Scored generations a running server has seen (the SDK's score exemplars).")
    verbs = p.add_subparsers(dest="generations_verb", required=True, metavar="{worst}")
    w = verbs.add_parser(
        "worst", help="the lowest-scored recent generations, lowest first",
        description="Print the lowest-scored generations since --since: time, route, model, prompt "
        "version, score, generation id and trace id (the trace's URL when traced), lowest first.")
    add_config_arg(w)
    add_server_args(w)
    w.add_argument("--since", default="1h", help="how far back (default 1h)")
    w.add_argument("--score", default="judge", help="the score's name (default judge)")
    w.add_argument("--limit", type=int, default=20, help="how many (default 20, at most 1000)")
    w.add_argument("--route", default="", help="only this route")
    w.add_argument("--service", default="", help="only this service")
    w.add_argument("--model", default="", help="only this model")
    w.add_argument("--json", action="store_true", help="print the API's JSON")
    w.set_defaults(func=_worst)


def _worst(args: argparse.Namespace) -> int:
    from inferwatch.config import load_config

    alerting = load_config(args.config).alerting  # the language and zone the team reads
    since = since_start(args.since)
    params: list[tuple[str, str | int | float | bool | None]] = [
        ("score", args.score), ("since", f"{since:.3f}"), ("limit", args.limit),
        *((k, getattr(args, k)) for k in ("route", "service", "model") if getattr(args, k))]
    data = call(args, "GET", "/api/v1/generations/worst", params=params)["data"]
    if args.json:
        print_json(data)
        return 0
    words = GENERATION_WORDS.get(alerting.language, GENERATION_WORDS["en"])
    found = data["generations"]
    if not found:
        print(words["none"].format(score=args.score, since=args.since))
        return 0
    widths = {"time": 23, "route": 24, "model": 20, "prompt": 8, "score": -6, "gid": 32, "trace": 0}
    print("  ".join(_pad(words[k], n) for k, n in widths.items()).rstrip())
    for g in found:
        print(generation_line(g, alerting.timezone))
    return 0


def _pad(text: str, width: int) -> str:
    """``text`` padded to ``width`` terminal columns (a CJK character takes two; negative: right-aligned)."""
    import unicodedata

    fill = " " * max(abs(width) - sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text), 0)
    return fill + text if width < 0 else text + fill


def generation_line(g: dict[str, Any], timezone: str = "UTC") -> str:
    """One generation: its time in ``timezone``, route, model, prompt version, score, ids, trace link."""
    trace = g.get("trace_url") or g.get("trace_id") or "-"
    return (f"{local_time(g['time'], timezone):23}  {g['route'][:24]:24}  {g['model'][:20]:20}  "
            f"{(g['prompt_version'] or '-')[:8]:8}  {g['score']:6.3f}  {g['generation_id'][:32]:32}  {trace}")
