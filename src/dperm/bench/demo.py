"""The main job: several private learners x several epsilons on the embedded ADULT data.

Prints excess empirical risk, test accuracy and seconds next to the non-private optimum,
and plots them. The module imports nothing heavy at import (NumPy, pandas and the
algorithms are imported by the functions): the command line reads its defaults from here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DemoConfig", "run_demo", "plot_demo"]

DEFAULT_ALGORITHMS = ("output_perturbation", "objective_perturbation", "gd_output_perturbation", "noisy_gd", "dp_sgd")
DEFAULT_EPSILONS = (0.1, 0.5, 1.0, 2.0)


@dataclass(frozen=True)
class DemoConfig:
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    epsilons: tuple[float, ...] = DEFAULT_EPSILONS
    delta: float = 1e-5
    mu: float = 1e-3
    repeats: int = 1
    seed: int = 0


def _accuracy(coef, X, y) -> float:
    import numpy as np

    return float(np.mean(np.where(X @ coef > 0, 1.0, -1.0) == y))


def run_demo(config: DemoConfig = DemoConfig(), progress=None) -> tuple["pd.DataFrame", dict]:
    """Run every (algorithm, epsilon) cell on ADULT; returns (table, context).

    ``progress`` is an optional callable advanced once per finished run.
    """
    import numpy as np
    import pandas as pd

    from ..algorithms import registry
    from ..privacy.budget import PrivacyBudget
    from ..privacy.noise import make_rng
    from ..problem.erm import ERMProblem
    from ..problem.reference import solve_reference
    from ..datasets import load_adult

    X, y = load_adult(split="train", return_X_y=True)
    X_test, y_test = load_adult(split="test", return_X_y=True)
    problem = ERMProblem(X, y, "logistic", ("l2", config.mu), data_norm=1.0)
    # Private fits run on float32 (a quarter of the memory traffic per full gradient);
    # excess risk is measured on the float64 problem.
    fit_problem = problem.astype(np.float32)
    t0 = time.perf_counter()
    reference = solve_reference(problem)
    ref_seconds = time.perf_counter() - t0
    rows = [{
        "algorithm": "non-private optimum",
        "epsilon": np.inf,
        "excess_risk": 0.0,
        "test_accuracy": _accuracy(reference.coef, X_test, y_test),
        "seconds": ref_seconds,
    }]
    rng = make_rng(config.seed)
    for name in config.algorithms:
        info = registry.get(name)
        for eps in config.epsilons:
            for _ in range(config.repeats):
                t0 = time.perf_counter()
                fit = info.fit(fit_problem, PrivacyBudget(eps, config.delta), rng=rng)
                seconds = time.perf_counter() - t0
                rows.append({
                    "algorithm": name,
                    "epsilon": eps,
                    "excess_risk": fit.excess_risk(problem, reference),
                    "test_accuracy": _accuracy(fit.coef, X_test, y_test),
                    "seconds": seconds,
                })
                if progress is not None:
                    progress()
    raw = pd.DataFrame(rows)
    table = raw.groupby(["algorithm", "epsilon"], sort=False, as_index=False).mean()
    context = {"n_train": problem.n_samples, "n_features": problem.n_features, "n_test": X_test.shape[0],
               "reference_objective": reference.objective, "mu": config.mu, "delta": config.delta}
    return table, context


def plot_demo(table: "pd.DataFrame", path: Path) -> Path:
    """Excess risk and test accuracy against epsilon, one line per algorithm; each panel
    has its own legend."""
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    private = table[np.isfinite(table["epsilon"])]
    baseline = table[~np.isfinite(table["epsilon"])]
    fig, (ax_risk, ax_acc) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, group in private.groupby("algorithm", sort=False):
        ax_risk.plot(group["epsilon"], np.maximum(group["excess_risk"], 1e-8), "o-", label=name)
        ax_acc.plot(group["epsilon"], group["test_accuracy"], "o-", label=name)
    if len(baseline):
        ax_acc.axhline(float(baseline["test_accuracy"].iloc[0]), color="k", ls="--", label="non-private")
    ax_risk.set(xscale="log", yscale="log", xlabel="epsilon", ylabel="excess empirical risk",
                title="ADULT, logistic loss: excess risk")
    ax_acc.set(xscale="log", xlabel="epsilon", ylabel="test accuracy", title="test accuracy")
    ax_risk.legend(fontsize=8)  # each panel readable on its own
    ax_acc.legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
