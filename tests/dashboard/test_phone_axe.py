"""Every dashboard page on a phone (390 x 844) and a desktop (1400 x 1000), in English and Chinese,
light and dark (all 8 combinations): axe-core finds no serious or critical violation, nothing
scrolls sideways, and on the alerts page the first firing P0 card shows without scrolling.

axe-core comes with the ``axe-playwright-python`` package (its ``axe.min.js``; no network at test
time). All eight modes (phone and desktop, English and Chinese, light and dark) walk every page in
one page load each: the page changes by its hash route and axe is injected once per document. The
first firing P0 (with its value in its unit) and the menu are checked on the alerts page in each;
the alerts page is saved as a screenshot in each mode, three more pages in the two modes the docs show.

In the Chinese mode (a browser in New York asking for zh-CN, the demo's ``alerting.timezone``
Asia/Shanghai) the same walk also reads every shown text outside data (code, PromQL, elements marked
``data-raw``) and fails naming any English word left, identifiers, units, acronyms and the words in
``ALLOW`` aside, on every page, a group's timeline on the on-call page, and the incident page a P0's
acknowledgement link opens; the header's server time must be the server's clock in Asia/Shanghai with
its +08:00 offset (the configured zone, not the browser's), as must the timeline's and the incident
page's times.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from tests._require import require_module

from dashboard.conftest import ARTIFACTS, ZONE, DemoServer, wait_until

pytestmark = [pytest.mark.tools, pytest.mark.slow]
TIMEOUT_MS = 30_000
PAGES = ["overview", "alerts", "silences", "oncall", "explore", "drift", "slos", "probes", "peers", "fleet",
         "replicas", "diagnose"]
SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1400, "height": 1000}}
BAD = ("serious", "critical")
BROWSER_ZONE = "America/New_York"  # the Chinese reader's browser: its zone is not the one shown
# The visible text outside data (folds opened), one string per text node: not in a script, a style, code,
# PromQL or an element marked as data (``data-raw``), and shown. English words are looked for in what is left.
TEXTS = """(sel) => {
  const out = [], skip = "script, style, pre, code, textarea, .promql, [data-raw], [aria-hidden='true']";
  const root = sel ? document.querySelector(sel) : document.body;
  if (!root) return null;
  // what a reader unfolds is read too (a card's labels and description), in the same task as the
  // reading, so no redraw on a page's timer folds it again in between
  const folded = [...root.querySelectorAll("details:not([open])")];
  folded.forEach((d) => { d.open = true; });
  const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const el = n.parentElement;
    if (!n.nodeValue.trim() || el.closest(skip) || !el.checkVisibility()) continue;
    out.push(n.nodeValue.trim());
  }
  folded.forEach((d) => { d.open = false; });
  return out;
}"""
# A word of data rather than of the interface: an acronym, a unit, or an identifier (CamelCase: an alert name)
DATA_WORD = re.compile(r"^(?:[A-Z0-9]+s?|ms|s|min|h|d|kB|MB|GB|PCIe|\w*[a-z][A-Z]\w*)$")
# Words the demo's data and the product put in the interface, each for a reason: the product's name, the
# language switch (it names the other language), the demo's service, features and receivers, the data-quality
# checks' names, the default pack's action names (``degrade``, ``rollback``, ``scale_out``), keyboard keys,
# a Kubernetes kind and a runtime's product name
ALLOW = frozenset({"inferwatch", "English", "demo", "age", "price", "phone", "digest", "wecom", "missing",
                   "unseen", "degrade", "rollback", "Enter", "deployment", "Runtime"})
CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")


def _english(texts: list[str]) -> list[str]:
    """The texts with an English word left in them, outside identifiers (``a_b``, ``a-b``, ``k="v"``,
    paths, CamelCase alert names), units, acronyms, `code` and, in Chinese text, config keys (``slos:``)."""
    bad = []
    for text in texts:
        rest = re.sub(r"`[^`]*`", " ", text)
        if CJK.search(rest):
            rest = re.sub(r"\b[a-z_]+:(?=\s|[^\x00-\x7f]|$)", " ", rest)
        words = re.findall(r"[A-Za-z0-9_][A-Za-z0-9_.:/=\"'+-]*", rest)
        if any(w.isalpha() and w.isascii() and not DATA_WORD.match(w) and w not in ALLOW
               for w in (w.rstrip(".:,") for w in words)):
            bad.append(text)
    return bad


def _context(browser: Any, size: str, lang: str, theme: str) -> Any:
    ctx = browser.new_context(viewport=SIZES[size], color_scheme=theme, is_mobile=size == "phone",
                              has_touch=size == "phone", locale="zh-CN" if lang == "zh-CN" else "en-US",
                              timezone_id=BROWSER_ZONE if lang == "zh-CN" else "UTC")
    ctx.add_init_script(f"localStorage.setItem('inferwatch.lang', '{lang}');"
                        f"localStorage.setItem('inferwatch.theme', '{theme}');")
    return ctx


@pytest.fixture(scope="module")
def axe() -> Any:
    return require_module("axe_playwright_python.sync_playwright").Axe()


def _open(p: Any, demo: DemoServer, name: str, first: bool) -> None:
    if first:
        p.goto(f"{demo.url}#/{name}")
    else:
        p.evaluate("h => { location.hash = h; }", f"#/{name}")
    p.wait_for_selector(f"body[data-ready='{name}']", timeout=TIMEOUT_MS)


def _overflow(p: Any) -> int:
    """How many pixels the page is wider than the window (0: no sideways scrolling)."""
    return int(p.evaluate("() => document.documentElement.scrollWidth - window.innerWidth"))


def _serious(axe: Any, p: Any) -> list[str]:
    # axe.min.js is injected once per document (the pages change by hash): Axe.run would parse its
    # half a megabyte again for every page
    if p.evaluate("() => typeof axe") == "undefined":
        p.evaluate(axe.axe_script)
    found = p.evaluate("() => axe.run(document, {resultTypes: ['violations']})")["violations"]
    return [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
            for v in found if v["impact"] in BAD]


def _first_p0_and_menu(p: Any, size: str) -> None:
    """The first firing P0's card header within the first screen; on a phone the pages behind one button."""
    card = p.locator("article.alert.tier-P0[data-state='firing']").first
    card.wait_for(timeout=TIMEOUT_MS)
    box = card.locator("header").bounding_box()
    assert box is not None and box["y"] + box["height"] <= SIZES[size]["height"], box
    # its value in the unit the rule's text gives it (ServiceUnavailable: a share of requests)
    assert re.search(r"\d %", card.locator("header").inner_text()), card.locator("header").inner_text()
    nav = p.locator("#nav")
    if size == "desktop":
        assert nav.is_visible() and not p.locator("#menu").is_visible()
        return
    assert not nav.is_visible()
    p.tap("#menu")
    assert nav.is_visible() and p.get_attribute("#menu", "aria-expanded") == "true"
    p.tap("#menu")
    assert not nav.is_visible()


