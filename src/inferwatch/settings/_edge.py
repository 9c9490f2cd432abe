"""``edge``: the server side of edge devices (their tokens, the ingest limits, the heartbeat rules use)."""

from __future__ import annotations

from pydantic import Field

from inferwatch.settings._types import Duration, FrozenModel, Secret

__all__ = ["EdgeConfig"]


class EdgeConfig(FrozenModel):
    """Devices allowed to upload to ``POST /api/v1/edge/ingest``, each with its own token.

    ``devices`` maps a device name to its token; a device's samples are stored
    with ``device="<name>"`` whatever the body says.
    """

    devices: dict[str, Secret] = Field(default_factory=dict, description="device name -> its upload token")
    max_body_bytes: int = Field(4 << 20, ge=1024, description="largest compressed body accepted (413 above)")
    max_decoded_bytes: int = Field(64 << 20, ge=1024, description="largest body once decompressed")
    max_samples: int = Field(100_000, ge=1, description="most samples in one batch")
    heartbeat: Duration = Field(300.0, gt=0, description="heartbeat assumed for a device not heard from yet")
    seen_batches_for: Duration = Field(7 * 86400.0, description="how long batch ids are kept for idempotency")
    agent_configs: str | None = Field(None, description="a directory of agent configurations (YAML files: "
                                      "match: labels, config: what the agent applies), read at each poll")
