"""Verdicts on a PSI: stable, warning (P2 digest), review (a human looks), rollback."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from inferwatch._exceptions import InputError

__all__ = ["Thresholds", "Verdict"]


class Verdict(enum.StrEnum):
    """What a PSI asks for (DESIGN.md): > 0.1 warning, > 0.25 review, > 0.5 rollback."""

    STABLE = "stable"
    WARNING = "warning"
    REVIEW = "review"
    ROLLBACK = "rollback"


@dataclass(frozen=True, slots=True)
class Thresholds:
    """PSI thresholds of the verdicts, kept apart from the statistics that they judge.

    >>> t = Thresholds()
    >>> [t.verdict(p).value for p in (0.05, 0.2, 0.3, 0.7)]
    ['stable', 'warning', 'review', 'rollback']
    >>> t.verdict(0.3, significant=False).value  # below the no-drift critical value: noise
    'stable'
    """

    warning: float = 0.1
    review: float = 0.25
    rollback: float = 0.5

    def __post_init__(self) -> None:
        if not 0 <= self.warning <= self.review <= self.rollback:
            raise InputError(
                f"PSI thresholds must satisfy 0 <= warning <= review <= rollback, got "
                f"{self.warning}, {self.review}, {self.rollback}"
            )

    def verdict(self, psi: float, *, significant: bool = True) -> Verdict:
        """The verdict for ``psi``; a PSI not above its critical value is ``stable``."""
        if not significant:
            return Verdict.STABLE
        if psi > self.rollback:
            return Verdict.ROLLBACK
        if psi > self.review:
            return Verdict.REVIEW
        if psi > self.warning:
            return Verdict.WARNING
        return Verdict.STABLE
