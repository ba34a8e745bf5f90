"""Coverage and width of dperm's private intervals against a known truth (issue 31).

Simulation (the grid is fixed here; ``--grid`` runs a part of it):

- well-specified models, features uniform in the unit ball of R^d (``data_norm=1``,
  the intercept a constant column 1, so the learner's row bound is sqrt 2);
- truth: slopes ``3 * linspace(1, -1, d) / ||linspace(1, -1, d)||`` (norm 3), intercept 0.5;
- linear: ``y = <w, x> + b + N(0, 1)``, declared ``y_bounds = (-8, 8)`` (|<w, x> + b| <=
  3.5, so targets are clipped with probability below 1e-6), ``DPLinearRegression`` (its
  default inference fit; the main grid of docs/results.md ran before the default became the
  scaled Huber fit, and ``--least-squares`` compares the two);
- logistic: ``P(y = 1) = 1 / (1 + exp(-<w, x> - b))``, ``DPLogisticRegression``;
- d in {2, 5, 10}, n in {500, 2000, 10000, 100000}, epsilon in {0.5, 1, 4}, delta 1e-5,
  ``REPS`` = 500 repetitions per cell (each repetition one dataset, fitted at every
  epsilon, the anchor once: statsmodels' OLS / Logit interval on the same data);
- per cell and coefficient: coverage of the nominal 95% interval (refused fits count as
  covering: their interval is the whole line; the refusal rate is reported beside), and
  the mean width over the non-refused fits divided by statsmodels' mean width.

Real data: BIKE (regression, ``dperm.datasets``' prepared rows, targets in [-1, 1]) and
ADULT (binary classification): the private interval against statsmodels' on the same
rows, per coefficient: whether they overlap, and the width ratio; 20 seeds.

Needs statsmodels (the anchor; ``pip install statsmodels``, not a dependency of dperm).
Run: ``python benchmarks/bench_inference.py --out docs/figures/inference.jsonl`` (appends a
line per finished cell; ``--grid small`` n <= 10000; ``--time-budget`` seconds stops
starting cells), then ``--plot docs/figures/inference_coverage.png --table`` from the file.

Studies (docs/inference.md): ``--example`` (the issue's logistic example, per epsilon),
``--multinomial`` (K = 3 against MNLogit), ``--ftest`` (size and power of ``f_test()``),
``--huber`` (``DPHuberRegressor`` against RLM), ``--ftest-simulated EFFECT --sizes
500,2000,10000 --draws K`` (``f_test()``'s Wald form against a simulated null, Alabi and
Vadhan 2022, measured and not shipped, and statsmodels: size at EFFECT 0, power at slopes
EFFECT / sqrt(n)),
``--clipping EPSILON --sizes N`` (the logistic intervals when rows exceed the declared bound),
``--clipping-real`` (ADULT with two declared ranges narrower than the data's),
``--bootstrap N,D,EPS,B`` (least squares: the
parametric bootstrap against the delta method); ``--reps`` sets their repetitions.
``--least-squares --sizes 2000,10000 --dims 2,5 --reps R --seed0 S --out F``: least squares'
two fits (sufficient statistics, scaled Huber) at every epsilon and B / sigma in {4, 8, 16}
(parts with other ``--seed0`` add up); ``--ls-table --out F`` prints the table.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings

import numpy as np

KINDS = ("linear", "logistic")
DIMS = (2, 5, 10)
SIZES = (500, 2000, 10000, 100000)
EPSILONS = (0.5, 1.0, 4.0)
DELTA = 1e-5
REPS = 500
INTERCEPT = 0.5
NOISE = 1.0
Y_BOUND = 8.0


def truth(d: int) -> np.ndarray:
    v = np.linspace(1.0, -1.0, d) if d > 1 else np.ones(1)
    return 3.0 * v / np.linalg.norm(v)


def ball(rng, n: int, d: int) -> np.ndarray:
    z = rng.standard_normal((n, d))
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    return z * rng.uniform(size=(n, 1)) ** (1.0 / d)


def dataset(kind: str, rng, n: int, d: int):
    X = ball(rng, n, d)
    eta = X @ truth(d) + INTERCEPT
    if kind == "linear":
        return X, eta + NOISE * rng.standard_normal(n)
    return X, (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-eta))).astype(np.int64)


def anchor(kind: str, X, y):
    import statsmodels.api as sm

    design = sm.add_constant(X, has_constant="add")
    model = sm.OLS(y, design).fit() if kind == "linear" else sm.Logit(y, design).fit(disp=0, maxiter=100)
    return np.asarray(model.params), np.asarray(model.conf_int(0.05))


def private(kind: str, X, y, epsilon: float, seed: int):
    from dperm import DPLinearRegression, DPLogisticRegression

    if kind == "linear":
        est = DPLinearRegression(epsilon=epsilon, delta=DELTA, y_bounds=(-Y_BOUND, Y_BOUND), inference=True,
                                 random_state=seed)
    else:
        est = DPLogisticRegression(epsilon=epsilon, delta=DELTA, classes=[0, 1], inference=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return est.inference_.params, est.conf_int(0.05), est.inference_.refused


def run_cell(kind: str, n: int, d: int, reps: int, seed0: int = 0) -> list:
    """One (kind, n, d) block: ``reps`` datasets, each fitted at every epsilon."""
    import statsmodels.api  # noqa: F401  (the anchor's; missing, it must fail here, not skip every dataset)

    target = np.concatenate(([INTERCEPT], truth(d)))
    sm_cover, sm_width = [], []
    cover = {e: [] for e in EPSILONS}
    width = {e: [] for e in EPSILONS}
    refused = {e: 0 for e in EPSILONS}
    start = time.time()
    for r in range(reps):
        rng = np.random.default_rng([seed0, n, d, r, KINDS.index(kind)])
        X, y = dataset(kind, rng, n, d)
        try:
            _, ci = anchor(kind, X, y)
        except Exception:  # perfect separation at tiny n: the anchor has no interval
            continue
        sm_cover.append((ci[:, 0] <= target) & (target <= ci[:, 1]))
        sm_width.append(ci[:, 1] - ci[:, 0])
        for e in EPSILONS:
            _, pci, ref = private(kind, X, y, e, seed=int(rng.integers(2**31)))
            cover[e].append((pci[:, 0] <= target) & (target <= pci[:, 1]))
            if ref:
                refused[e] += 1
            else:
                width[e].append(pci[:, 1] - pci[:, 0])
    rows = []
    smw = np.mean(sm_width, axis=0)
    for e in EPSILONS:
        c = np.mean(cover[e], axis=0)
        w = np.mean(width[e], axis=0) / smw if width[e] else np.full_like(smw, np.nan)
        rows.append({"kind": kind, "n": n, "d": d, "epsilon": e, "reps": len(cover[e]),
                     "coverage": c.round(4).tolist(), "min_coverage": float(c.min()),
                     "refused": refused[e] / max(len(cover[e]), 1),
                     "width_ratio": np.round(w, 3).tolist(),
                     "max_width_ratio": float(np.nanmax(w)) if width[e] else None,
                     "statsmodels_coverage": np.mean(sm_cover, axis=0).round(4).tolist(),
                     "seconds": round(time.time() - start, 1)})
    return rows


# Real data: a handful of columns with public bounds (the documented ranges of the UCI
# tables), scaled by a declared PrivateScaler (free), the model through make_pipeline.
REAL = {
    "BIKE": dict(columns={"temp": (0, 1), "hum": (0, 1), "windspeed": (0, 1), "yr": (0, 1), "workingday": (0, 1)},
                 kind="linear", y_bounds=(0, 1000)),
    "ADULT": dict(columns={"age": (17, 90), "education-num": (1, 16), "hours-per-week": (1, 99), "male": (0, 1)},
                  kind="logistic"),
}


def real_frame(name: str):
    from dperm.datasets.uci import load_raw

    X, y = load_raw(name.lower())
    if name == "ADULT":
        X = X.assign(male=(X["sex"].astype(str).str.strip() == "Male").astype(float))
        y = (y.astype(str).str.strip().str.rstrip(".") == ">50K").astype(np.int64)
    spec = REAL[name]
    return X[list(spec["columns"])].astype(float), np.asarray(y)


def real_data(seeds: int = 20, kinds=KINDS, method: str = "auto") -> list:
    """BIKE and ADULT: per coefficient, whether the private interval overlaps statsmodels'
    on the same (declared-scaled) rows, and the width ratio; ``seeds`` private fits per
    epsilon, the budget covering the whole pipeline (the scaler is declared: free)."""
    import statsmodels.api as sm
    from dperm import DPLinearRegression, DPLogisticRegression, make_pipeline
    from dperm.preprocessing import PrivateScaler

    out = []
    for name, spec in REAL.items():
        if spec["kind"] not in kinds:
            continue
        X, y = real_frame(name)
        bounds = list(spec["columns"].values())
        scaled = PrivateScaler(bounds=bounds).fit(X).transform(X)
        design = sm.add_constant(scaled, has_constant="add")
        model = sm.OLS(y, design).fit() if spec["kind"] == "linear" else sm.Logit(y, design).fit(disp=0)
        sm_ci = np.asarray(model.conf_int(0.05))
        for e in EPSILONS:
            overlaps, ratios, refused = [], [], 0
            for s in range(seeds):
                est = (DPLinearRegression(inference={"method": method}, y_bounds=spec["y_bounds"])
                       if spec["kind"] == "linear"
                       else DPLogisticRegression(classes=[0, 1], inference=True))
                pipe = make_pipeline(PrivateScaler(bounds=bounds), est, epsilon=e, delta=DELTA, random_state=s)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pipe.fit(X, y)
                ci = pipe.conf_int(0.05)
                if pipe[-1].inference_.refused:
                    refused += 1
                    continue
                overlaps.append((ci[:, 0] <= sm_ci[:, 1]) & (sm_ci[:, 0] <= ci[:, 1]))
                ratios.append((ci[:, 1] - ci[:, 0]) / (sm_ci[:, 1] - sm_ci[:, 0]))
            row = {"data": name, "n": int(X.shape[0]), "p": int(design.shape[1]), "epsilon": e, "seeds": seeds,
                   "refused": refused / seeds}
            if spec["kind"] == "linear":
                row["method"] = method
            if ratios:
                row.update({"overlap": float(np.mean(overlaps)),
                            "median_width_ratio": float(np.median(ratios)),
                            "width_ratio_per_coef": np.median(ratios, axis=0).round(2).tolist()})
            out.append(row)
            print(json.dumps(row), flush=True)
    return out


# ------------------------------------------------------------------ studies (docs/inference.md)
def example_study(reps: int = 400, n: int = 4000) -> list:
    """The issue's example: logistic, rows in the unit disc, truth (4.8, -3), intercept 0;
    per epsilon the refusal rate, the coverage of the non-refused intervals (per
    coefficient, intercept first), the width against statsmodels' Logit and the mean
    distance of the estimate to the MLE in Logit standard errors."""
    import statsmodels.api as sm
    from dperm import DPLogisticRegression

    target = np.array([0.0, 4.8, -3.0])
    out = []
    for e in EPSILONS:
        covered, widths, sm_widths, dev, refused = [], [], [], [], 0
        for r in range(reps):
            rng = np.random.default_rng([4000, r])
            X = ball(rng, n, 2)
            y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-X @ target[1:]))).astype(np.int64)
            model = sm.Logit(y, sm.add_constant(X)).fit(disp=0)
            est = DPLogisticRegression(epsilon=e, delta=DELTA, classes=[0, 1], inference=True, random_state=r)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y)
            ci = np.asarray(model.conf_int(0.05))
            sm_widths.append(ci[:, 1] - ci[:, 0])
            dev.append((est.inference_.params - model.params) / model.bse)
            if est.inference_.refused:
                refused += 1
                continue
            pci = est.conf_int(0.05)
            covered.append((pci[:, 0] <= target) & (target <= pci[:, 1]))
            widths.append(pci[:, 1] - pci[:, 0])
        row = {"study": "example", "n": n, "epsilon": e, "reps": reps, "refused": refused / reps,
               "coverage_given_interval": np.mean(covered, 0).round(3).tolist() if covered else None,
               "width_ratio": (np.mean(widths, 0) / np.mean(sm_widths, 0)).round(2).tolist() if widths else None,
               "estimate_minus_mle_in_se": np.mean(dev, 0).round(2).tolist()}
        print(json.dumps(row), flush=True)
        out.append(row)
    return out


def multinomial_study(reps: int = 200, n: int = 10000, d: int = 2, epsilon: float = 1.0, K: int = 3) -> dict:
    """K = 3 classes, class 0 the reference; truth: class 1 slopes ``truth(d)``, class 2
    ``2 linspace(-1, 1, d)^2``, intercepts 0.3 and -0.2; against statsmodels' MNLogit."""
    import statsmodels.api as sm
    from dperm import DPLogisticRegression

    cover, sm_cover, widths, sm_widths, refused = [], [], [], [], 0
    for r in range(reps):
        rng = np.random.default_rng([7, n, d, r])
        X = ball(rng, n, d)
        B = np.zeros((d + 1, K))
        B[:d, 1], B[:d, 2], B[d, 1:] = truth(d), 2.0 * np.linspace(-1, 1, d) ** 2, [0.3, -0.2]
        S = np.column_stack([X, np.ones(n)]) @ B
        P = np.exp(S - S.max(1, keepdims=True))
        P /= P.sum(1, keepdims=True)
        y = (rng.uniform(size=(n, 1)) > P.cumsum(1)).sum(1)
        target = np.concatenate([np.r_[B[d, c], B[:d, c]] for c in range(1, K)])
        est = DPLogisticRegression(epsilon=epsilon, delta=DELTA, classes=list(range(K)), inference=True,
                                   random_state=r)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        sci = np.asarray(sm.MNLogit(y, sm.add_constant(X)).fit(disp=0).conf_int()).reshape(-1, 2)
        ci = est.conf_int(0.05)
        cover.append((ci[:, 0] <= target) & (target <= ci[:, 1]))
        sm_cover.append((sci[:, 0] <= target) & (target <= sci[:, 1]))
        sm_widths.append(sci[:, 1] - sci[:, 0])
        if est.inference_.refused:
            refused += 1
        else:
            widths.append(ci[:, 1] - ci[:, 0])
    row = {"study": "multinomial", "n": n, "d": d, "K": K, "epsilon": epsilon, "reps": reps,
           "refused": refused / reps, "coverage": np.mean(cover, 0).round(3).tolist(),
           "statsmodels_coverage": np.mean(sm_cover, 0).round(3).tolist(),
           "width_ratio": (np.mean(widths, 0) / np.mean(sm_widths, 0)).round(2).tolist() if widths else None}
    print(json.dumps(row), flush=True)
    return row


