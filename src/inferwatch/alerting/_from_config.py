"""The server's pipeline from a whole ``BaseConfig``: its state file, threads for the attempts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inferwatch.alerting._delivery import ThreadExecutor
from inferwatch.alerting._pipeline import Pipeline
from inferwatch.alerting._state import StateDB
from inferwatch.model import Clock
from inferwatch.settings import BaseConfig

__all__ = ["ALERTING_STATE_FILE", "pipeline_from_config"]

ALERTING_STATE_FILE = "alerting.sqlite"


def pipeline_from_config(
    config: BaseConfig, data_dir: str | Path | None, clock: Clock, **kwargs: Any
) -> Pipeline:
    """The server's pipeline: state in ``data_dir/alerting.sqlite`` (memory when ``None``),
    or in the ``db`` given (an HA pair's PostgreSQL).

    Attempts run on threads of their own unless ``executor`` says otherwise.
    """
    db = kwargs.pop("db", None) or StateDB(Path(data_dir) / ALERTING_STATE_FILE if data_dir is not None
                                           else ":memory:")
    kwargs.setdefault("executor", ThreadExecutor())
    return Pipeline(config.alerting, db=db, clock=clock, external_url=config.server.external_url, **kwargs)
