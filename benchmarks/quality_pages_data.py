"""The rows of ``bench_quality_pages.py``'s story, shared by the driver and the app."""

from __future__ import annotations

import numpy as np

FEATURES = ("age", "income", "clicks", "country")
COUNTRIES = np.array(["de", "fr", "us", "cn"], dtype=object)
WINDOW_S = 600.0
"""Drift window of the app (10 compressed minutes, so 30 minutes hold three windows)."""



def sample(rng: np.random.Generator, n: int, shifted: bool = False) -> list[dict[str, object]]:
    """``n`` request rows; ``shifted`` moves age and income (the real shift), not clicks or country."""
    age = rng.normal(46.0 if shifted else 40.0, 10.0, n)
    income = rng.lognormal(10.0 + (0.3 if shifted else 0.0), 0.5, n)
    clicks = rng.poisson(3.0, n)
    country = rng.choice(COUNTRIES, n, p=[0.4, 0.3, 0.2, 0.1])
    return [{"age": float(age[i]), "income": float(income[i]), "clicks": int(clicks[i]),
             "country": str(country[i])} for i in range(n)]
