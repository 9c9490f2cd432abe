"""A/B tests on conversion counts: two-proportion z-test, chi-square, CI of the difference, mSPRT.

For arms A and B with ``x`` conversions out of ``n``, ``p̂ = x / n``:

* z-test (pooled): ``z = (p̂_B − p̂_A) / sqrt(p̂ (1 − p̂) (1/n_A + 1/n_B))``, ``p̂`` the pooled
  rate; two-sided ``p = 2 · Φ(−|z|)``.
* chi-square on the 2 × 2 table, **without** Yates' correction by default (then
  ``χ² = z²`` and the p-values agree; equal to
  ``scipy.stats.chi2_contingency(table, correction=False)``); ``yates=True``
  applies it as scipy does by default.
* difference ``d = p̂_B − p̂_A`` with the unpooled Wald interval
  ``d ± z_{1−α/2} · sqrt(p̂_A(1−p̂_A)/n_A + p̂_B(1−p̂_B)/n_B)``.
* mSPRT (Johari, Koomen, Pekelis, Walsh, "Peeking at A/B tests", KDD 2017; and
  "Always valid inference", Operations Research 2022) with a normal mixture
  ``θ ~ N(0, τ²)`` over the difference: with ``V`` the variance of ``d`` above,

      Λ = sqrt(V / (V + τ²)) · exp( τ² d² / (2 V (V + τ²)) )

  and the always-valid p-value ``p_n = min(p_{n−1}, 1 / Λ_n)``: looking every
  day and stopping at the first ``p_n < α`` keeps the false-positive rate at α.
  ``V = 0`` (no variation yet) gives ``Λ = 1``.

Degenerate counts get defined results: a pooled rate of 0 or 1 (no variation)
gives ``z = 0``, ``p = 1``, ``χ² = 0``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from scipy import stats

from inferwatch._exceptions import InputError

__all__ = [
    "ABTestResult",
    "Arm",
    "SequentialResult",
    "SequentialTest",
    "abtest",
    "chi2_test",
    "difference_ci",
    "msprt",
    "parse_arm",
    "z_test",
]


@dataclass(frozen=True, slots=True)
class Arm:
    """Conversions out of a total for one variant."""

    conversions: int
    total: int

    def __post_init__(self) -> None:
        if self.total <= 0 or self.conversions < 0 or self.conversions > self.total:
            raise InputError(f"need 0 <= conversions <= total and total > 0, got "
                             f"{self.conversions}/{self.total}")

    @property
    def rate(self) -> float:
        """Conversion rate ``conversions / total``."""
        return self.conversions / self.total

    @property
    def variance(self) -> float:
        """Variance of the rate estimate, ``p̂ (1 − p̂) / n``."""
        return self.rate * (1.0 - self.rate) / self.total


_ARM = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_arm(text: str, *, what: str = "arm") -> Arm:
    """``"120/1000"`` → ``Arm(120, 1000)`` (``InputError`` naming ``what`` otherwise)."""
    m = _ARM.match(text)
    if not m:
        raise InputError(f"{what}: expected CONVERSIONS/TOTAL such as 120/1000, got {text!r}")
    try:
        return Arm(int(m.group(1)), int(m.group(2)))
    except InputError as exc:
        raise InputError(f"{what}: {exc}") from None


def z_test(a: Arm, b: Arm) -> tuple[float, float]:
    """Pooled two-proportion z statistic (B − A) and its two-sided p-value."""
    pooled = (a.conversions + b.conversions) / (a.total + b.total)
    se = math.sqrt(pooled * (1.0 - pooled) * (1.0 / a.total + 1.0 / b.total))
    if se == 0.0:
        return 0.0, 1.0
    z = (b.rate - a.rate) / se
    return z, float(2.0 * stats.norm.sf(abs(z)))


def chi2_test(a: Arm, b: Arm, *, yates: bool = False) -> tuple[float, float]:
    """Pearson chi-square of the 2 × 2 table (converted, not converted) × (A, B), dof 1."""
    obs = [[a.conversions, a.total - a.conversions], [b.conversions, b.total - b.conversions]]
    n = a.total + b.total
    cols = [obs[0][0] + obs[1][0], obs[0][1] + obs[1][1]]
    if 0 in cols:
        return 0.0, 1.0
    x2 = 0.0
    for i, row_total in enumerate((a.total, b.total)):
        for j in range(2):
            e = row_total * cols[j] / n
            d = abs(obs[i][j] - e)
            if yates:
                d = max(d - 0.5, 0.0)  # as scipy: O moves towards E by min(0.5, |O - E|)
            x2 += d * d / e
    return x2, float(stats.chi2.sf(x2, 1))


def difference_ci(a: Arm, b: Arm, *, alpha: float = 0.05) -> tuple[float, tuple[float, float]]:
    """``p̂_B − p̂_A`` and its unpooled Wald ``1 − alpha`` interval."""
    d = b.rate - a.rate
    half = stats.norm.ppf(1.0 - alpha / 2.0) * math.sqrt(a.variance + b.variance)
    return d, (d - half, d + half)


@dataclass(frozen=True, slots=True)
class SequentialResult:
    """mSPRT mixture likelihood ratio and its always-valid p-value."""

    likelihood_ratio: float
    p_value: float


def msprt(a: Arm, b: Arm, *, tau: float = 0.05, previous_p: float = 1.0) -> SequentialResult:
    """One look of the mSPRT; ``previous_p`` is the last always-valid p-value (1 at the first look)."""
    if tau <= 0:
        raise InputError(f"tau must be positive, got {tau}")
    v = a.variance + b.variance
    if v == 0.0:
        return SequentialResult(1.0, min(previous_p, 1.0))
    t2 = tau * tau
    d = b.rate - a.rate
    log_lr = 0.5 * math.log(v / (v + t2)) + t2 * d * d / (2.0 * v * (v + t2))
    lr = math.exp(min(log_lr, 700.0))
    return SequentialResult(lr, min(previous_p, 1.0, math.exp(-log_lr)))


class SequentialTest:
    """Always-valid p-value over repeated looks at growing counts.

    >>> t = SequentialTest(tau=0.05)
    >>> p1 = t.look(Arm(50, 1000), Arm(52, 1000)).p_value
    >>> p2 = t.look(Arm(100, 2000), Arm(100, 2000)).p_value  # never goes back up
    >>> p1 == p2 == 1.0
    True
    """

    def __init__(self, *, tau: float = 0.05) -> None:
        self.tau = tau
        self.p_value = 1.0

    def look(self, a: Arm, b: Arm) -> SequentialResult:
        """Update with the current totals; the p-value is the running minimum of ``1 / Λ``."""
        r = msprt(a, b, tau=self.tau, previous_p=self.p_value)
        self.p_value = r.p_value
        return r


@dataclass(frozen=True, slots=True)
class ABTestResult:
    """Every fixed-horizon statistic of an A/B comparison, and one mSPRT look."""

    z: float
    p_value: float
    chi2: float
    chi2_p_value: float
    difference: float
    ci: tuple[float, float]
    sequential: SequentialResult

    def to_json(self) -> dict[str, Any]:
        """``inferwatch abtest --json``'s object (exactly the documented keys)."""
        return {
            "z": self.z, "p_value": self.p_value, "chi2": self.chi2, "difference": self.difference,
            "ci": [self.ci[0], self.ci[1]],
            "sequential": {"likelihood_ratio": self.sequential.likelihood_ratio,
                           "p_value": self.sequential.p_value},
        }


def abtest(a: Arm, b: Arm, *, alpha: float = 0.05, tau: float = 0.05, yates: bool = False) -> ABTestResult:
    """All the statistics at once (B compared with A).

    >>> r = abtest(Arm(100, 1000), Arm(150, 1000))
    >>> round(r.z, 3), round(r.p_value, 5), round(r.chi2, 3), round(r.difference, 3)
    (3.381, 0.00072, 11.429, 0.05)
    """
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha}")
    z, p = z_test(a, b)
    x2, p2 = chi2_test(a, b, yates=yates)
    d, ci = difference_ci(a, b, alpha=alpha)
    return ABTestResult(z, p, x2, p2, d, ci, msprt(a, b, tau=tau))
