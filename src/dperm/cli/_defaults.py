"""Constants the parser and the verbs share: the defaults the parser shows (copied from the
bench modules, so that building the parser imports none; tests/test_cli_startup.py checks
they agree), the default delta and the undeclared-class limit."""

from __future__ import annotations


PAPER = "Zhang, Zheng, Mou, Wang (IJCAI 2017)"  # the source of `dperm bench table3`


TABLE3_DATASETS = ["bank", "adult", "credit_card", "wine", "bike"]


# `dperm demo`'s and `dperm bench scaling`'s defaults, copied here so that building the
# parser imports no bench module (dperm.bench.scaling imports NumPy, pandas and the
# algorithms); tests/test_cli_startup.py checks that they equal dperm.bench.demo's
# DEFAULT_ALGORITHMS, DEFAULT_EPSILONS and dperm.bench.scaling's DEFAULT_SIZES, PROBLEMS.
DEMO_ALGORITHMS = ("output_perturbation", "objective_perturbation", "gd_output_perturbation", "noisy_gd", "dp_sgd")


DEMO_EPSILONS = (0.1, 0.5, 1.0, 2.0)


SCALING_SIZES = (500, 1000, 2000, 4000, 8000, 16000)


SCALING_PROBLEMS = ("logistic_l2", "logistic_ball", "pl_least_squares", "glm_sigmoid", "glm_sigmoid_ball",
                    "glm_sigmoid_l2")


# The estimators' default delta (dperm.estimators), the default of `dperm fit` and `dperm budget`
# too: the same data gets the same solver from the command line and from Python.
DEFAULT_DELTA = 1e-5


# A classification target (no --classes) with more distinct values than this looks like a
# regression target: the same rule as the estimators' (MAX_UNDECLARED_CLASSES).
MAX_UNDECLARED_CLASSES = 20
