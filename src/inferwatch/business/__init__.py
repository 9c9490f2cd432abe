"""Business impact: conversion tracking per experiment and variant, A/B tests (fixed and sequential).

>>> from inferwatch.business import Arm, abtest
>>> round(abtest(Arm(100, 1000), Arm(150, 1000)).p_value, 5)
0.00072
"""

from inferwatch.business._abtest import (
    ABTestResult,
    Arm,
    SequentialResult,
    SequentialTest,
    abtest,
    chi2_test,
    difference_ci,
    msprt,
    parse_arm,
    z_test,
)
from inferwatch.business._aggregator import ConversionAggregator

__all__ = [
    "ABTestResult",
    "Arm",
    "ConversionAggregator",
    "SequentialResult",
    "SequentialTest",
    "abtest",
    "chi2_test",
    "difference_ci",
    "msprt",
    "parse_arm",
    "z_test",
]
