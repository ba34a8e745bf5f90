"""Calibration of the noise warning (dperm.expectations): the public signal-to-noise
estimate next to what the default DPLogisticRegression actually does.

For scikit-learn's wine and breast_cancer tables (rows scaled to unit norm; ``std`` on the
command line standardizes the columns first) at several epsilons, and the shipped ADULT
(train) and BANK tables, prints n, d, the number of classes, the estimate, the training
accuracy (mean over seeds), the majority class's share and how many seeds predicted one
class only. The table in docs/estimators.md ("When the noise dominates") is its output.

Run by hand from the repository root (about 10 s on an idle 2-core machine)::

    python benchmarks/noise_warning_calibration.py
"""
import warnings, sys, numpy as np
warnings.simplefilter("ignore")
from sklearn.datasets import load_wine, load_breast_cancer
from sklearn.preprocessing import Normalizer, StandardScaler
from dperm import DPLogisticRegression
from dperm.expectations import signal_to_noise
from dperm.datasets import load_adult, load_bank
def ratio(n, d, eps, k):
    if k == 2:
        return signal_to_noise(n, d + 1, eps, 1e-5, data_norm=np.sqrt(2))
    return signal_to_noise(n, d + 1, eps, 1e-5, loss="multinomial", n_classes=k, data_norm=np.sqrt(2))
def run(name, X, y, epss, seeds=3):
    k = len(np.unique(y))
    for eps in epss:
        accs, ones = [], []
        for s in range(seeds):
            m = DPLogisticRegression(epsilon=eps, random_state=s).fit(X, y)
            p = m.predict(X)
            accs.append((p == y).mean()); ones.append(len(np.unique(p)) == 1)
        maj = max(np.mean(y == c) for c in np.unique(y))
        print(f"{name:14s} n={X.shape[0]:6d} d={X.shape[1]:3d} k={k} eps={eps:5g} snr={ratio(X.shape[0], X.shape[1], eps, k):8.3g} acc={np.mean(accs):.3f} maj={maj:.3f} one-class={sum(ones)}/{seeds}", flush=True)
for name, loader in (("wine", load_wine), ("breast_cancer", load_breast_cancer)):
    X, y = loader(return_X_y=True)
    X = Normalizer().fit_transform(StandardScaler().fit_transform(X)) if "std" in sys.argv else Normalizer().fit_transform(X)
    run(name, X, y, [0.1, 0.3, 1, 3, 10, 30])
for name, loader in (("adult", load_adult), ("bank", load_bank)):
    X, y = loader(split="train" if name == "adult" else "all", return_X_y=True)
    run(name, X, y, [0.1, 0.3, 1], seeds=1)