MODES = [(size, lang, theme) for size in SIZES for lang in ("en", "zh-CN") for theme in ("light", "dark")]
# screenshots: the alerts page in every mode, these pages too in the two modes the docs show
SHOWN = {"overview", "drift", "oncall"}
DOCS = {("phone", "zh-CN", "dark"), ("desktop", "en", "light")}


@pytest.fixture(params=MODES, ids=lambda m: "-".join(m))
def mode(request: pytest.FixtureRequest, browser: Any) -> Iterator[tuple[Any, tuple[str, str, str]]]:
    ctx = _context(browser, *request.param)
    try:
        yield ctx.new_page(), request.param
    finally:
        ctx.close()


def test_every_page_passes_axe_and_fits_the_width(mode: tuple[Any, tuple[str, str, str]], demo: DemoServer,
                                                 axe: Any) -> None:
    p, (size, lang, theme) = mode
    problems: dict[str, list[str]] = {}
    for i, name in enumerate(PAGES):
        _open(p, demo, name, first=i == 0)
        if i == 0 and lang == "zh-CN":  # the header shows the server's time once, as the page boots
            _shows_shanghai_time(p, demo)
        wide = _overflow(p)
        found = _serious(axe, p) + ([f"{wide} px wider than the window"] if wide > 0 else [])
        if lang == "zh-CN":
            found += [f"English left: {text!r}" for text in sorted(set(_english(p.evaluate(TEXTS, None))))]
        if lang == "zh-CN" and name == "oncall":
            found += [f"timeline: {line}" for line in _timeline(p)]
        if found:
            problems[name] = found
        if name == "alerts":
            _first_p0_and_menu(p, size)
        if name == "alerts" or (name in SHOWN and (size, lang, theme) in DOCS):
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            p.screenshot(path=str(ARTIFACTS / f"{name}-{size}-{lang}-{theme}.png"))
    if lang == "zh-CN":
        problems["incident page"] = _incident_page(p, demo, f"incident-{size}-{lang}-{theme}")
    assert not any(problems.values()), "\n".join(f"{name}: {line}" for name, lines in problems.items()
                                                for line in lines)


