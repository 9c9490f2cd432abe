"""Embedding drift: MMD² and a domain classifier, batch and streaming."""

from inferwatch.quality.embedding._embedding import (
    DEFAULT_AUC_THRESHOLD,
    EmbeddingDrift,
    classifier_auc,
    embedding_drift,
    mmd2,
    mmd2_permutation,
)
from inferwatch.quality.embedding._embedding_stream import (
    MIN_EMBEDDING_SAMPLES,
    EmbeddingDriftAggregator,
    Reservoir,
)

__all__ = [
    "DEFAULT_AUC_THRESHOLD",
    "MIN_EMBEDDING_SAMPLES",
    "EmbeddingDrift",
    "EmbeddingDriftAggregator",
    "Reservoir",
    "classifier_auc",
    "embedding_drift",
    "mmd2",
    "mmd2_permutation",
]