def bootstrap_study(n: int, d: int, epsilon: float, reps: int, y_bound: float, draws: int = 400) -> dict:
    """Least squares: the parametric bootstrap on the released sufficient statistics
    (Ferrando, Wang, Sheldon 2022) against the delta-method interval, on the same fits.
    Given the released Gram ``H~`` (caught from the fit: a post-processing), the estimate
    ``w`` and ``s^2``: draw ``X^T y* / n = H~ w + N(0, s^2 H~ / n)``, add the mechanism's
    noise to it and to ``H~`` (PSD-projected), solve; the interval is ``w -+ 1.96 sd``
    of the draws ("boot") or the basic bootstrap ``2 w - q`` ("basic"). Slopes only;
    ``y_bound / NOISE`` is the B / sigma the width depends on."""
    import statsmodels.api as sm
    from dperm import DPLinearRegression
    import dperm.inference.mechanism as mech
    from dperm.privacy.mechanisms import single_release

    caught = {}
    real = mech._covariances

    def catching(H, *args):
        caught["H"] = H.copy()
        return real(H, *args)

    mech._covariances = catching
    keys = ("delta", "boot", "basic")
    cover = {k: [] for k in keys}
    width = {k: [] for k in keys}
    sm_width, refused = [], 0
    w_true = truth(d)
    try:
        for r in range(reps):
            rng = np.random.default_rng([11, n, d, r])
            X = ball(rng, n, d)
            y = X @ w_true + INTERCEPT + NOISE * rng.standard_normal(n)
            est = DPLinearRegression(epsilon=epsilon, delta=DELTA, y_bounds=(-y_bound, y_bound),
                                     inference={"method": "sufficient_statistics"},
                                     random_state=r)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y)
            smci = np.asarray(sm.OLS(y, sm.add_constant(X)).fit().conf_int())[1:]
            sm_width.append(smci[:, 1] - smci[:, 0])
            if est.inference_.refused:
                refused += 1
                continue
            fit = est.fits_[0]
            H, w, p = caught["H"], fit.coef, d + 1
            grad, hess = (single_release(e) for e in fit.event.events[:2])
            sigma_g = grad.sigma * 2.0 * math.sqrt(2.0) / n  # the gradient's unit at w = 0: 2 R B / n, R = sqrt 2, B = 1
            s2 = fit.info["residual_variance"]
            L = np.linalg.cholesky(H + 1e-12 * np.eye(p))
            iu = np.triu_indices(p, 1)
            draw = np.random.default_rng([99, r])
            thetas = np.empty((draws, p))
            for b in range(draws):
                E = np.diag(draw.standard_normal(p) * hess.sigma)
                E[iu] = draw.standard_normal(len(iu[0])) * hess.sigma / math.sqrt(2.0)
                E[(iu[1], iu[0])] = E[iu]
                xy = H @ w + math.sqrt(s2 / n) * (L @ draw.standard_normal(p))
                thetas[b] = np.linalg.lstsq(mech._psd(H + E), xy + sigma_g * draw.standard_normal(p), rcond=None)[0]
            scale, centre = est._inference_scale, est.coef_.ravel()
            sd = thetas[:, :d].std(0) * scale
            lo, hi = np.quantile(thetas[:, :d], [0.025, 0.975], axis=0) * scale
            for key, c in (("delta", est.conf_int(0.05)[1:]),
                           ("boot", np.column_stack([centre - 1.96 * sd, centre + 1.96 * sd])),
                           ("basic", np.column_stack([2 * centre - hi, 2 * centre - lo]))):
                cover[key].append((c[:, 0] <= w_true) & (w_true <= c[:, 1]))
                width[key].append(c[:, 1] - c[:, 0])
    finally:
        mech._covariances = real
    smw = np.mean(sm_width, 0)
    row = {"study": "bootstrap", "n": n, "d": d, "epsilon": epsilon, "B_over_sigma": y_bound / NOISE, "reps": reps,
           "refused": refused / reps}
    for key in keys:
        if cover[key]:
            row[key] = {"coverage_min": round(float(np.mean(cover[key], 0).min()), 3),
                        "coverage_mean": round(float(np.mean(cover[key])), 3),
                        "width_ratio_max": round(float((np.mean(width[key], 0) / smw).max()), 2)}
    print(json.dumps(row), flush=True)
    return row


