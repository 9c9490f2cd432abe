"""``alerting.actions``: what runs when an alert fires (each chosen by its literal ``type``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from inferwatch.model import is_valid_label_name
from inferwatch.settings._types import Duration, FrozenModel, Secret
from inferwatch.settings.receivers import check_matchers

__all__ = [
    "ActionSpec",
    "CommandActionSpec",
    "DegradeActionSpec",
    "HttpActionSpec",
    "KubernetesScaleSpec",
    "RollbackActionSpec",
]


class _Action(FrozenModel):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    matchers: tuple[str, ...] = Field((), description="alerts that trigger the action")
    timeout: Duration = Field(10.0, gt=0)
    once_per: tuple[str, ...] = Field(
        (), description="labels naming the action's target: alerts sharing them run it once "
        "per cooldown (the others are recorded as deduplicated)"
    )
    cooldown: Duration = Field(0.0, ge=0, description="with once_per: how long one run covers")

    @field_validator("matchers")
    @classmethod
    def _matchers(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return check_matchers(v)

    @field_validator("once_per")
    @classmethod
    def _labels(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        bad = [name for name in v if not is_valid_label_name(name)]
        if bad:
            raise ValueError(f"once_per: {', '.join(map(repr, bad))} not a label name")
        return v


def _no_once_per_when_restoring(spec: _Action, restores: bool) -> None:
    # One run covers several alerts, but each alert's resolve would restore it while the
    # others still fire: refused rather than wrong.
    if spec.once_per and restores:
        raise ValueError(f"once_per: not supported for a {spec.__class__.__name__.removesuffix('Spec')} "
                         "that undoes itself on resolve (the first resolve would undo it for all)")


class KubernetesScaleSpec(_Action):
    """Scale out a Deployment through the API server's ``scale`` subresource."""

    type: Literal["kubernetes_scale"] = "kubernetes_scale"
    once_per: tuple[str, ...] = ("service",)  # an alert storm across instances: one step
    cooldown: Duration = Field(300.0, ge=0, description="with once_per: how long one run covers")
    namespace: str = "default"
    deployment: str = Field("{service}", description="name; {label} placeholders are filled")
    step: int = Field(1, ge=1, description="replicas added per firing episode")
    max_replicas: int = Field(10, ge=1)
    api_server: str = Field("", description="overrides kubeconfig / in-cluster server URL")
    kubeconfig: str = Field("", description="path; default $KUBECONFIG, ~/.kube/config, in-cluster")
    token: Secret | None = None
    verify_tls: bool = True


class HttpActionSpec(_Action):
    """Call an HTTP endpoint when the alert fires (and optionally when it resolves)."""

    type: Literal["http"] = "http"
    url: str
    method: Literal["POST", "PUT", "PATCH"] = "POST"
    body: dict[str, object] = Field(default_factory=dict)
    resolve_url: str = ""
    resolve_body: dict[str, object] = Field(default_factory=dict)
    bearer_token: Secret | None = None

    @model_validator(mode="after")
    def _restore(self) -> HttpActionSpec:
        _no_once_per_when_restoring(self, bool(self.resolve_url))
        return self


class CommandActionSpec(_Action):
    """Run a command (argv, no shell) when the alert fires; alert labels in the environment."""

    type: Literal["command"] = "command"
    argv: tuple[str, ...] = Field(min_length=1)
    resolve_argv: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _restore(self) -> CommandActionSpec:
        _no_once_per_when_restoring(self, bool(self.resolve_argv))
        return self


class DegradeActionSpec(_Action):
    """Turn on the service's degraded mode (admin endpoint) and restore it on resolve."""

    type: Literal["degrade"] = "degrade"
    url: str = Field("", description="admin endpoint, e.g. http://{instance}/admin/degrade")
    bearer_token: Secret | None = None

    @model_validator(mode="after")
    def _restore(self) -> DegradeActionSpec:
        _no_once_per_when_restoring(self, True)
        return self


class RollbackActionSpec(_Action):
    """Roll back the model; runs only when ``enabled``, else recommends it in the notification."""

    type: Literal["rollback"] = "rollback"
    once_per: tuple[str, ...] = ("service", "model")  # many drifted features: one rollback
    cooldown: Duration = Field(3600.0, ge=0, description="with once_per: how long one run covers")
    enabled: bool = False
    url: str = ""
    argv: tuple[str, ...] = ()


ActionSpec = Annotated[
    KubernetesScaleSpec | HttpActionSpec | CommandActionSpec | DegradeActionSpec | RollbackActionSpec,
    Field(discriminator="type"),
]
