"""The shipped UCI datasets (CC BY 4.0; see data/README.md) and synthetic generators."""

from .synthetic import (
    make_classification_problem,
    make_glm,
    make_pl_problem,
    make_robust_regression,
    make_saddle_problem,
)
from .uci import DATASETS, describe, load, load_adult, load_bank, load_bike, load_credit_card, load_wine, preprocess

__all__ = [
    "make_classification_problem", "make_glm", "make_pl_problem", "make_robust_regression", "make_saddle_problem",
   "DATASETS", "describe", "load", "load_adult", "load_bank", "load_bike", "load_credit_card", "load_wine", "preprocess"]
