"""Empirical privacy auditing: black-box lower bounds on epsilon.

``dperm.audit.audit(algorithm, epsilon, delta)`` runs a mechanism of the catalogue many
times on two worst-case replace-one neighbours and turns the success of the best
threshold test on its outputs into a Clopper-Pearson lower bound on epsilon
(Jagielski, Ullman, Oprea 2020; Nasr et al. 2021). A bound above the claim is a privacy
bug; ``miscalibrated=True`` runs the mechanism with half the claim's noise, which the
audit must catch. See docs/audit.md.
"""

from .core import AuditResult, audit, audit_suite, run_mechanism
from .families import FAMILIES, SUITE, Family, Scenario, family
from .neighbours import NeighbourPair, label_flip_pair, swapped_row_pair
from .stats import (
    ThresholdTest,
    choose_threshold,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    evaluate_threshold,
)

__all__ = [
    "AuditResult", "audit", "audit_suite", "run_mechanism",
    "FAMILIES", "SUITE", "Family", "Scenario", "family",
    "NeighbourPair", "label_flip_pair", "swapped_row_pair",
    "ThresholdTest", "choose_threshold", "clopper_pearson_lower", "clopper_pearson_upper", "epsilon_lower_bound",
    "evaluate_threshold",
]
