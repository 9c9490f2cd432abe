"""Service-level objectives: Sloth ``prometheus/v1`` specs and shorthands, turned into recording
and multi-window, multi-burn-rate alert rules with Sloth's names; error budgets.

>>> from inferwatch.settings import BaseConfig, parse_as
>>> rs = load_rule_set(parse_as(BaseConfig, "slos: [{service: ranker, type: availability, objective: 99.9}]"))
>>> [a.name for a in rs.slo.alerts]
['SLORankerAvailabilityFastBurn', 'SLORankerAvailabilitySlowBurn', 'SLORankerAvailabilityTicket']
"""

from inferwatch.slo._generate import (
    ALERT_WINDOWS,
    SLI_WINDOWS,
    AlertWindows,
    SloRules,
    burn_factor,
    slo_rules,
    window_name,
)
from inferwatch.slo._load import REPLACED_BY_SLO, RuleSet, load_rule_set, load_slos
from inferwatch.slo._model import AlertSpec, EventsSli, RawSli, Slo
from inferwatch.slo._sloth import load_sloth_file, parse_sloth_spec
from inferwatch.slo._status import slo_status

__all__ = [
    "ALERT_WINDOWS",
    "REPLACED_BY_SLO",
    "SLI_WINDOWS",
    "AlertSpec",
    "AlertWindows",
    "EventsSli",
    "RawSli",
    "RuleSet",
    "Slo",
    "SloRules",
    "burn_factor",
    "load_rule_set",
    "load_slos",
    "load_sloth_file",
    "parse_sloth_spec",
    "slo_rules",
    "slo_status",
    "window_name",
]
