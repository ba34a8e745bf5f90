"""Issue 30: a regression target's private range and the map it gives the model.

Two studies on the suite's regression tables (``bench_real_tables``), run by hand with the
suite's packages installed:

``spread``: the target's spread draw alone (``dperm.preprocessing.target``'s scaler at the
target's default share of epsilon), 20 seeds a table, for several caps of the public base
measure that favours shorter target spreads (``numeric.TARGET_SPREAD_CAP``, nats): how
often the drawn spread (a third of the scaler's) is below 0.3 times the training rows' own
off-centre median distance ("collapsed": every prediction near the median) or above 10
times it ("blown up": every prediction wrong by the spread's scale)::

    PYTHONPATH=src python benchmarks/study_target_map.py spread --caps 1e9 8 5 3 --epsilon 1 --seeds 20

``oracle``: the default pipeline (nothing declared, delta 1e-5) with the target's map and
range replaced, after the private draw is charged, by the training rows' own quantiles (an
oracle: not private): ``q0.01`` the 1% and 99% quantiles, ``minmax`` the extremes; with a
``c`` suffix the map is centred at the median with the longer reach. ``range`` is the
default. R^2 per table, and the counts of issue 30 (R^2 > 0, at least half the
non-private R^2)::

    PYTHONPATH=src python benchmarks/study_target_map.py oracle --variants range q0.01 q0.01c minmax --epsilon 1 --seeds 2
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_real_tables as suite  # noqa: E402


def regression_tables():
    return [name for name, spec in suite.TABLES.items() if spec[1] == "reg"]


def spread(caps, epsilon: float, seeds: int, tables) -> None:
    from dperm.preprocessing import numeric, target
    from dperm.preprocessing.quantiles import LEVEL_SWITCH

    for name in tables:
        Xtr, _, ytr, _, _ = suite.load(name, 20000)
        n = len(ytr)
        eps = target.target_share(n, epsilon) * epsilon
        median = np.median(ytr)
        off = ytr[ytr != median]
        truth = float(np.median(np.abs(off - median))) if off.size else 0.0
        cells, method = [], "?"
        for cap in caps:
            numeric.TARGET_SPREAD_CAP = cap
            collapsed = blown = 0
            for seed in range(seeds):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    scaler = numeric.PrivateScaler(epsilon=eps, range_switch=LEVEL_SWITCH, random_state=seed)
                    scaler._shorter_spreads = True
                    scaler.fit(ytr.reshape(-1, 1))
                method = scaler.method_
                if method == "median":
                    drawn = scaler.spread_[0] / scaler.spread_multiple
                    collapsed += drawn < 0.3 * truth
                    blown += drawn > 10.0 * truth
            cells.append(f"{collapsed:2d}/{blown:2d}")
        print(f"{name:14s} n={n:6d} eps_y={eps:.3f} {method:6s} at-median={np.mean(ytr == median):.2f}  "
              + "  ".join(cells), flush=True)
    print("columns: collapsed/blown-up draws of", seeds, "per cap", list(caps))


def oracle(variants, epsilon: float, seeds: int, tables) -> None:
    import dperm
    from dperm.preprocessing import target

    private = target.target_range
    chosen = {"variant": "range"}

    def replaced(y, eps, **kwargs):
        mapped, released, event = private(y, eps, **kwargs)  # charged as the default charges it
        variant = chosen["variant"]
        if variant == "range":
            return mapped, released, event
        y = np.asarray(y, dtype=np.float64)
        centred = variant.endswith("c")
        name = variant[:-1] if centred else variant
        low, high = (y.min(), y.max()) if name == "minmax" else np.quantile(y, [float(name[1:]), 1 - float(name[1:])])
        median = float(np.median(y))
        if centred and low < median < high:
            reach = max(median - low, high - median)
            return (median - reach, median + reach), (low, high), event
        return (low, high), (low, high), event

    target.target_range = replaced
    counts = {v: [0, 0] for v in variants}
    for name in tables:
        Xtr, Xte, ytr, yte, task = suite.load(name, 20000)
        reference = suite.sklearn_score(Xtr, Xte, ytr, yte, task)
        scores = []
        for variant in variants:
            chosen["variant"] = variant
            runs = []
            for seed in range(seeds):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = dperm.make_pipeline(dperm.DPLinearRegression(), epsilon=epsilon, delta=1e-5,
                                                random_state=seed).fit(Xtr, ytr)
                runs.append(model.score(Xte, yte))
            score = float(np.mean(runs))
            scores.append(score)
            counts[variant][0] += score > 0
            counts[variant][1] += score >= reference / 2
        print(f"{name:14s} scikit-learn={reference:.3f} "
              + " ".join(f"{v}={s:.3f}" for v, s in zip(variants, scores)), flush=True)
    print("R^2 > 0 / at least half the non-private R^2:", {v: tuple(c) for v, c in counts.items()})


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", choices=["spread", "oracle"])
    parser.add_argument("--caps", type=float, nargs="+", default=[1e9, 8.0, 5.0, 3.0])
    parser.add_argument("--variants", nargs="+", default=["range", "q0.01", "q0.01c", "minmax"])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--tables", nargs="+", default=None)
    args = parser.parse_args(argv)
    tables = args.tables or regression_tables()
    if args.study == "spread":
        spread(args.caps, args.epsilon, args.seeds, tables)
    else:
        oracle(args.variants, args.epsilon, args.seeds, tables)


if __name__ == "__main__":
    main()
