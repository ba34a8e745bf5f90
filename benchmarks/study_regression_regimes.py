"""The regression solver per regime (issue 30): candidates on the same private preprocessing.

For each regression table of ``bench_real_tables.py`` (nothing declared, ``raw``, and the
schema declared, ``declared``), epsilon and seed, the default pipeline
(``make_pipeline(DPLinearRegression(), epsilon, delta=1e-5)``) is fitted once; then every
candidate estimator is fitted on the same private matrix, the same target map and the same
estimator budget (what the pipeline left for the model), and its predictions are mapped
back and clipped into the same released target range. So the candidates differ only in
the estimator. Reported: test R^2 of

* ``centre``: the constant private centre of the target map (the intercept-only model);
* ``mean`` (an oracle, not private): the training target's mean;
* ``ridge`` (not private): scikit-learn's Ridge(1e-3) on the private matrix and map;
* the candidate solvers (objective perturbation of Huber_B, the default; alpha x k;
  noisy GD on Huber; AdaSSP; private Newton), each also shrunk towards the centre by a
  factor s in ``SHRINK`` (post-processing of the released model and centre).

Also the public signal-to-noise estimate of the model (``dperm.expectations.signal_to_noise``)
and the released range's width against the target's, for the diagnosis.

Run: ``python benchmarks/study_regression_regimes.py --seeds 2 --json study.json`` (about
half an hour on the shared machine); ``--report study.json`` prints the tables.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import bench_real_tables as suite  # noqa: E402

SHRINK = (0.0, 0.25, 0.5, 1.0)
REGRESSION = [name for name, spec in suite.TABLES.items() if spec[1] == "reg"]


def candidates():
    import dperm

    return {
        "default": lambda: dperm.DPLinearRegression(),
        "alpha x4": lambda: dperm.DPLinearRegression(),
        "alpha x16": lambda: dperm.DPLinearRegression(),
        "noisy_gd huber": lambda: dperm.DPHuberRegressor(solver="noisy_gd"),
        "adassp": lambda: dperm.DPLinearRegression(solver="adassp"),
        "dp_newton huber": lambda: dperm.DPHuberRegressor(solver="dp_newton"),
    }


ALPHA_FACTOR = {"alpha x4": 4.0, "alpha x16": 16.0}


def r2(y, p) -> float:
    return float(1.0 - np.mean((y - p) ** 2) / np.var(y))


def study_one(Xtr, Xte, ytr, yte, epsilon, seed, declared):
    import dperm
    from dperm.defaults import estimator_alpha
    from dperm.expectations import signal_to_noise
    from dperm.problem.losses import Huber
    from sklearn.linear_model import Ridge

    kwargs = {}
    if declared:
        kwargs = {"bounds": declared["bounds"], "categories": declared["categories"], "y_bounds": declared["y_bounds"]}
        Xtr = suite._as_str_categories(Xtr, declared["categories"])
        Xte = suite._as_str_categories(Xte, declared["categories"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # regime="model": the candidates are compared at the budget the model gets when it is fitted
        pipe = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=epsilon, delta=1e-5, random_state=seed,
                                   regime="model", **kwargs)
        pipe.fit(Xtr, ytr)
        Ztr = np.asarray(pipe[:-1].transform(Xtr), dtype=np.float64)
        Zte = np.asarray(pipe[:-1].transform(Xte), dtype=np.float64)
    final = pipe.steps[-1][1]
    name = pipe.steps[-1][0]
    budget = pipe.budgets_[name]
    low, high = pipe.y_bounds_
    rlow, rhigh = pipe.y_range_
    centre, half = 0.5 * (low + high), 0.5 * (high - low)
    norm = float(final.data_norm)
    n, d = Ztr.shape
    snr = signal_to_noise(n, d + 1, budget.epsilon, budget.delta, loss=Huber(1.0),
                          data_norm=math.hypot(norm, 1.0), label_bound=1.0)
    out = {"n": n, "d": d, "model_epsilon": budget.epsilon, "snr": snr, "data_norm": norm,
           "y_range": [rlow, rhigh], "y_map": [low, high],
           "y_quantiles": [float(v) for v in np.quantile(ytr, [0.0, 0.01, 0.5, 0.99, 1.0])],
           "pipeline": float(pipe.score(Xte, yte))}

    def clipped(p):
        return np.clip(p, rlow, rhigh)

    out["centre"] = r2(yte, np.full(len(yte), clipped(np.array(centre))))
    out["mean"] = r2(yte, np.full(len(yte), float(np.mean(ytr))))
    t = np.clip((np.clip(ytr, low, high) - centre) / half, -1, 1)
    ridge = Ridge(alpha=1e-3).fit(Ztr, t)
    out["ridge"] = r2(yte, clipped(centre + half * ridge.predict(Zte)))
    scores = {}
    for cname, make in candidates().items():
        model = make()
        params = {"epsilon": budget.epsilon, "delta": budget.delta, "data_norm": norm, "random_state": seed,
                  "y_bounds": (low, high)}
        started = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if cname in ALPHA_FACTOR:
                    params["alpha"] = ALPHA_FACTOR[cname] * estimator_alpha(
                        Huber(1.0), n, d + 1, budget.epsilon, budget.delta, data_norm=math.hypot(norm, 1.0))
                model.set_params(**params).fit(Ztr, ytr)
                p = model.predict(Zte)
            scores[cname] = {f"s={s:g}": r2(yte, clipped(centre + s * (p - centre))) for s in SHRINK}
            scores[cname]["seconds"] = time.perf_counter() - started
        except Exception as error:  # noqa: BLE001  (a refusal is a result)
            scores[cname] = {"error": f"{type(error).__name__}: {str(error)[:100]}"}
    out["candidates"] = scores
    return out


def run(names, epsilons, seeds, max_rows, settings, path):
    rows = []
    for name in names:
        Xtr, Xte, ytr, yte, task = suite.load(name, max_rows)
        decl = suite.declarations(name, Xtr, ytr, Xte, yte, task)
        for eps in epsilons:
            for setting in settings:
                for seed in range(seeds):
                    started = time.perf_counter()
                    row = study_one(Xtr, Xte, ytr, yte, eps, seed, decl if setting == "declared" else None)
                    row.update(table=name, setting=setting, epsilon=eps, seed=seed)
                    rows.append(row)
                    best = {k: v.get("s=1", float("nan")) for k, v in row["candidates"].items()}
                    print(f"{name:13s} {setting:8s} eps={eps:<4g} seed={seed} n={row['n']:5d} d={row['d']:3d} "
                          f"snr={row['snr']:.3g} centre={row['centre']:.3g} ridge={row['ridge']:.3f} "
                          + " ".join(f"{k}={v:.3g}" for k, v in best.items())
                          + f" ({time.perf_counter() - started:.0f} s)", flush=True)
                    if path:
                        with open(path, "w") as fh:
                            json.dump(rows, fh)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 0.1])
    parser.add_argument("--max-rows", type=int, default=20000)
    parser.add_argument("--tables", nargs="*", default=None)
    parser.add_argument("--settings", nargs="+", default=["raw", "declared"])
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    run(args.tables or REGRESSION, args.epsilons, args.seeds, args.max_rows, args.settings, args.json)


if __name__ == "__main__":
    main()
