"""Messages in English or Chinese, cut to a platform's byte limit at a line boundary.

A message is a list of blocks (a group's head, then one block per alert), the
dashboard link and the lines that must never be cut (mentions). ``fit`` keeps
whole blocks while the rest still fits and says how many alerts it left out:

>>> alerts = tuple(Block((f"- alert {i}",), 1) for i in range(9))
>>> m = Message("t", (Block(("title",)), *alerts), "dashboard: http://d", WORDS["en"])
>>> print(m.fit(70))
title
- alert 0
- alert 1
… 7 more alerts
dashboard: http://d
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from zoneinfo import ZoneInfo

from inferwatch.alerting._notification import AlertGroup, Notification
from inferwatch.alerting.notify._notes_zh import translate_note, translate_summary
from inferwatch.alerting.notify._summary import group_summary, shown_alerts
from inferwatch.model import Labels
from inferwatch.rules import Alert
from inferwatch.settings import Labelled, MessageTemplate

__all__ = ["WORDS", "Block", "Message", "Words", "json_cost", "localized_title", "recovery_line", "render",
           "sender_line", "trace_lines", "utf8_cost"]

Cost = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class Words:
    """The fixed words of the built-in templates in one language."""

    firing: str
    resolved: str
    title_firing: str  # the title's [STATE:n], as Alertmanager writes it in English
    title_resolved: str
    since: str
    ended: str
    value: str
    dashboard: str
    more: str  # {n} alerts left out
    more_one: str
    truncated: str
    tiers: dict[str, str]
    title_tiers: dict[str, str]  # the tier as the title shows it (English: "P1", as Alertmanager users know)
    dimensions: dict[str, str]
    fields: dict[str, str]  # label name -> shown name
    sep: str  # between label pairs in the info line
    lasted: str = "Resolved after {d}"  # a recovery line: how long it lasted, its peak, the whole line
    units: tuple[str, str, str] = ("s", "min", "h")
    peak: str = ", peak {p}"
    recovered: str = "{lasted}{peak}: {what} ({ended})"
    sent_by: str = "sent by inferwatch replica {r}"  # an HA pair's footer: which replica sent it


WORDS: dict[str, Words] = {
    "en": Words("firing", "resolved", "FIRING", "RESOLVED", "since", "ended", "value", "dashboard",
                "… {n} more alerts", "… 1 more alert", "… (truncated)",
                {"P0": "P0 critical", "P1": "P1 major", "P2": "P2 warning"}, {}, {},
                {"dimension": "dimension", "tier": "tier", "service": "service"}, " · "),
    "zh-CN": Words("告警中", "已恢复", "告警中", "已恢复", "开始于", "恢复于", "当前值", "查看面板",
                   "… 还有 {n} 条告警", "… 还有 1 条告警", "…（已截断）",
                   {"P0": "P0 紧急", "P1": "P1 严重", "P2": "P2 警告"},
                   {"P0": "P0 紧急", "P1": "P1 严重", "P2": "P2 警告"},
                   {"infrastructure": "基础设施", "service": "服务", "quality": "模型质量",
                    "business": "业务"},
                   {"dimension": "维度", "tier": "级别", "service": "服务"}, " · ", "持续 {d}",
                   ("秒", "分钟", "小时"), "，峰值 {p}", "【{state}】{what}，{lasted}{peak}（{ended}）",
                   "由 inferwatch 副本 {r} 发送"),
}


def utf8_cost(text: str) -> int:
    """Bytes of ``text`` in UTF-8 (how WeCom and DingTalk count)."""
    return len(text.encode())


def json_cost(text: str) -> int:
    """Bytes ``text`` takes inside a JSON string written as UTF-8 (a body limit, as Feishu's)."""
    return len(json.dumps(text, ensure_ascii=False).encode()) - 2


@dataclass(frozen=True, slots=True)
class Block:
    """Lines kept or dropped together; ``alerts``: how many alerts they show."""

    lines: tuple[str, ...]
    alerts: int = 0


@dataclass(frozen=True, slots=True)
class Message:
    """A rendered notification: ``title`` (one line), blocks, the dashboard link line."""

    title: str
    blocks: tuple[Block, ...]
    link: str
    words: Words
    tier: str = ""
    status: str = "firing"
    fields: tuple[tuple[str, str], ...] = ()  # (shown name, value) of the first group
    footer: str = ""  # never cut, after the link: the HA replica that sent it

    def mapped(self, fn: Callable[[str], str]) -> Message:
        """A copy with ``fn`` applied to every line (escaping before the cut, so the cut sees it)."""
        blocks = tuple(Block(tuple(map(fn, b.lines)), b.alerts) for b in self.blocks)
        return replace(self, title=fn(self.title), blocks=blocks)

    def more(self, n: int) -> str:
        """The line standing for ``n`` alerts left out."""
        if n <= 0:
            return self.words.truncated
        return self.words.more_one if n == 1 else self.words.more.format(n=n)

    def fit(self, limit: int, *, sep: str = "\n", cost: Cost = utf8_cost, keep: Sequence[str] = ()) -> str:
        """The text in at most ``limit`` (by ``cost``); whole blocks only, the link and ``keep`` always."""
        tail = [x for x in (self.link, self.footer, *keep) if x]
        lines = [x for b in self.blocks for x in b.lines]
        if _total(lines + tail, sep, cost) <= limit:
            return sep.join(lines + tail)
        kept: list[str] = []
        shown, total = 0, sum(b.alerts for b in self.blocks)
        for b in self.blocks:
            candidate = kept + list(b.lines)
            if _total([*candidate, self.more(total - shown - b.alerts), *tail], sep, cost) > limit:
                break
            kept, shown = candidate, shown + b.alerts
        out = [*kept, self.more(total - shown), *tail]
        if not kept and lines:  # not even the first block fits: its first line, cut at a character
            room = limit - _total(out, sep, cost) - cost(sep)
            head = cut(lines[0], room, cost)
            out = [head, *out] if head else out
        text = sep.join(out)
        return text if _total(out, sep, cost) <= limit else cut(text, limit, cost)


def _total(lines: list[str], sep: str, cost: Cost) -> int:
    return sum(cost(x) for x in lines) + cost(sep) * max(len(lines) - 1, 0)


def cut(text: str, room: int, cost: Cost) -> str:
    """The longest prefix of ``text`` (whole characters) costing at most ``room``."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cost(text[:mid]) <= room:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def _when(t: float, tz: ZoneInfo) -> str:
    return datetime.fromtimestamp(t, tz).strftime("%Y-%m-%d %H:%M:%S %Z")


def localized_title(g: AlertGroup, language: str = "en") -> str:
    """``[FIRING:3] [P1 major] HighLatency service=ranker`` (``[告警中:3] [P1 严重] …`` in zh-CN)."""
    return _title(g, WORDS.get(language, WORDS["en"]))


def _title(g: AlertGroup, w: Words, template: MessageTemplate | None = None) -> str:
    n = len(g.firing()) if g.status == "firing" else len(g.resolved())
    state = w.title_firing if g.status == "firing" else w.title_resolved
    name = g.labels.get("alertname") or (g.alerts[0].name if g.alerts else "")
    common = g.common_labels()
    tier = common.get("tier", "")
    labels = " ".join(f"{w.fields.get(k, k)}={v}" for k, v in g.labels.items() if k != "alertname")
    if template is not None and template.title:
        return template.title.format_map({
            "state": w.firing if g.status == "firing" else w.resolved, "count": n, "tier": tier,
            "tier_name": w.tiers.get(tier, tier), "alertname": name, "service": common.get("service", ""),
            "dimension": w.dimensions.get(common.get("dimension", ""), common.get("dimension", "")),
            "labels": labels, "label": Labelled(common.items())})
    prefix = f"[{state}:{n}]" + (f" [{w.title_tiers.get(tier, tier)}]" if tier else "")
    return " ".join(x for x in (prefix, name, labels) if x)


def _fields(g: AlertGroup, w: Words) -> tuple[tuple[str, str], ...]:
    common = g.common_labels()
    out = []
    for key in ("dimension", "tier", "service"):
        value = common.get(key, "")
        if value:
            shown = w.tiers.get(value, value) if key == "tier" else w.dimensions.get(value, value)
            out.append((w.fields[key], shown))
    return tuple(out)


def _alert_line(a: Alert, g: AlertGroup, common: Labels, w: Words, tz: ZoneInfo, markdown: bool,
                template: MessageTemplate | None = None) -> str:
    own = " ".join(f"{k}={v}" for k, v in a.labels.items() if k not in common) or a.labels.get(
        "instance", a.name)
    resolved = a.resolved(g.now)
    if template is not None and template.alert:
        return template.alert.format_map({
            "state": w.resolved if resolved else w.firing, "labels": own,
            "value": "" if math.isnan(a.value) else f"{a.value:.4g}",
            "since": _when(a.ends_at or 0, tz) if resolved else _when(a.starts_at, tz),
            "label": Labelled(a.labels.items())})
    bullet = "- " if markdown else "  "
    if resolved:
        return bullet + recovery_line(a, own, w, tz)
    value = "" if math.isnan(a.value) else f" {w.value}={a.value:.4g}"
    return f"{bullet}{w.firing}: {own}{value} ({w.since} {_when(a.starts_at, tz)})"


def recovery_line(a: Alert, what: str, w: Words, tz: ZoneInfo) -> str:
    """What recovered, after how long, at what peak: ``【已恢复】x，持续 12 分钟，峰值 0.93（恢复于 …）``."""
    lasted = w.lasted.format(d=_duration(max((a.ends_at or a.starts_at) - a.starts_at, 0.0), w))
    peak = a.peak if not math.isnan(a.peak) else a.value
    ended = f"{w.ended} {_when(a.ends_at or 0, tz)}"
    tail = "" if math.isnan(peak) else w.peak.format(p=f"{peak:.4g}")
    return w.recovered.format(state=w.resolved, what=what, lasted=lasted, peak=tail, ended=ended)


def _duration(seconds: float, w: Words) -> str:
    """``12 min`` / ``12 分钟``; hours with minutes past two hours; seconds under a minute."""
    sec, minute, hour = w.units
    if seconds < 60:
        return f"{int(seconds)} {sec}"
    minutes = int(seconds // 60)
    if minutes < 120:
        return f"{minutes} {minute}"
    h, m = divmod(minutes, 60)
    return f"{h} {hour}" + (f" {m} {minute}" if m else "")


TRACE_WORDS = {"en": ("example traces", "slowest trace"), "zh-CN": ("慢请求示例追踪", "最慢的追踪")}
"""The two trace lines' words per language (a latency alert's exemplars: ``TraceLinks``)."""
SCORE_WORDS = {"en": ("version change", "lowest-scored generations"), "zh-CN": ("版本变更", "得分最低的生成")}
"""A score alert's two lines' words (``version_change``, ``example_generations``: ``TraceLinks``)."""


def trace_lines(a: Alert, language: str = "en", markdown: bool = False) -> list[str]:
    """A latency alert's example slow traces and the link to the slowest, a score alert's version change
    and lowest-scored generations (none without them)."""
    examples, slowest = TRACE_WORDS.get(language, TRACE_WORDS["en"])
    traces, url = a.annotations.get("example_traces", ""), a.annotations.get("trace_url", "")
    out = [f"    {word}: {a.annotations[key]}" for word, key in zip(
        SCORE_WORDS.get(language, SCORE_WORDS["en"]), ("version_change", "example_generations"), strict=True)
        if a.annotations.get(key)]
    out += [f"    {examples}: {traces}"] if traces else []
    if url:
        out.append(f"    {slowest}: [{url}]({url})" if markdown else f"    {slowest}: {url}")
    return out


def _alert_block(a: Alert, g: AlertGroup, common: Labels, w: Words, tz: ZoneInfo, markdown: bool,
                 language: str,
                 template: MessageTemplate | None = None) -> Block:
    traces = [] if a.resolved(g.now) else trace_lines(a, language, markdown)
    return Block((_alert_line(a, g, common, w, tz, markdown, template), *traces), 1)


def _group_blocks(g: AlertGroup, w: Words, tz: ZoneInfo, markdown: bool, header: bool = True,
                  language: str = "en", template: MessageTemplate | None = None) -> list[Block]:
    title = _title(g, w, template)
    common = g.common_labels()  # once: per alert it would cost O(alerts²) in a storm
    head = [f"**{title}**" if markdown else title] if header else []
    info = w.sep.join(f"{k}: {v}" for k, v in _fields(g, w))
    if info and header:
        head.append(info)
    summary = translate_summary(group_summary(g), language)
    if summary:
        head.append(f"> {summary}" if markdown else summary)
    return [Block(tuple(head)),
            *(_alert_block(a, g, common, w, tz, markdown, language, template) for a in shown_alerts(g))]


def render(n: Notification, *, language: str = "en", timezone: str = "UTC", external_url: str = "",
           markdown: bool = False, header: bool = True, template: MessageTemplate | None = None) -> Message:
    """``n`` in ``language`` with times in ``timezone``; the digest's text is its notes.

    ``header=False`` leaves the first group's title and fields out of the lines (a card shows them);
    ``template`` is the receiver's own title and per-alert line.
    """
    w = WORDS.get(language, WORDS["en"])
    tz = ZoneInfo(timezone)
    blocks: list[Block] = []
    for i, g in enumerate(n.groups if n.kind != "digest" else ()):
        blocks += _group_blocks(g, w, tz, markdown, header or i > 0, language, template)
    notes = n.notes[1:] if n.kind == "digest" and not header else n.notes  # a card shows the heading
    blocks += [Block((translate_note(note, language),)) for note in notes]
    first = n.groups[0] if n.groups and n.kind != "digest" else None
    title = _title(first, w, template) if first is not None else (n.notes[0] if n.notes else "inferwatch")
    if external_url:
        link = f"[{w.dashboard}]({external_url})" if markdown else f"{w.dashboard}: {external_url}"
    else:
        link = ""
    tier = first.common_labels().get("tier", "") if first is not None else ""
    status = first.status if first is not None else "firing"
    fields = _fields(first, w) if first is not None else ()
    return Message(title, tuple(blocks), link, w, tier, status, fields, sender_line(n, language))


def sender_line(n: Notification, language: str = "en") -> str:
    """The footer naming the HA replica that sent ``n`` (empty without a pair).

    >>> from inferwatch.alerting import Notification
    >>> n = Notification("ops", (), sender="b")
    >>> sender_line(n), sender_line(n, "zh-CN")
    ('sent by inferwatch replica b', '由 inferwatch 副本 b 发送')
    """
    return WORDS.get(language, WORDS["en"]).sent_by.format(r=n.sender) if n.sender else ""
