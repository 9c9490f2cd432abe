"""``inferwatch rules check|export|list``: validate rules, print their Prometheus form."""

from __future__ import annotations

import argparse
from typing import Any

from inferwatch.cli._common import add_config_arg, print_json

# settings' ENGINE_PACKS (not imported here: --help stays fast)
PACKS = ("vllm", "triton", "tgi", "sglang", "trtllm")

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``rules``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "rules", help="check the alert rules or print them as a Prometheus rule file",
        description="Validate the config's alert rules (the default pack merged with yours), "
        "list them with their PromQL, or print the Prometheus rule file that promtool accepts.",
    )
    verbs = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = verbs.add_parser("check", help="validate the rules of a config")
    add_config_arg(check)
    check.set_defaults(func=_check)
    ls = verbs.add_parser(
        "list", help="list the rules and their PromQL",
        description="List the rules with their PromQL. A dynamic rule (threshold: dynamic) also "
        "lists each series it has seen and whether its band is learned yet (from the state "
        "saved in the data directory; until learned, the rule's static fallback decides).")
    add_config_arg(ls)
    ls.add_argument("--pack", action="append", choices=PACKS, metavar="PACK",
                    help=f"list only this engine pack's rules ({', '.join(PACKS)}; repeatable), "
                    "whether or not the config's rules.packs selects it")
    ls.add_argument("--json", action="store_true", help="print JSON")
    ls.set_defaults(func=_list)
    export = verbs.add_parser("export", help="print the Prometheus rule file (YAML)")
    add_config_arg(export)
    export.set_defaults(func=_export)


def _rules(args: argparse.Namespace) -> list[Any]:
    from inferwatch.config import load_config
    from inferwatch.slo import load_rule_set

    return load_rule_set(load_config(args.config)).alerts


def _check(args: argparse.Namespace) -> int:
    rules = _rules(args)
    no_promql = [r.name for r in rules if r.expr is None]
    recordings = _recordings(args)
    print(f"{len(rules)} rules ok" + (f", {len(recordings)} SLO recording rules" if recordings else "")
          + (f"; without a PromQL form (dynamic without fallback, or outlier dbscan or change): "
                                       f"{', '.join(no_promql)}" if no_promql else ""))
    return 0


def _list(args: argparse.Namespace) -> int:
    from inferwatch.config import load_config

    cfg = load_config(args.config)
    if args.pack:
        from inferwatch.rules import Rule, engine_rule_specs

        rules: list[Any] = [Rule.from_spec(s) for s in engine_rule_specs(args.pack)]
    else:
        rules = _rules(args)
    bands, warmup = _saved_bands(cfg, rules)
    rows = [{"name": r.name, "tier": r.tier.value, "dimension": r.dimension.value,
             "for": r.for_, "keep_firing_for": r.keep_firing_for,
             "expr": r.promql or f"{r.signal} ({'outlier' if r.outlier else 'dynamic'})",
             "dynamic": r.dynamic is not None, "outlier": r.outlier is not None,
             **({"bands": [{"series": k, "learned": v,
                            **({"warmup": warmup[r.name][k]} if k in warmup.get(r.name, {}) else {})}
                           for k, v in sorted(bands[r.name].items())]}
                if r.name in bands else {})} for r in rules]
    recordings = [] if args.pack else _recordings(args)
    if args.json:
        print_json(rows + [{"name": rec.record, "type": "recording", "group": rec.group,
                            "labels": dict(rec.labels), "expr": rec.promql} for rec in recordings])
        return 0
    width = max([22, *(len(row["name"]) for row in rows)])
    for row in rows:
        kind = ("slo" if row["name"] in _slo_alert_names(rules) else "dynamic" if row["dynamic"]
                else "outlier" if row["outlier"] else "static")
        print(f"{row['name']:{width}} {row['tier']} {row['dimension']:14} {kind:7} for {row['for']:>5g}s  "
              f"{row['expr']}")
        for b in row.get("bands", []):
            print(f"{'':{width + 4}}band {b['series'] or '{}'}: {'learned' if b['learned'] else 'learning'}"
                  + _warmup_text(b.get("warmup")))
    for rec in recordings:
        print(f"{rec.record:{width}} {'--':2} {rec.labels.get('sloth_id', ''):14} {'record':7}  {rec.promql}"
              .replace("\n", " "))
    return 0


def _slo_alert_names(rules: list[Any]) -> set[str]:
    return {r.name for r in rules if r.condition is not None and r.outlier is None}


def _recordings(args: argparse.Namespace) -> list[Any]:
    """The SLOs' recording rules (Sloth's names), listed after the alert rules."""
    from inferwatch.config import load_config
    from inferwatch.slo import load_rule_set

    return list(load_rule_set(load_config(args.config)).recordings)


def _warmup_text(w: dict[str, float] | None) -> str:
    """`` (120/48 samples, 0.4/2.0 days)``: a band's warm-up progress (the novelty
    detector's after it, where on), or nothing."""
    if not w:
        return ""
    parts = []
    if "points" in w:
        parts.append(f"{w['points']:g}/{w['min_points']:g} samples, "
                     f"{w['history_s'] / 86400:.1f}/{w['min_history_s'] / 86400:.1f} days")
    if "novelty_points" in w:  # the novelty detector's own warm-up (baseline.novelty)
        parts.append(f"novelty {w['novelty_points']:g}/{w['novelty_min_points']:g} samples")
    return f" ({'; '.join(parts)})" if parts else ""


def _saved_bands(cfg: Any, rules: list[Any]) -> tuple[dict[str, dict[str, bool]],
                                                      dict[str, dict[str, dict[str, float]]]]:
    """Each dynamic rule's series, whether its band is learned and its warm-up, from the saved state."""
    from inferwatch.baseline import band_provider_factory
    from inferwatch.model import SystemClock
    from inferwatch.rules import AlertStateStore, Evaluator
    from inferwatch.server import ALERT_STATE_FILE, baseline_settings, state_dir
    from inferwatch.store import MemoryStore

    dynamic = [r for r in rules if r.dynamic is not None]
    state_in = state_dir(cfg)  # None: memory storage, nothing saved
    path = state_in / ALERT_STATE_FILE if state_in is not None else None
    if not dynamic or path is None or not path.is_file():
        return {r.name: {} for r in dynamic}, {}
    state = AlertStateStore(path)
    try:  # the evaluator restores the bands exactly as `serve` does; nothing is written
        ev = Evaluator(dynamic, MemoryStore(), clock=SystemClock(), state=state,
                       band_factory=band_provider_factory(baseline_settings(cfg.baseline)))
        return ({r.name: ev.band_status(r.name) or {} for r in dynamic},
                {r.name: ev.band_warmup(r.name) for r in dynamic})
    finally:
        state.close()


def _export(args: argparse.Namespace) -> int:
    import yaml

    from inferwatch.config import load_config
    from inferwatch.rules import to_prometheus_rule_groups
    from inferwatch.slo import load_rule_set

    rule_set = load_rule_set(load_config(args.config))
    doc = to_prometheus_rule_groups([r for r in rule_set.alerts if r.condition is None or r.outlier])
    doc["groups"] += rule_set.slo.prometheus_groups()  # the SLOs: Sloth's recordings, then their alerts
    print(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000), end="")
    return 0
