"""The shipped UCI datasets (CC BY 4.0; see data/README.md) and synthetic generators."""

from .uci import DATASETS, describe, load, load_adult, load_bank, load_bike, load_credit_card, load_wine, preprocess

__all__ = ["DATASETS", "describe", "load", "load_adult", "load_bank", "load_bike", "load_credit_card", "load_wine", "preprocess"]