def ftest_study(reps: int = 300, n: int = 10000, d: int = 3, epsilon: float = 1.0,
                effects=(0.0, 0.03, 0.06, 0.1)) -> list:
    """The overall F test of ``DPLinearRegression.f_test()`` (H0: every slope 0) at level
    5%: the rejection rate per slope size (each slope ``effect``), against statsmodels'
    OLS F test on the same data (size at effect 0, power above)."""
    import statsmodels.api as sm
    from dperm import DPLinearRegression

    out = []
    for effect in effects:
        private, anchor_rate = 0, 0
        for r in range(reps):
            rng = np.random.default_rng([41, n, d, r])
            X = ball(rng, n, d)
            y = X @ np.full(d, effect) + INTERCEPT + NOISE * rng.standard_normal(n)
            reg = DPLinearRegression(epsilon=epsilon, delta=DELTA, y_bounds=(-Y_BOUND, Y_BOUND), inference=True,
                                     random_state=r)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                reg.fit(X, y)
            private += reg.f_test()["p_value"] < 0.05
            anchor_rate += sm.OLS(y, sm.add_constant(X)).fit().f_pvalue < 0.05
        row = {"study": "ftest", "n": n, "d": d, "epsilon": epsilon, "effect": effect, "reps": reps,
               "rejection_rate": private / reps, "statsmodels_rejection_rate": anchor_rate / reps}
        print(json.dumps(row), flush=True)
        out.append(row)
    return out


