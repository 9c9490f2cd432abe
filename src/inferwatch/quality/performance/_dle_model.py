"""The loss model of direct loss estimation: scikit-learn's HistGradientBoostingRegressor, an optional extra.

scikit-learn is imported here only, when a model is built (``pip install
'inferwatch[regression]'``); without it the error says which extra to install.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from inferwatch._exceptions import ToolMissingError

__all__ = ["EXTRA_HINT", "HGBParams", "hgb_regressor", "thread_limit"]

EXTRA_HINT = "direct loss estimation needs scikit-learn: pip install 'inferwatch[regression]'"


@dataclass(frozen=True)
class HGBParams:
    """Hyper-parameters of the loss model; ``max_iter`` is an upper bound when early stopping."""

    # The defaults are what 3-fold cross-validation on the car-price reference chose (the
    # cheapest grid point within one standard error of the best; docs/benchmarks/quality.md),
    # not settings picked while looking at any analysis chunk's truth.
    loss: str = "squared_error"
    """``squared_error`` or ``poisson`` (log link: a positive loss growing with the prediction)."""
    max_leaf_nodes: int = 15
    learning_rate: float = 0.3
    max_iter: int = 200
    min_samples_leaf: int = 20

    def label(self) -> str:
        """A short name for reports."""
        return f"{self.loss}, {self.max_leaf_nodes} leaves, lr {self.learning_rate}"


def hgb_regressor(params: HGBParams, categorical: Sequence[bool], rows: int, seed: int) -> Any:
    """A HistGradientBoostingRegressor (imported here: scikit-learn is an optional extra)."""
    try:
        ensemble = importlib.import_module("sklearn.ensemble")
    except ImportError as exc:
        raise ToolMissingError(EXTRA_HINT) from exc
    # Early stopping on held-out reference rows chooses the number of trees (a noisy loss
    # overfits quickly); too few rows to hold out any: a few trees only.
    stop = rows >= 200
    return ensemble.HistGradientBoostingRegressor(
        loss=params.loss,
        learning_rate=params.learning_rate,
        max_iter=params.max_iter if stop else min(params.max_iter, 20),
        max_leaf_nodes=params.max_leaf_nodes,
        min_samples_leaf=params.min_samples_leaf,
        categorical_features=list(categorical) if any(categorical) else None,
        early_stopping=stop,
        validation_fraction=0.1 if rows >= 2000 else 0.2,
        n_iter_no_change=10,
        random_state=seed,
    )


_CONTROLLER: list[Any] = []


@contextlib.contextmanager
def thread_limit(threads: int | None) -> Iterator[None]:
    """At most ``threads`` OpenMP threads inside (None: the library's default, one per core)."""
    if threads is None:
        yield
        return
    if not _CONTROLLER:
        try:  # threadpoolctl comes with scikit-learn; a controller found once makes each limit cheap
            _CONTROLLER.append(importlib.import_module("threadpoolctl").ThreadpoolController())
        except ImportError as exc:
            raise ToolMissingError(EXTRA_HINT) from exc
    with _CONTROLLER[0].limit(limits=threads, user_api="openmp"):
        yield
