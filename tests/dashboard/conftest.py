"""A demo server playing a story on compressed time, and a headless Debian Chromium (Playwright).

The story is the demo's, shortened: normal, then latency (P1), then an outage with
drift that lasts until the tests end, so the P0 alert fires and stays firing.
"""

from __future__ import annotations

import io
import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from tests._require import require_module, require_tool

from inferwatch.demo import (
    AlertView,
    DashboardPart,
    DemoOptions,
    Faults,
    Phase,
    PipelineView,
    Story,
    quality_components,
    run_demo,
)

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("INFERWATCH_TEST_ARTIFACTS", ROOT / "build" / "test-artifacts")) / "dashboard"
STORY = Story.of([
    Phase("normal", 0.0),
    Phase("latency", 60.0, Faults(latency_ms=1200.0)),
    # 70 % answer 503 (the P0 fires at >= 50 %): the 30 % answered still fill each 120-story-s drift window
    # with the 20 rows it needs (~36 at 40 req/s); at 90 % a window held 7-14 rows and PSI went stale
    Phase("outage", 420.0, Faults(unavailable_ratio=0.7), drift=1.0),
], end_s=4 * 3600.0)
SPEED = 40.0
ZONE = "Asia/Shanghai"  # the demo's alerting.timezone
# The omnibox popup's WebUI, preloaded in its own renderer for every browser context, costs ~0.5 s of
# CPU each time on a shared machine for nothing these tests look at.
CHROMIUM_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup"]

T = TypeVar("T")


def get_json(url: str) -> Any:
    """GET ``url`` and decode its JSON body."""
    with urllib.request.urlopen(url, timeout=10) as res:
        return json.loads(res.read())


def _holds(check: Callable[[], T | None]) -> T | None:
    try:
        return check()
    except urllib.error.HTTPError as exc:  # 503 while the demo mounts its API
        exc.close()
        if exc.code != 503:
            raise
        return None


def wait_until(what: str, check: Callable[[], T | None], timeout: float = 60.0) -> T:
    """Poll ``check`` until it returns something truthy (a 503 counts as not yet) and return that;
    fail naming ``what`` after ``timeout`` s."""
    end = time.monotonic() + timeout
    while not (got := _holds(check)):
        if time.monotonic() > end:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}")
        threading.Event().wait(0.2)
    return got


class DemoServer:
    """The running demo: its dashboard URL and API token."""

    def __init__(self, dashboard: DashboardPart) -> None:
        self.url = dashboard.url
        self.token = dashboard.token.reveal()

    def api(self, path: str) -> Any:
        """The ``data`` (or the whole body) of a GET on the server."""
        body = get_json(self.url + path)
        return body["data"] if isinstance(body, dict) and "data" in body else body

    def p0_alerts(self) -> list[dict[str, Any]]:
        """Firing P0 alerts, as the dashboard's alert view lists them."""
        return [a for a in self.api("api/v1/dashboard/alerts")
                if a["labels"].get("tier") == "P0" and a["state"] == "firing"]


@pytest.fixture(scope="package")
def demo() -> Iterator[DemoServer]:
    """The demo with its dashboard, until the P0 alert fires and a drift window has closed."""
    components, view = quality_components(window_s=120.0, seed=7)
    # times in the configured zone, whatever the browser's (test_phone_axe's Chinese walk checks +08:00)
    pipeline = PipelineView(settings={"timezone": ZONE})
    alerts = AlertView(forward=pipeline)
    dashboard = DashboardPart(alerts, pipeline, view.drift)
    components.parts += [pipeline, alerts, dashboard]
    stop = threading.Event()
    # 30 real minutes at most (stopped at teardown): the package's tests must never outlive the story
    opts = DemoOptions(duration_s=1800.0, speed=SPEED, rate=40.0, threads=8, refresh_s=0.25, seed=7,
                       story=STORY)
    thread = threading.Thread(target=run_demo, args=(opts, components),
                              kwargs={"out": io.StringIO(), "tty": False, "stop": stop}, daemon=True)
    thread.start()
    server = DemoServer(dashboard)
    try:
        wait_until("the P0 alert to fire", lambda: bool(server.p0_alerts()), timeout=150)
        psi = "api/v1/query?query=inferwatch_feature_psi"
        # up to 150 s: 60 s ran out twice at load 15 (it returns as soon as the window exists)
        wait_until("a drift window with PSI", lambda: bool(server.api(psi)["result"]), timeout=150)
        yield server
    finally:
        stop.set()
        thread.join(30)


@pytest.fixture(scope="package")
def browser(require_tool_once: str) -> Iterator[Any]:
    """A headless Chromium from Debian, driven by Playwright (no downloaded browser)."""
    sync_api = require_module("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=require_tool_once, args=CHROMIUM_FLAGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="package")
def require_tool_once() -> str:
    """The chromium binary (package scope: one browser for all the checks)."""
    return require_tool("chromium", "chromium-browser")


class Watched:
    """A page with its console errors and failed requests recorded."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.problems: list[str] = []
        page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}")
                if m.type == "error" else None)
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: self.problems.append(f"request failed: {r.url} {r.failure}"))
        page.on("response", lambda r: self.problems.append(f"HTTP {r.status}: {r.url}")
                if r.status >= 400 else None)

    def take(self) -> list[str]:
        """The problems so far, and forget them."""
        out, self.problems = self.problems, []
        return out

    def shot(self, name: str, *, full: bool = True) -> Path:
        """Save a screenshot (the whole page, or what the window shows) as a test artifact."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full)
        return path


@pytest.fixture
def page(browser: Any) -> Iterator[Watched]:
    """A fresh browser context (own session storage) and page."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        yield Watched(ctx.new_page())
    finally:
        ctx.close()
