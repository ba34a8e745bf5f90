"""Record seeded outputs of a broad set of fits, or compare them with a recording.

``python tools/seeded_outputs.py record FILE.npz`` runs, with fixed seeds: every algorithm
of ``dperm.algorithms.list()`` on a small problem it accepts (the first of a few
configurations whose assumptions it meets), ``algorithm="auto"``, each estimator, the
Dask route of the default estimator, ``make_pipeline`` on a raw frame (classifier and
regressor), and the command line (``dperm fit`` then ``dperm predict``); it stores every
coefficient, prediction, spent budget and model file. ``python tools/seeded_outputs.py
compare FILE.npz`` runs the same fits again and reports every entry that is not
bit-for-bit equal (exit status 1 if any). Used to check that a refactoring changes no
behaviour.

The numba kernels (dp_sgd, dp_svrg, dp_svrg_pp, rrpsgd) give results that differ in the
last bits between the process that compiles a kernel and the processes that load it from
numba's disk cache (measured on 33f50da as on later trees: the fresh compile's dp_sgd
coefficients differ from the cached one's by an ulp or so). So both recording and
comparing first compile every kernel in a child process (``dperm._warmup.warm_all``) and
then run the fits on the cached kernels: the same state each time.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
import warnings

import numpy as np
import pandas as pd

CONFIGS = [  # (loss, regularizer, constraint, delta), tried in order
    ("logistic", ("l2", 0.1), None, 1e-5),
    ("logistic", ("l2", 0.1), None, 0.0),
    ("logistic", ("l2", 0.1), ("l2_ball", 2.0), 1e-5),
    ("logistic", None, ("l2_ball", 2.0), 1e-5),
    ("logistic", None, ("l2_ball", 2.0), 0.0),
    ("logistic", None, ("l1_ball", 2.0), 1e-5),
    ("logistic", None, None, 1e-5),
    ("squared", ("l2", 0.1), None, 1e-5),
    ("squared", None, None, 1e-5),
    ("squared", None, ("l2_ball", 2.0), 1e-5),
]


def _data(n=400, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= 1.0 / np.linalg.norm(X, axis=1, keepdims=True) * rng.uniform(0.3, 1.0, size=(n, 1))
    w = rng.normal(size=d) * 3
    y_class = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    y_reg = np.clip(X @ w / 4 + 0.1 * rng.normal(size=n), -1, 1)
    return X, y_class, y_reg


def _frame(n=1500, seed=1):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "age": rng.integers(18, 90, n).astype(np.int64),
        "income": np.where(rng.random(n) < 0.05, np.nan, rng.lognormal(10, 1, n)),
        "city": rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2]),
    })
    y_class = np.where(X["age"] + rng.normal(0, 10, n) > 50, "yes", "no")
    y_reg = X["age"].to_numpy() * 0.5 + rng.normal(0, 5, n)
    return X, y_class, y_reg


def _budget(fit) -> list[float]:
    spent = getattr(fit, "privacy_spent", None) or getattr(fit, "privacy_spent_", None)
    return [spent.epsilon, spent.delta] if spent is not None else [np.nan, np.nan]


def run() -> dict[str, np.ndarray]:
    import dperm
    from dperm.algorithms import AssumptionError

    out: dict[str, np.ndarray] = {}
    X, yc, yr = _data()
    small = _data(d=2)  # the net-based (exponential) mechanisms serve d <= 3 at this n
    for info in dperm.algorithms.list():
        for (Xa, yca, yra), (loss, reg, con, delta) in [(data, c) for data in ((X, yc, yr), small) for c in CONFIGS]:
            y = yca if loss == "logistic" else yra
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fit = dperm.minimize(Xa, y, loss=loss, regularizer=reg, constraint=con, algorithm=info.name,
                                         epsilon=1.0, delta=delta, random_state=7)
            except (AssumptionError, ValueError) as error:
                last = f"{type(error).__name__}: {error}"
                continue
            out[f"alg/{info.name}/config"] = np.array(json.dumps([Xa.shape, loss, reg, con, delta]))
            out[f"alg/{info.name}/coef"] = np.asarray(fit.coef, dtype=float)
            out[f"alg/{info.name}/spent"] = np.array(_budget(fit))
            break
        else:
            out[f"alg/{info.name}/refused"] = np.array(last)
    for loss, y in (("logistic", yc), ("squared", yr)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dperm.minimize(X, y, loss=loss, regularizer=("l2", 0.1), epsilon=1.0, delta=1e-5, random_state=3)
        out[f"auto/{loss}/coef"] = np.asarray(fit.coef, dtype=float)
        out[f"auto/{loss}/spent"] = np.array(_budget(fit))

    from dperm import estimators as E

    labels = np.where(yc > 0, 1, 0)
    for name, make, y in [
        ("DPLogisticRegression", lambda: E.DPLogisticRegression(epsilon=1.0, random_state=0), labels),
        ("DPLinearSVC", lambda: E.DPLinearSVC(epsilon=1.0, random_state=0), labels),
        ("DPLinearRegression", lambda: E.DPLinearRegression(epsilon=1.0, random_state=0), yr),
        ("DPHuberRegressor", lambda: E.DPHuberRegressor(epsilon=1.0, random_state=0), yr),
        ("DPRobustRegressor", lambda: E.DPRobustRegressor(epsilon=1.0, random_state=0), yr),
        ("DPGLMRegressor", lambda: E.DPGLMRegressor(epsilon=1.0, random_state=0), (yr + 1) / 2),
    ]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = make().fit(X, y)
            out[f"est/{name}/coef"] = np.asarray(model.coef_, dtype=float)
            out[f"est/{name}/intercept"] = np.asarray(model.intercept_, dtype=float)
            out[f"est/{name}/predict"] = np.asarray(model.predict(X[:50]), dtype=float)
            out[f"est/{name}/spent"] = np.array(_budget(model))
        except Exception as error:  # recorded: a refusal is behaviour too
            out[f"est/{name}/error"] = np.array(f"{type(error).__name__}: {error}")

    try:
        import dask.array as da

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = E.DPLogisticRegression(epsilon=1.0, random_state=0).fit(
                da.from_array(X, chunks=100), da.from_array(labels, chunks=100))
        out["dask/DPLogisticRegression/coef"] = np.asarray(model.coef_, dtype=float)
    except ImportError:
        pass

    F, fc, fr = _frame()
    for name, est, y in [("classifier", dperm.DPLogisticRegression(), fc),
                         ("regressor", dperm.DPLinearRegression(), fr)]:
        declared = {"y_bounds": (-20.0, 80.0)} if name == "regressor" else {}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = dperm.make_pipeline(est, epsilon=1.0, random_state=0, **declared).fit(F, y)
            final = model.steps[-1][1]
            out[f"pipe/{name}/coef"] = np.asarray(final.coef_, dtype=float)
            out[f"pipe/{name}/intercept"] = np.asarray(final.intercept_, dtype=float)
            out[f"pipe/{name}/predict"] = np.asarray(model.predict(F.iloc[:50])).astype(str)
            out[f"pipe/{name}/spent"] = np.array(_budget(model))
        except Exception as error:
            out[f"pipe/{name}/error"] = np.array(f"{type(error).__name__}: {error}")

    from dperm.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        train = os.path.join(tmp, "train.csv")
        frame = F.assign(target=fc)
        frame.to_csv(train, index=False)
        for name, args in [
            ("default", ["--target", "target", "--epsilon", "1", "--seed", "0"]),
            ("declared", ["--target", "target", "--epsilon", "1", "--seed", "0", "--bounds", "age=18:90",
                          "--bounds", "income=0:200000", "--categories", "city=a,b,c", "--classes", "no,yes"]),
        ]:
            model_path = os.path.join(tmp, f"{name}.json")
            predictions = os.path.join(tmp, f"{name}.csv")
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
                code = main(["fit", train, *args, "--out", model_path])
            out[f"cli/{name}/fit_status"] = np.array(code)
            if code == 0:
                with open(model_path) as handle:
                    model = json.load(handle)
                model.pop("created", None)
                for key in ("dperm_version", "version", "fitted_at", "time"):
                    model.pop(key, None)
                out[f"cli/{name}/model"] = np.array(json.dumps(model, sort_keys=True))
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    code = main(["predict", model_path, train, "--out", predictions])
                out[f"cli/{name}/predict_status"] = np.array(code)
                if code == 0:
                    out[f"cli/{name}/predict"] = np.array(open(predictions).read())
            else:
                out[f"cli/{name}/stderr"] = np.array(err.getvalue())
    return out


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
        return False
    if a.dtype.kind in "fc":  # the bytes: -0.0 differs from 0.0, NaN equals NaN
        return a.tobytes() == b.tobytes()
    return bool(np.array_equal(a, b))


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("record", "compare"):
        print(__doc__)
        return 2
    os.environ.setdefault("DPERM_WARMUP", "0")
    import subprocess

    subprocess.run([sys.executable, "-c", "from dperm._warmup import warm_all; warm_all()"], check=True)
    current = run()
    if argv[0] == "record":
        np.savez(argv[1], **current)
        print(f"recorded {len(current)} entries in {argv[1]}")
        return 0
    recorded = dict(np.load(argv[1]))
    differ = []
    for key in sorted(set(recorded) | set(current)):
        if key not in recorded or key not in current:
            differ.append(f"{key}: only in {'the recording' if key in recorded else 'this run'}")
        elif not _equal(np.asarray(recorded[key]), np.asarray(current[key])):
            differ.append(f"{key}: differs ({recorded[key]!r:.200} vs {current[key]!r:.200})")
    for line in differ:
        print(line)
    print(f"{len(current)} entries, {len(differ)} not bit-for-bit equal to {argv[1]}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