def _simulated_design(hessian: np.ndarray, scaling: float):
    """``(G, mean, root)``: the design's second moments G from the released Hessian of the
    last Huber step (normalized so that the intercept entry is ``scaling^2``), the
    features' mean and a square root of their covariance."""
    H = 0.5 * (hessian + hessian.T)
    G = H * (scaling * scaling / H[-1, -1])
    mean = G[:-1, -1] / scaling
    cov = G[:-1, :-1] - np.outer(mean, mean)
    values, vectors = np.linalg.eigh(0.5 * (cov + cov.T))
    return G, mean, vectors * np.sqrt(np.clip(values, 0.0, None))


def _null_model(w: np.ndarray, G: np.ndarray, rows: list, sigma: float):
    """``(w0, sigma0)``: the estimate projected onto H0 (the tested coordinates 0) in the
    design's metric G (restricted least squares), and the null model's residual scale."""
    tested = np.zeros(w.shape[0], dtype=bool)
    tested[rows] = True
    free = ~tested
    w0 = np.where(tested, 0.0, w)
    bT = w[tested]
    GFT, GFF = G[np.ix_(free, tested)], G[np.ix_(free, free)]
    w0[free] += np.linalg.lstsq(GFF, GFT @ bT, rcond=None)[0]
    explained = float(bT @ (G[np.ix_(tested, tested)] - GFT.T @ np.linalg.lstsq(GFF, GFT, rcond=None)[0]) @ bT)
    return w0, math.sqrt(sigma * sigma + max(explained, 0.0))


def simulated_null_p_value(fit, hessian, rows: list, observed: float, n: int, draws: int, seed: int,
                           data_norm: float = math.sqrt(2.0), label_bound: float = 1.0) -> tuple:
    """Alabi and Vadhan's (2022) Monte Carlo test for the scaled Huber fit's Wald statistic:
    datasets drawn under H0 from a parametric model fitted to the released fit only (rows
    normal with the moments of the last released Hessian, clipped to the bound as the
    mechanism clips; targets the estimate projected onto H0 plus ``N(0, sigma0^2)``,
    ``sigma0^2`` the released residual scale's square plus what the tested columns
    explained), each run through the same mechanism (fresh noise, no accountant) and its
    Wald statistic on the same rows. Refused draws are left out (the observed fit was not
    refused); fewer than 19 left: p-value 1. Returns ``(p_value, draws_refused)``. A
    post-processing of ``fit`` (coef, threshold, tuning, spent budget) and the released
    Hessian; problem coordinates, intercept column last (scaling 1)."""
    from dperm.inference.scaled import scaled_huber_inference
    from dperm.privacy.mechanisms import charging
    from dperm.problem import ERMProblem

    rng = np.random.default_rng(seed)
    w = np.asarray(fit.coef, dtype=np.float64)
    G, mean, root = _simulated_design(np.asarray(hessian), 1.0)
    w0, sigma0 = _null_model(w, G, rows, float(fit.info["threshold"]) / float(fit.hyperparameters["tuning"]))
    exceed = refused = 0
    for _ in range(draws):
        Z = mean + rng.standard_normal((n, mean.shape[0])) @ root.T
        y = np.clip(Z @ w0[:-1] + w0[-1] + sigma0 * rng.standard_normal(n), -label_bound, label_bound)
        problem = ERMProblem(Z, y, "squared", data_norm=data_norm, label_bound=label_bound, intercept_scaling=1.0)
        with charging(None), warnings.catch_warnings():  # a simulation: nothing released, nothing charged
            warnings.simplefilter("ignore")
            sim = scaled_huber_inference(problem, fit.privacy_spent, rng=rng)
        if sim.info["refused"]:
            refused += 1
            continue
        b = np.asarray(sim.coef)[rows]
        C = np.asarray(sim.info["covariance"])[np.ix_(rows, rows)]
        exceed += float(b @ np.linalg.lstsq(C, b, rcond=None)[0]) >= observed
    accepted = draws - refused
    return ((1.0 + exceed) / (accepted + 1.0) if accepted >= 19 else 1.0), refused


