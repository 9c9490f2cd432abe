"""Every default and edge rule's summary and description, as the evaluator expands them, reads in Chinese:
the dashboard's alert cards and the incident page show them translated at the source."""

from __future__ import annotations

import math
import re

import pytest

from inferwatch.alerting import translate_description, translate_summary
from inferwatch.rules import (
    ENGINE_PACKS,
    Rule,
    default_rule_specs,
    edge_rule_specs,
    engine_rule_specs,
    expand_template,
)

CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")
# descriptions that are data only: a label's value, shown as it is
DATA_ONLY = {"{{ $labels.evidence }}"}


def _texts(key: str, value: float) -> list[tuple[str, str]]:
    out = []
    for spec in (*default_rule_specs(), *edge_rule_specs(), *engine_rule_specs(ENGINE_PACKS)):
        rule = Rule.from_spec(spec)
        text = rule.annotations.get(key, "")
        if not text or text in DATA_ONLY:
            continue
        labels = {name: "demo" for name in re.findall(r"\$labels\.(\w+)", text)}
        out.append((rule.name, expand_template(text, labels, value)))
    return out


@pytest.mark.parametrize("value", [0.7513789632390443, 1e-9, math.inf])
def test_every_default_summary_and_description_has_its_chinese(value: float) -> None:
    # rule: a default rule added without its Chinese fails here, naming it
    missing = []
    for key, translate in (("summary", translate_summary), ("description", translate_description)):
        for name, text in _texts(key, value):
            shown = translate(text, "zh-CN")
            if not CJK.search(shown) or shown == text:
                missing.append(f"{name} {key}: {text!r}")
    assert not missing, "\n".join(missing)


def test_english_and_ones_own_texts_stay_as_written() -> None:
    assert translate_description("66.7% of requests answer 503.", "en") == "66.7% of requests answer 503."
    assert translate_description("my own words.", "zh-CN") == "my own words."
    assert translate_description("P99 latency is 1.2s.", "zh-CN") == "P99 延迟为 1.2s。"
