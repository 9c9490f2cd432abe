"""Engine rule packs (``rules.packs``): config, loading, CLI listing, and the PromQL ``or`` they use."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferwatch import ConfigError
from inferwatch.cli import main
from inferwatch.config import parse_config
from inferwatch.rules import load_rules
from inferwatch.rules._engine_packs import ENGINE_PACKS, engine_rule_specs
from inferwatch.rules._promql import PromQLError, parse_promql


def test_unknown_pack_is_a_clear_config_error() -> None:
    with pytest.raises(ConfigError) as err:
        parse_config("rules:\n  packs: [vllm, lmdeploy]\n", source="inferwatch.yaml")
    msg = str(err.value)
    assert "inferwatch.yaml" in msg and "rules.packs" in msg
    assert "unknown rule pack 'lmdeploy': choose from vllm, triton, tgi, sglang, trtllm" in msg


def test_packs_default_to_none() -> None:
    config = parse_config("rules: {}\n")
    assert config.rules.packs == ()
    engines = ("Vllm", "Triton", "Tgi", "Sglang", "Trtllm")
    assert not any(r.name.startswith(engines) for r in load_rules(config))


def test_selected_packs_join_the_default_pack_and_disable_applies() -> None:
    default = {r.name for r in load_rules(parse_config("rules: {}\n"))}
    config = parse_config("rules:\n  packs: [vllm, tgi]\n  disable: [VllmPreemptions]\n")
    names = {r.name for r in load_rules(config)}
    assert default <= names
    vllm = {s.name for s in engine_rule_specs(["vllm"])}
    tgi = {s.name for s in engine_rule_specs(["tgi"])}
    assert names - default == (vllm | tgi) - {"VllmPreemptions"}
    assert not any(n.startswith("Triton") for n in names)


@pytest.mark.parametrize("pack", ENGINE_PACKS)
def test_each_pack_maps_engine_down_to_p0_and_has_p1_and_p2_rules(pack: str) -> None:
    specs = engine_rule_specs([pack])
    tiers = {s.tier.value for s in specs}
    assert tiers == {"P0", "P1", "P2"}
    down = [s for s in specs if s.name.endswith("Down")]
    assert len(down) == 1 and down[0].tier.value == "P0" and down[0].comparison == "=="


def test_renamed_vllm_metrics_are_matched_under_both_names() -> None:
    rules = {r.name: r.promql for r in load_rules(parse_config("rules:\n  packs: [vllm]\n"))}
    kv = rules["VllmKVCacheNearFull"]
    assert "vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc" in kv
    itl = rules["VllmHighInterTokenLatency"]
    assert "vllm:inter_token_latency_seconds_bucket" in itl
    assert "vllm:time_per_output_token_seconds_bucket" in itl


def test_or_parses_with_the_lowest_precedence_and_prints_back() -> None:
    e = parse_promql("a > 1 or b * 2")
    assert str(e) == "a > 1 or b * 2"
    assert str(parse_promql(str(e))) == str(e)
    # A comparison on an `or` keeps its parentheses.
    assert str(parse_promql("(a or b) > 0.9")) == "(a or b) > 0.9"


def test_or_with_a_scalar_is_refused() -> None:
    with pytest.raises(PromQLError, match='set operator "or" not allowed in binary scalar expression'):
        parse_promql("a or 1")


def test_rules_list_pack_shows_the_pack(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "list", "--pack", "vllm"]) == 0
    out = capsys.readouterr().out
    names = [line.split()[0] for line in out.splitlines()]
    assert names == [s.name for s in engine_rule_specs(["vllm"])]
    assert "VllmDown" in names and "HighP99Latency" not in names
    assert "vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc" in out


def test_rules_check_counts_the_selected_packs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rules", "check"]) == 0
    base = int(capsys.readouterr().out.split()[0])
    cfg = tmp_path / "inferwatch.yaml"
    cfg.write_text("rules:\n  packs: [triton]\n")
    assert main(["rules", "check", "--config", str(cfg)]) == 0
    assert capsys.readouterr().out.startswith(f"{base + len(engine_rule_specs(['triton']))} rules ok")
