"""The loss objects, for ``dperm.losses.Huber(threshold=0.5)`` and friends."""

from .problem.losses import (  # noqa: F401
    LOSSES,
    Biweight,
    Hinge,
    Huber,
    HuberizedHinge,
    Logistic,
    MarginLoss,
    SigmoidSquared,
    Squared,
    make_loss,
)

__all__ = ["LOSSES", "Biweight", "Hinge", "Huber", "HuberizedHinge", "Logistic", "MarginLoss", "SigmoidSquared", "Squared", "make_loss"]
