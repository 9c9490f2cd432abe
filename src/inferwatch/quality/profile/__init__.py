"""Reference profiles: bins cut on the reference, counts per bin and category, the profile file."""

from inferwatch.quality.profile._binning import (
    UNSEEN,
    FloatArray,
    IntArray,
    bin_counts,
    bin_counts_sorted,
    category_counts,
    drop_nan,
    equal_width_cuts,
    is_missing,
    quantile_cuts,
)
from inferwatch.quality.profile._profile import (
    CategoricalProfile,
    Column,
    FeatureProfile,
    NumericProfile,
    Profile,
    Table,
    as_categorical,
    build_profile,
)
from inferwatch.quality.profile._profile_json import (
    dump_profile,
    load_profile,
    profile_from_json,
    profile_to_json,
)

__all__ = [
    "UNSEEN",
    "CategoricalProfile",
    "Column",
    "FeatureProfile",
    "FloatArray",
    "IntArray",
    "NumericProfile",
    "Profile",
    "Table",
    "as_categorical",
    "bin_counts",
    "bin_counts_sorted",
    "build_profile",
    "category_counts",
    "drop_nan",
    "dump_profile",
    "equal_width_cuts",
    "is_missing",
    "load_profile",
    "profile_from_json",
    "profile_to_json",
    "quantile_cuts",
]