def ftest_simulated_study(reps: int = 200, sizes=(500, 2000, 10000), d: int = 3, epsilons=(0.5, 1.0),
                          effect_scale: float = 0.0, draws: int = 99, seed0: int = 0) -> list:
    """``f_test()`` (H0: every slope 0, level 5%) against chi-square(q) (the shipped Wald
    form) and against its law under H0 simulated from the released fit
    (:func:`simulated_null_p_value`, Alabi and Vadhan 2022, ``draws`` datasets), on the same
    fits, and statsmodels' OLS F test on the same data. Every slope ``effect_scale /
    sqrt(n)`` (0: the size). A refused fit gives p-value 1 under both. The released
    Hessian of the last Huber step is caught from the fit (it is not kept on the model)."""
    import statsmodels.api as sm
    from dperm import DPLinearRegression
    import dperm.inference.mechanism as mech

    caught = {}
    real = mech._covariances

    def catching(H, *args):
        caught["H"] = H.copy()
        return real(H, *args)

    out = []
    mech._covariances = catching
    try:
        for n in sizes:
            effect = effect_scale / math.sqrt(n)
            pv = {e: {"wald": [], "simulated": []} for e in epsilons}
            refused = {e: 0 for e in epsilons}
            draws_refused = {e: 0 for e in epsilons}
            anchor_p = []
            start = time.time()
            for r in range(reps):
                rng = np.random.default_rng([43, seed0, n, d, r, int(round(effect_scale * 1000))])
                X = ball(rng, n, d)
                y = X @ np.full(d, effect) + INTERCEPT + NOISE * rng.standard_normal(n)
                anchor_p.append(sm.OLS(y, sm.add_constant(X)).fit().f_pvalue)
                for e in epsilons:
                    reg = DPLinearRegression(epsilon=e, delta=DELTA, y_bounds=(-Y_BOUND, Y_BOUND), inference=True,
                                             random_state=int(rng.integers(2**31)))
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        reg.fit(X, y)
                    hessian = caught["H"]
                    wald = reg.f_test()
                    refused[e] += reg.inference_.refused
                    pv[e]["wald"].append(wald["p_value"])
                    seed = int(rng.integers(2**31))
                    if wald["refused"]:
                        pv[e]["simulated"].append(1.0)
                        continue
                    p, k = simulated_null_p_value(reg.fits_[0], hessian, list(range(d)), wald["wald"], n, draws, seed)
                    pv[e]["simulated"].append(p)
                    draws_refused[e] += k
            for e in epsilons:
                row = {"study": "ftest_simulated", "n": n, "d": d, "epsilon": e, "effect": effect, "reps": reps,
                       "draws": draws, "refused": refused[e] / reps,
                       "draws_refused": draws_refused[e] / (reps * draws),
                       "wald_rejects": float(np.mean(np.array(pv[e]["wald"]) < 0.05)),
                       "simulated_rejects": float(np.mean(np.array(pv[e]["simulated"]) <= 0.05)),
                       "statsmodels_rejects": float(np.mean(np.array(anchor_p) < 0.05)),
                       "wald_p": pv[e]["wald"], "simulated_p": pv[e]["simulated"],
                       "seconds": round(time.time() - start, 1)}
                print(json.dumps({k: v for k, v in row.items() if not k.endswith("_p")}), flush=True)
                out.append(row)
    finally:
        mech._covariances = real
    return out