def _timeline(p: Any) -> list[str]:
    """Open the first alert group's timeline: what is English in it, and its times not at +08:00 (the page
    redraws every 15 s, taking an open timeline with it: open it again, three times at most)."""
    for _ in range(3):
        p.locator("#main .show-timeline").first.click()
        try:
            p.wait_for_selector(".group-timeline li", timeout=TIMEOUT_MS)
        except Exception:  # redrawn between the click and the answer
            continue
        texts = p.evaluate(TEXTS, ".group-timeline")
        if texts:
            stamps = re.findall(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d", " ".join(texts))
            return ([f"English left: {text!r}" for text in sorted(set(_english(texts)))]
                    + [f"not at +08:00: {s}" for s in stamps if not s.endswith("+08:00")]
                    + ([] if stamps else [f"no time shown in {texts!r}"]))
    return ["the timeline did not stay open"]


def _incident_page(p: Any, demo: DemoServer, shot: str) -> list[str]:
    """The incident page a P0 notification's acknowledgement link opens (a server-drawn page: the
    browser's language, as the config names none), in Chinese with its times at +08:00."""
    def firing() -> str | None:  # the demo's outage flaps: a link's group may have resolved since it was sent
        link = _ack_link(demo)
        if link is None:
            return None
        p.goto(link)
        p.wait_for_selector("#since", timeout=TIMEOUT_MS)
        return None if p.inner_text("#since") == "已恢复" else link

    wait_until("the incident page of a P0 still firing", firing, timeout=120.0)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    p.screenshot(path=str(ARTIFACTS / f"{shot}.png"))
    found = [f"English left: {text!r}" for text in sorted(set(_english(p.evaluate(TEXTS, None))))]
    since, footer = p.inner_text("#since"), p.inner_text("#footer")
    if not re.search(r"告警开始于 \d{4}-\d\d-\d\d \d\d:\d\d UTC\+08:00", since):
        found.append(f"since: {since!r}")
    if ZONE not in footer:
        found.append(f"the zone is not named: {footer!r}")
    if p.get_attribute("html", "lang") != "zh-CN":
        found.append("html lang is not zh-CN")
    return found


def _ack_link(demo: DemoServer) -> str | None:
    """The newest acknowledgement link of a notification of the firing P0 (shown to a token's holder)."""
    req = urllib.request.Request(demo.url + "api/v1/dashboard/timeline",
                                 headers={"Authorization": f"Bearer {demo.token}"})
    with urllib.request.urlopen(req, timeout=10) as res:
        events = json.loads(res.read())
    events = events["data"] if isinstance(events, dict) else events
    def p0(e: dict[str, Any]) -> bool:  # the demo's outage fires it until the story ends
        return e.get("kind") == "notification" and any(
            a["alertname"] == "ServiceUnavailable" and a["status"] == "firing"
            for g in e["groups"] for a in g["alerts"])

    found = (re.search(r"http\S+/api/v1/alerts/ack/link\?\S+", note) for e in events if p0(e)
             for note in e.get("notes") or ())
    links = [m[0] for m in found if m]
    return links[-1] if links else None


def _shows_shanghai_time(p: Any, demo: DemoServer) -> None:
    """The header's server time is the server's clock in Asia/Shanghai, its offset shown (a UTC time
    would be 8 h off; the demo's clock runs 40x: 4 h is 6 real minutes between boot and this check)."""
    shown = p.inner_text("#server-time")
    m = re.search(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \+08:00", shown)
    assert m, f"no time with +08:00 in {shown!r}"
    now = float(demo.api("api/v1/query?query=time()")["result"][0])
    local = datetime.fromtimestamp(now, ZoneInfo(ZONE)).replace(tzinfo=None)
    gap = abs((datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S") - local).total_seconds())
    assert gap < 4 * 3600, f"{shown!r} is {gap:.0f} s from the server's clock in {ZONE} ({local})"
