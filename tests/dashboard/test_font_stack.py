"""The stylesheet names fonts that cover Chinese, system fonts first: the language button is never boxes."""

from __future__ import annotations

import re
from importlib.resources import files


def test_the_body_font_stack_names_cjk_system_fonts_before_the_generic_family() -> None:
    css = files("inferwatch.server.web").joinpath("dashboard/dashboard.css").read_text(encoding="utf-8")
    match = re.search(r"^body \{[^}]*font: [^;,]*? ([^;]*);", css, re.MULTILINE)
    assert match, "no font in the body rule"
    stack = [f.strip().strip('"') for f in match.group(1).split(",")]
    # rule: macOS, Windows and Linux (fonts-noto-cjk, as CI installs) each find one, before sans-serif
    assert {"PingFang SC", "Microsoft YaHei", "Noto Sans CJK SC"} <= set(stack[:-1]), stack
    assert stack[0] == "system-ui" and stack[-1] == "sans-serif", stack
