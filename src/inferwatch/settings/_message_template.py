"""A receiver's own message template: the title line and the line per alert, as format strings.

    receivers:
      - name: ding
        type: dingtalk
        template:
          title: "{tier_name} {alertname}（{service}）"      # the group's title
          alert: "- {label[instance]}: {value} since {since}"  # one line per alert

Title fields: ``state`` (firing/resolved in the message's language), ``count``, ``tier``,
``tier_name``, ``alertname``, ``service``, ``dimension``, ``labels`` (the group's), and
``label[NAME]`` (a common label). Alert fields: ``state``, ``labels`` (those not common
to the group), ``value``, ``since`` (start, or end when resolved, in the configured zone)
and ``label[NAME]``. A missing label is empty. An unknown field is refused at load.
"""

from __future__ import annotations

from typing import Any

from pydantic import field_validator

from inferwatch.settings._types import FrozenModel

__all__ = ["ALERT_FIELDS", "TITLE_FIELDS", "Labelled", "MessageTemplate"]

TITLE_FIELDS = ("state", "count", "tier", "tier_name", "alertname", "service", "dimension", "labels", "label")
ALERT_FIELDS = ("state", "labels", "value", "since", "label")


class Labelled(dict[str, str]):
    """Label values for ``{label[NAME]}``: a missing one is empty."""

    def __missing__(self, key: str) -> str:
        return ""


def _check(template: str, fields: tuple[str, ...]) -> str:
    sample: dict[str, Any] = {f: "x" for f in fields} | {"label": Labelled()}
    try:
        template.format_map(sample)
    except KeyError as exc:
        raise ValueError(f"unknown field {exc} (known: {', '.join(fields)})") from None
    except (ValueError, IndexError, AttributeError) as exc:
        raise ValueError(f"not a format string: {exc}") from None
    return template


class MessageTemplate(FrozenModel):
    """The title and per-alert line of a receiver's messages (empty: the built-in ones)."""

    title: str = ""
    alert: str = ""

    @field_validator("title")
    @classmethod
    def _title(cls, v: str) -> str:
        return _check(v, TITLE_FIELDS)

    @field_validator("alert")
    @classmethod
    def _alert(cls, v: str) -> str:
        return _check(v, ALERT_FIELDS)