def clipping_study(reps: int = 200, n: int = 10000, d: int = 2, epsilon: float = 1.0,
                   fractions=(0.1, 0.3)) -> list:
    """The logistic intervals where the declared row bound does not hold: the grid's
    logistic model with rows ``a x`` (x uniform in the unit ball, ``a = (1 - f)^(-1/d)``, so
    a share f of the rows has norm above 1; the truth the grid's coefficients on the
    scaled rows, ``P(y = 1) = sigmoid(<w, a x> + b)``). Per share f, on the same datasets:
    ``DPLogisticRegression(inference=True)`` with the default ``data_norm=1`` (the rows
    beyond it scaled down: the clipping bites), the same with ``data_norm=a`` (a bound that
    holds), and statsmodels' Logit on the rows as they are and on the clipped rows (the
    model the clipped fit estimates). Coverage of the truth (min / mean over coefficients),
    refusals, width against statsmodels' (max over coefficients)."""
    import statsmodels.api as sm
    from dperm import DPLogisticRegression

    target = np.concatenate(([INTERCEPT], truth(d)))
    out = []
    for f in fractions:
        a = (1.0 - f) ** (-1.0 / d)
        cover = {k: [] for k in ("clipped", "holds", "statsmodels", "statsmodels_clipped")}
        width = {k: [] for k in cover}
        refused = {"clipped": 0, "holds": 0}
        beyond = []
        for r in range(reps):
            rng = np.random.default_rng([47, n, d, r, int(f * 100)])
            X = a * ball(rng, n, d)
            norms = np.linalg.norm(X, axis=1)
            beyond.append(float(np.mean(norms > 1.0)))
            y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-(X @ truth(d) + INTERCEPT)))).astype(np.int64)
            clipped = X / np.maximum(norms, 1.0)[:, None]
            for key, rows in (("statsmodels", X), ("statsmodels_clipped", clipped)):
                ci = np.asarray(sm.Logit(y, sm.add_constant(rows)).fit(disp=0, maxiter=100).conf_int(0.05))
                cover[key].append((ci[:, 0] <= target) & (target <= ci[:, 1]))
                width[key].append(ci[:, 1] - ci[:, 0])
            seed = int(rng.integers(2**31))
            for key, norm in (("clipped", 1.0), ("holds", a)):
                est = DPLogisticRegression(epsilon=epsilon, delta=DELTA, classes=[0, 1], data_norm=norm,
                                           inference=True, random_state=seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(X, y)
                ci = est.conf_int(0.05)
                cover[key].append((ci[:, 0] <= target) & (target <= ci[:, 1]))
                if est.inference_.refused:
                    refused[key] += 1
                else:
                    width[key].append(ci[:, 1] - ci[:, 0])
        smw = np.mean(width["statsmodels"], 0)
        row = {"study": "clipping", "n": n, "d": d, "epsilon": epsilon,
               "share_beyond": round(float(np.mean(beyond)), 3), "scale": round(a, 4), "reps": reps}
        for key in cover:
            c = np.mean(cover[key], 0)
            row[key] = {"coverage_min": round(float(c.min()), 3), "coverage_mean": round(float(c.mean()), 3),
                        "coverage": np.round(c, 3).tolist(),
                        "width_ratio_max": round(float((np.mean(width[key], 0) / smw).max()), 2)
                        if width[key] else None}
            if key in refused:
                row[key]["refused"] = refused[key] / reps
        print(json.dumps(row), flush=True)
        out.append(row)
    return out


def clipping_real_study(seeds: int = 20, epsilons=(1.0, 4.0)) -> list:
    """ADULT's logistic model (the ``--real`` columns) with two declared ranges narrower than
    the data's (age 17-60, hours-per-week 1-50; the documented ones 17-90 and 1-99), so that
    the declared ``PrivateScaler`` clamps those columns: the private interval (through
    ``make_pipeline``) against statsmodels' Logit on the same linear map *unclamped* (the
    coefficients the user means), per coefficient: whether the private interval holds
    statsmodels' estimate, and the ratio of the estimates; ``seeds`` fits per epsilon."""
    import statsmodels.api as sm
    from dperm import DPLogisticRegression, make_pipeline
    from dperm.preprocessing import PrivateScaler

    X, y = real_frame("ADULT")
    columns = dict(REAL["ADULT"]["columns"], age=(17, 60), **{"hours-per-week": (1, 50)})
    bounds = list(columns.values())
    lo, hi = np.array([b[0] for b in bounds], float), np.array([b[1] for b in bounds], float)
    values = X.to_numpy(dtype=float)
    beyond = ((values < lo) | (values > hi)).mean(axis=0)
    linear = 2.0 * (values - lo) / (hi - lo) - 1.0  # the declared map, not clamped
    clamped = PrivateScaler(bounds=bounds).fit(X).transform(X)
    anchor_fit = sm.Logit(y, sm.add_constant(linear, has_constant="add")).fit(disp=0)
    clamped_fit = sm.Logit(y, sm.add_constant(np.asarray(clamped), has_constant="add")).fit(disp=0)
    target = np.asarray(anchor_fit.params)
    out = []
    for e in epsilons:
        holds, ratios, refused = [], [], 0
        for s in range(seeds):
            pipe = make_pipeline(PrivateScaler(bounds=bounds), DPLogisticRegression(classes=[0, 1], inference=True),
                                 epsilon=e, delta=DELTA, random_state=s)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pipe.fit(X, y)
            if pipe[-1].inference_.refused:
                refused += 1
                continue
            ci = pipe.conf_int(0.05)
            holds.append((ci[:, 0] <= target) & (target <= ci[:, 1]))
            ratios.append(pipe[-1].inference_.params / target)
        row = {"study": "clipping_real", "data": "ADULT", "epsilon": e, "seeds": seeds, "refused": refused / seeds,
               "columns": list(columns), "share_clamped": np.round(beyond, 3).tolist(),
               "statsmodels_unclamped": np.round(target, 3).tolist(),
               "statsmodels_clamped": np.round(np.asarray(clamped_fit.params), 3).tolist()}
        if holds:
            row.update({"holds_target": np.round(np.mean(holds, 0), 2).tolist(),
                        "estimate_ratio": np.round(np.median(ratios, 0), 3).tolist()})
        print(json.dumps(row), flush=True)
        out.append(row)
    return out


def huber_study(reps: int = 150, n: int = 10000, d: int = 2, epsilons=(1.0, 4.0)) -> list:
    """``DPHuberRegressor(inference=True)`` on the linear model of the grid (N(0, 1) errors,
    ``y_bounds = (-8, 8)``, threshold 1.345 in the errors' units: 1.345 / 8 in the model's),
    against statsmodels' ``RLM(HuberT(1.345))``; symmetric errors, so the truth is the
    Huber model's coefficients too."""
    import statsmodels.api as sm
    from dperm import DPHuberRegressor

    out = []
    for e in epsilons:
        cover, widths, sm_widths, refused = [], [], [], 0
        for r in range(reps):
            rng = np.random.default_rng([13, n, d, r])
            X = ball(rng, n, d)
            target = np.r_[INTERCEPT, truth(d)]
            y = X @ truth(d) + INTERCEPT + NOISE * rng.standard_normal(n)
            est = DPHuberRegressor(epsilon=e, delta=DELTA, y_bounds=(-Y_BOUND, Y_BOUND), threshold=1.345 / Y_BOUND,
                                   inference=True, random_state=r)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y)
            sci = np.asarray(sm.RLM(y, sm.add_constant(X), M=sm.robust.norms.HuberT(1.345)).fit().conf_int())
            sm_widths.append(sci[:, 1] - sci[:, 0])
            ci = est.conf_int(0.05)
            cover.append((ci[:, 0] <= target) & (target <= ci[:, 1]))
            if est.inference_.refused:
                refused += 1
            else:
                widths.append(ci[:, 1] - ci[:, 0])
        row = {"study": "huber", "n": n, "d": d, "epsilon": e, "reps": reps, "refused": refused / reps,
               "coverage": np.mean(cover, 0).round(3).tolist(),
               "width_ratio": (np.mean(widths, 0) / np.mean(sm_widths, 0)).round(2).tolist() if widths else None}
        print(json.dumps(row), flush=True)
        out.append(row)
    return out


# ------------------------------------------------------------------ least squares: the two fits (issue 31)
LS_SIZES = (2000, 10000, 100000)
LS_BOUNDS = (4.0, 8.0, 16.0)  # B / sigma: the declared |y| bound over the errors' std (NOISE = 1)
LS_METHODS = ("sufficient_statistics", "scaled_huber")


