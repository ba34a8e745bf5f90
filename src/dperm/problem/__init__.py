"""What is being minimized: losses, regularizers, constraints and the ERM problem.

No privacy in here.
"""

from .constraints import Box, Constraint, L1Ball, L2Ball, Unconstrained, make_constraint
from .custom import CustomLoss, LipschitzWarning
from .erm import DataNormWarning, ERMProblem
from .losses import (
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
from .reference import ReferenceSolution, solve_reference
from .regularizers import L1, L2, ElasticNet, NoRegularizer, Regularizer, make_regularizer

__all__ = [
    "Box", "Constraint", "L1Ball", "L2Ball", "Unconstrained", "make_constraint",
    "CustomLoss", "LipschitzWarning", "DataNormWarning", "ERMProblem",
    "LOSSES", "Biweight", "Hinge", "Huber", "HuberizedHinge", "Logistic", "MarginLoss",
    "SigmoidSquared", "Squared", "make_loss",
    "ReferenceSolution", "solve_reference",
    "L1", "L2", "ElasticNet", "NoRegularizer", "Regularizer", "make_regularizer",
]
