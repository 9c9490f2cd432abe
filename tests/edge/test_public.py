"""The edge package's public names are exactly its ``__all__`` (httpx's test_exported_members)."""

from __future__ import annotations

import types

import inferwatch.edge as edge


def test_public_names_are_all() -> None:
    names = vars(edge).items()
    public = {n for n, v in names if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert public == set(edge.__all__)
    assert edge.__all__ == sorted(edge.__all__, key=lambda n: (not n.isupper(), n))


def test_the_token_variable_is_the_documented_one() -> None:
    from inferwatch.config import env

    assert edge.ENV_EDGE_TOKEN == env.ENV_EDGE_TOKEN and env.ENV_EDGE_TOKEN in env.ENVIRONMENT