def least_squares_block(n: int, d: int, reps: int, seed0: int = 0) -> list:
    """The grid's linear model at (n, d): ``reps`` datasets, each fitted by both least-squares
    inference fits at every epsilon and every declared ``y_bounds = (-B, B)``, B in
    ``LS_BOUNDS``; statsmodels' OLS on the same data is the anchor. Rows hold sums (covering
    counts per coefficient, width sums over the non-refused fits), so that blocks run in
    parts (``seed0``) add up: :func:`least_squares_table`."""
    import statsmodels.api as sm
    from dperm import DPLinearRegression

    target = np.concatenate(([INTERCEPT], truth(d)))
    keys = [(e, b, m) for e in EPSILONS for b in LS_BOUNDS for m in LS_METHODS]
    hits = {k: np.zeros(d + 1) for k in keys}
    wsum = {k: np.zeros(d + 1) for k in keys}
    fitted = {k: 0 for k in keys}
    refused = {k: 0 for k in keys}
    sm_hits, sm_wsum = np.zeros(d + 1), np.zeros(d + 1)
    start = time.time()
    for r in range(reps):
        rng = np.random.default_rng([seed0, 17, n, d, r])
        X, y = dataset("linear", rng, n, d)
        ci = np.asarray(sm.OLS(y, sm.add_constant(X, has_constant="add")).fit().conf_int(0.05))
        sm_hits += (ci[:, 0] <= target) & (target <= ci[:, 1])
        sm_wsum += ci[:, 1] - ci[:, 0]
        for key in keys:
            e, b, m = key
            est = DPLinearRegression(epsilon=e, delta=DELTA, y_bounds=(-b, b), inference={"method": m},
                                     random_state=int(rng.integers(2**31)))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y)
            pci = est.conf_int(0.05)
            hits[key] += (pci[:, 0] <= target) & (target <= pci[:, 1])
            if est.inference_.refused:
                refused[key] += 1
            else:
                fitted[key] += 1
                wsum[key] += pci[:, 1] - pci[:, 0]
    seconds = round(time.time() - start, 1)
    return [{"study": "least_squares", "n": n, "d": d, "epsilon": e, "B_over_sigma": b, "method": m,
             "seed0": seed0, "reps": reps, "hits": hits[(e, b, m)].tolist(), "width_sum": wsum[(e, b, m)].tolist(),
             "fitted": fitted[(e, b, m)], "refused": refused[(e, b, m)], "sm_hits": sm_hits.tolist(),
             "sm_width_sum": sm_wsum.tolist(), "seconds": seconds} for e, b, m in keys]


def least_squares_cells(rows: list) -> dict:
    """Parts of the same cell added up: {(n, d, epsilon, B, method): totals}."""
    cells = {}
    for r in rows:
        if r.get("study") != "least_squares":
            continue
        key = (r["n"], r["d"], r["epsilon"], r["B_over_sigma"], r["method"])
        c = cells.setdefault(key, {"reps": 0, "hits": 0.0, "width_sum": 0.0, "fitted": 0, "refused": 0,
                                   "sm_hits": 0.0, "sm_width_sum": 0.0})
        c["reps"] += r["reps"]
        c["fitted"] += r["fitted"]
        c["refused"] += r["refused"]
        for name in ("hits", "width_sum", "sm_hits", "sm_width_sum"):
            c[name] = c[name] + np.asarray(r[name])
    return cells


def least_squares_table(rows: list) -> str:
    """Per cell: coverage min / mean over the coefficients and width (max over coefficients,
    against OLS's mean width on the same data) of each fit, side by side."""
    cells = least_squares_cells(rows)
    lines = ["| n | d | epsilon | B / sigma | reps | sufficient statistics: coverage min / mean, refused, width | "
             "scaled Huber: coverage min / mean, refused, width | OLS coverage min |",
             "|---|---|---|---|---|---|---|---|"]
    for n, d, e, b in sorted({k[:4] for k in cells}):
        parts = []
        for m in LS_METHODS:
            c = cells.get((n, d, e, b, m))
            if c is None:
                parts.append("-")
                continue
            cov = c["hits"] / c["reps"]
            width = "-" if not c["fitted"] else \
                f"{float(np.max((c['width_sum'] / c['fitted']) / (c['sm_width_sum'] / c['reps']))):.2f}x"
            parts.append(f"{cov.min():.3f} / {cov.mean():.3f}, {c['refused'] / c['reps']:.2f}, {width}")
        c = cells[(n, d, e, b, LS_METHODS[0])]
        lines.append(f"| {n} | {d} | {e:g} | {b:g} | {c['reps']} | {parts[0]} | {parts[1]} | "
                     f"{float(np.min(c['sm_hits'] / c['reps'])):.3f} |")
    return "\n".join(lines)


def plot(rows: list, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(EPSILONS), figsize=(4.2 * len(EPSILONS), 3.6), sharey=True)
    for ax, e in zip(axes, EPSILONS):
        for kind, marker in zip(KINDS, ("o", "s")):
            for d, style in zip(DIMS, ("-", "--", ":")):
                cell = sorted((r for r in rows if r["kind"] == kind and r["d"] == d and r["epsilon"] == e),
                              key=lambda r: r["n"])
                if cell:  # mean over the coefficients; a hollow marker where most fits were refused
                    line, = ax.plot([r["n"] for r in cell], [float(np.mean(r["coverage"])) for r in cell], style,
                                    marker=marker, label=f"{kind} d={d}")
                    refused = [r for r in cell if r["refused"] > 0.5]
                    ax.plot([r["n"] for r in refused], [1.0] * len(refused), marker, mfc="white",
                            color=line.get_color(), ms=9)
        ax.axhline(0.95, color="k", lw=0.8)
        ax.axhline(0.93, color="r", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_title(f"epsilon = {e:g}")
        ax.set_xlabel("n")
        ax.set_ylim(0.85, 1.005)
    axes[0].set_ylabel("coverage (mean over coefficients)")
    axes[-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def table(rows: list) -> str:
    lines = ["| kind | d | n | epsilon | reps | coverage min / mean over coefs | refused | width / statsmodels (max) | "
             "statsmodels coverage min / mean |", "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["kind"], r["d"], r["n"], r["epsilon"])):
        wr = "-" if r["max_width_ratio"] is None else f"{r['max_width_ratio']:.2f}"
        mark = " (previous design)" if r.get("design") == "previous" else ""
        lines.append(f"| {r['kind']} | {r['d']} | {r['n']} | {r['epsilon']:g} | {r['reps']}{mark} | "
                     f"{r['min_coverage']:.3f} / {np.mean(r['coverage']):.3f} | {r['refused']:.2f} | {wr} | "
                     f"{min(r['statsmodels_coverage']):.3f} / {np.mean(r['statsmodels_coverage']):.3f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="append a JSON line per finished cell")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--dims", default=",".join(map(str, DIMS)))
    parser.add_argument("--reps", type=int, default=REPS)
    parser.add_argument("--time-budget", type=float, default=math.inf, help="seconds; no new cell after it")
    parser.add_argument("--real", action="store_true", help="the BIKE / ADULT comparison")
    parser.add_argument("--plot", default=None, help="draw the coverage figure from --out")
    parser.add_argument("--table", action="store_true", help="print the markdown table from --out")
    parser.add_argument("--example", action="store_true", help="the issue's logistic example (docs/inference.md)")
    parser.add_argument("--multinomial", action="store_true", help="the multinomial study (docs/inference.md)")
    parser.add_argument("--ftest", action="store_true", help="size and power of f_test() (docs/inference.md)")
    parser.add_argument("--huber", action="store_true", help="DPHuberRegressor against RLM (docs/inference.md)")
    parser.add_argument("--ftest-simulated", default=None, metavar="EFFECT",
                        help="f_test()'s Wald and simulated-null forms against statsmodels at --sizes "
                             "(d = 3, epsilon 0.5 and 1), every slope EFFECT / sqrt(n) (0: the size); --draws")
    parser.add_argument("--clipping", type=float, default=None, metavar="EPSILON",
                        help="logistic intervals at EPSILON when 10%% / 30%% of the rows exceed the declared "
                             "bound, n the first of --sizes (docs/inference.md)")
    parser.add_argument("--clipping-real", action="store_true",
                        help="ADULT with two declared ranges narrower than the data's (docs/inference.md)")
    parser.add_argument("--draws", type=int, default=99, help="simulated datasets per test (--ftest-simulated)")
    parser.add_argument("--bootstrap", default=None, metavar="N,D,EPS,B",
                        help="least squares: parametric bootstrap against the delta method at one cell, "
                             "B the declared |y| bound (docs/inference.md)")
    parser.add_argument("--least-squares", action="store_true",
                        help="least squares: the sufficient-statistics and the scaled Huber fits on the grid "
                             "(--sizes, --dims; B / sigma in 4, 8, 16; docs/inference.md)")
    parser.add_argument("--method", default="auto", help="least squares' inference method for --real")
    parser.add_argument("--seed0", type=int, default=0, help="the datasets' seed offset (parts of a cell add up)")
    parser.add_argument("--ls-table", action="store_true", help="print the least-squares table from --out")
    args = parser.parse_args(argv)
    if args.ls_table:
        print(least_squares_table([json.loads(line) for line in open(args.out)]))
        return 0
    if args.least_squares:
        for n in map(int, args.sizes.split(",")):
            for d in map(int, args.dims.split(",")):
                for row in least_squares_block(n, d, args.reps, args.seed0):
                    if args.out:
                        with open(args.out, "a") as fh:
                            fh.write(json.dumps(row) + "\n")
                print(f"least squares n={n} d={d} reps={args.reps} seed0={args.seed0} done", flush=True)
        return 0
    if args.ftest_simulated is not None:
        rows = ftest_simulated_study(args.reps, tuple(map(int, args.sizes.split(","))),
                                     effect_scale=float(args.ftest_simulated), draws=args.draws, seed0=args.seed0)
        if args.out:
            with open(args.out, "a") as fh:
                for row in rows:
                    fh.write(json.dumps(row) + "\n")
        return 0
    if args.clipping_real:
        rows = clipping_real_study()
        if args.out:
            with open(args.out, "a") as fh:
                for row in rows:
                    fh.write(json.dumps(row) + "\n")
        return 0
    if args.clipping is not None:
        rows = clipping_study(args.reps, n=int(args.sizes.split(",")[0]), epsilon=args.clipping)
        if args.out:
            with open(args.out, "a") as fh:
                for row in rows:
                    fh.write(json.dumps(row) + "\n")
        return 0
    if args.example or args.multinomial or args.bootstrap or args.ftest or args.huber:
        rows = ([*example_study(args.reps)] if args.example else []) + \
               ([multinomial_study(args.reps)] if args.multinomial else []) + \
               ([*ftest_study(args.reps)] if args.ftest else []) + \
               ([*huber_study(args.reps)] if args.huber else [])
        if args.bootstrap:
            n, d, e, b = args.bootstrap.split(",")
            rows.append(bootstrap_study(int(float(n)), int(d), float(e), args.reps, float(b)))
        if args.out:
            with open(args.out, "a") as fh:
                for row in rows:
                    fh.write(json.dumps(row) + "\n")
        return 0
    if args.plot or args.table:
        rows = [json.loads(line) for line in open(args.out)]
        if args.plot:
            plot(rows, args.plot)
        if args.table:
            print(table(rows))
        return 0
    if args.real:
        rows = real_data(kinds=args.kinds.split(","), method=args.method)
        if args.out:
            with open(args.out, "a") as fh:
                for row in rows:
                    fh.write(json.dumps(row) + "\n")
        return 0
    start = time.time()
    for n in map(int, args.sizes.split(",")):
        for d in map(int, args.dims.split(",")):
            for kind in args.kinds.split(","):
                if time.time() - start > args.time_budget:
                    print(f"time budget reached; not started: {kind} n={n} d={d}", file=sys.stderr)
                    continue
                for row in run_cell(kind, n, d, args.reps):
                    print(json.dumps(row), flush=True)
                    if args.out:
                        with open(args.out, "a") as fh:
                            fh.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
