"""Loaders for the five UCI datasets of Zhang, Zheng, Mou, Wang's experiments, shipped with the package.

Preprocessing (every step is a per-row map fixed in advance, so it leaks nothing about
other rows; no statistic is learned from the data):

1. Categorical columns are one-hot encoded over a fixed category list (the public schema,
   written below); a value outside the list (none occurs in the shipped files) encodes
   as all zeros. ADULT's missing value '?' is a category of its own.
2. Numeric columns are mapped to [0, 1] (or [-1, 1] for signed money amounts) by public,
   documented ranges: ``(x - low) / (high - low)`` clipped, or for heavy-tailed amounts
   ``sign(x) log1p(|x|) / log1p(cap)`` clipped.
3. An intercept column of ones is appended last (feature name ``"intercept"``).
4. Every row is scaled to L2 norm exactly ``data_norm``.

Binary targets are mapped to {-1, +1}; regression targets to [-1, 1] by declared ranges
(``label_bound = 1``). The train/test split is ADULT's official one; the other datasets
use a fixed permutation (seed 0), 80% train.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
from dataclasses import dataclass, field
from importlib import resources
from typing import Callable

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

__all__ = ["load_adult", "load_bank", "load_credit_card", "load_wine", "load_bike", "load", "load_raw", "DATASETS",
           "describe"]

# sha256 of the uncompressed files (src/dperm/datasets/data/README.md)
_SHA256 = {
    "bank-full.csv.gz": "d1513ec63b385506f7cfce9f2c5caa9fe99e7ba4e8c3fa264b3aaf0f849ed32d",
    "adult.data.gz": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "adult.test.gz": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    "UCI_Credit_Card.csv.gz": "a0f0ab49d6326671d6cd83be5c88dcf18007025fe9a53ecd699119c871176ca1",
    "winequality-red.csv.gz": "4a402cf041b025d4566d954c3b9ba8635a3a8a01e039005d97d6a710278cf05e",
    "winequality-white.csv.gz": "76c3f809815c17c07212622f776311faeb31e87610d52c26d87d6e361b169836",
    "hour.csv.gz": "e03de4ee4ef4dc376ac6e04bf829673c6269e8eba5c60fa121640fa2f829504f",
}


@functools.lru_cache(maxsize=None)
def _read_bytes(name: str) -> bytes:
    raw = gzip.decompress(resources.files("dperm.datasets").joinpath("data", name).read_bytes())
    digest = hashlib.sha256(raw).hexdigest()
    if digest != _SHA256[name]:
        raise RuntimeError(f"the shipped file {name} is corrupt: sha256 {digest} != {_SHA256[name]}")
    return raw


# --------------------------------------------------------------------------- the schema
@dataclass(frozen=True)
class Linear:
    """(x - low) / (high - low), clipped to [0, 1]."""

    low: float
    high: float

    def __call__(self, x):
        return np.clip((x - self.low) / (self.high - self.low), 0.0, 1.0)


@dataclass(frozen=True)
class SignedLog:
    """sign(x) log1p(|x|) / log1p(cap), clipped to [-1, 1]: money amounts with heavy tails."""

    cap: float

    def __call__(self, x):
        return np.clip(np.sign(x) * np.log1p(np.abs(x)) / np.log1p(self.cap), -1.0, 1.0)


@dataclass(frozen=True)
class Schema:
    numeric: dict[str, Callable]
    categorical: dict[str, tuple]
    target: str
    task: str  # "binary" or "regression"
    positive: object = None  # binary: the label mapped to +1
    target_map: Callable | None = None  # regression: y -> [-1, 1]
    drop: tuple = ()
    citation: str = ""
    notes: str = ""
    extra: dict = field(default_factory=dict)


_ADULT = Schema(
    numeric={
        "age": Linear(0, 100),
        "fnlwgt": SignedLog(1.5e6),
        "education-num": Linear(0, 16),
        "capital-gain": SignedLog(1e5),
        "capital-loss": SignedLog(1e4),
        "hours-per-week": Linear(0, 100),
    },
    categorical={
        "workclass": ("Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
                      "Without-pay", "Never-worked", "?"),
        "education": ("Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th",
                      "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"),
        "marital-status": ("Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
                           "Married-spouse-absent", "Married-AF-spouse"),
        "occupation": ("Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial", "Prof-specialty",
                       "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical", "Farming-fishing", "Transport-moving",
                       "Priv-house-serv", "Protective-serv", "Armed-Forces", "?"),
        "relationship": ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"),
        "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
        "sex": ("Female", "Male"),
        "native-country": ("United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
                           "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran",
                           "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal",
                           "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia",
                           "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador",
                           "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands", "?"),
    },
    target="income",
    task="binary",
    positive=">50K",
    citation="Becker, B. & Kohavi, R. (1996). Adult. UCI Machine Learning Repository. DOI 10.24432/C5XW20. CC BY 4.0.",
)
_ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
                  "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
                  "income"]

_BANK = Schema(
    numeric={
        "age": Linear(0, 100),
        "balance": SignedLog(1e5),
        "day": Linear(1, 31),
        "duration": SignedLog(5000),
        "campaign": SignedLog(100),
        "pdays": Linear(-1, 1000),
        "previous": SignedLog(300),
    },
    categorical={
        "job": ("admin.", "unknown", "unemployed", "management", "housemaid", "entrepreneur", "student",
                "blue-collar", "self-employed", "retired", "technician", "services"),
        "marital": ("married", "divorced", "single"),
        "education": ("unknown", "secondary", "primary", "tertiary"),
        "default": ("yes", "no"),
        "housing": ("yes", "no"),
        "loan": ("yes", "no"),
        "contact": ("unknown", "telephone", "cellular"),
        "month": ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
        "poutcome": ("unknown", "other", "failure", "success"),
    },
    target="y",
    task="binary",
    positive="yes",
    citation="Moro, S., Rita, P. & Cortez, P. (2014). Bank Marketing. UCI Machine Learning Repository. "
             "DOI 10.24432/C5K306. CC BY 4.0.",
)

_PAY = {f"PAY_{k}": Linear(-2, 9) for k in (0, 2, 3, 4, 5, 6)}
_CREDIT = Schema(
    numeric={
        "LIMIT_BAL": SignedLog(1e6),
        "AGE": Linear(0, 100),
        **_PAY,
        **{f"BILL_AMT{k}": SignedLog(1e6) for k in range(1, 7)},
        **{f"PAY_AMT{k}": SignedLog(1e6) for k in range(1, 7)},
    },
    categorical={"SEX": (1, 2), "EDUCATION": (0, 1, 2, 3, 4, 5, 6), "MARRIAGE": (0, 1, 2, 3)},
    target="default.payment.next.month",
    task="binary",
    positive=1,
    drop=("ID",),
    citation="Yeh, I-C. (2009/2016). Default of Credit Card Clients. UCI Machine Learning Repository. "
             "DOI 10.24432/C55S3H. CC BY 4.0 (the widely used CSV re-export).",
)

_WINE = Schema(
    numeric={
        "fixed acidity": Linear(0, 16),
        "volatile acidity": Linear(0, 2),
        "citric acid": Linear(0, 2),
        "residual sugar": SignedLog(100),
        "chlorides": Linear(0, 1),
        "free sulfur dioxide": Linear(0, 300),
        "total sulfur dioxide": Linear(0, 500),
        "density": Linear(0.98, 1.04),
        "pH": Linear(2.5, 4.5),
        "sulphates": Linear(0, 2),
        "alcohol": Linear(8, 15),
        "is_red": Linear(0, 1),
    },
    categorical={},
    target="quality",
    task="regression",
    target_map=lambda q: np.clip((q - 6.0) / 3.0, -1.0, 1.0),
    citation="Cortez, P., Cerdeira, A., Almeida, F., Matos, T. & Reis, J. (2009). Wine Quality. UCI Machine "
             "Learning Repository. DOI 10.24432/C56S3T. CC BY 4.0.",
    notes="red and white concatenated (red first) with an is_red indicator; target (quality - 6) / 3.",
)

_BIKE = Schema(
    numeric={
        "yr": Linear(0, 1),
        "holiday": Linear(0, 1),
        "workingday": Linear(0, 1),
        "temp": Linear(0, 1),
        "atemp": Linear(0, 1),
        "hum": Linear(0, 1),
        "windspeed": Linear(0, 1),
    },
    categorical={
        "season": (1, 2, 3, 4),
        "mnth": tuple(range(1, 13)),
        "hr": tuple(range(24)),
        "weekday": tuple(range(7)),
        "weathersit": (1, 2, 3, 4),
    },
    target="cnt",
    task="regression",
    target_map=lambda c: np.clip(c / 500.0 - 1.0, -1.0, 1.0),
    drop=("instant", "dteday", "casual", "registered"),
    citation="Fanaee-T, H. (2013). Bike Sharing. UCI Machine Learning Repository. DOI 10.24432/C5W894. CC BY 4.0.",
    notes="instant, dteday and casual/registered (cnt = casual + registered) dropped; target cnt / 500 - 1 "
          "(a public cap of 1000 rentals an hour).",
)


# ------------------------------------------------------------------------ raw frames
@functools.lru_cache(maxsize=None)
def _raw(name: str) -> pd.DataFrame:
    if name == "adult_train":
        text = _read_bytes("adult.data.gz")
        frame = pd.read_csv(io.BytesIO(text), header=None, names=_ADULT_COLUMNS, sep=r",\s*", engine="python")
    elif name == "adult_test":
        text = _read_bytes("adult.test.gz")
        frame = pd.read_csv(io.BytesIO(text), header=None, names=_ADULT_COLUMNS, sep=r",\s*", engine="python", skiprows=1)
        frame["income"] = frame["income"].str.rstrip(".")
    elif name == "bank":
        frame = pd.read_csv(io.BytesIO(_read_bytes("bank-full.csv.gz")), sep=";")
    elif name == "credit_card":
        frame = pd.read_csv(io.BytesIO(_read_bytes("UCI_Credit_Card.csv.gz")))
    elif name == "wine":
        red = pd.read_csv(io.BytesIO(_read_bytes("winequality-red.csv.gz")), sep=";")
        white = pd.read_csv(io.BytesIO(_read_bytes("winequality-white.csv.gz")), sep=";")
        red["is_red"], white["is_red"] = 1, 0
        frame = pd.concat([red, white], ignore_index=True)
    elif name == "bike":
        frame = pd.read_csv(io.BytesIO(_read_bytes("hour.csv.gz")))
    else:
        raise ValueError(name)
    return frame.dropna(how="all").reset_index(drop=True)


def preprocess(frame: pd.DataFrame, schema: Schema, data_norm: float = 1.0):
    """Apply the documented per-row preprocessing; returns (X, y, feature_names)."""
    blocks, names = [], []
    for column, transform in schema.numeric.items():
        blocks.append(np.asarray(transform(frame[column].to_numpy(dtype=np.float64)))[:, None])
        names.append(column)
    for column, categories in schema.categorical.items():
        values = frame[column].to_numpy()
        blocks.append(np.stack([(values == c) for c in categories], axis=1).astype(np.float64))
        names.extend(f"{column}={c}" for c in categories)
    blocks.append(np.ones((len(frame), 1)))
    names.append("intercept")
    X = np.hstack(blocks)
    X *= data_norm / np.linalg.norm(X, axis=1, keepdims=True)  # the intercept keeps norms > 0
    target = frame[schema.target].to_numpy()
    if schema.task == "binary":
        y = np.where(target == schema.positive, 1.0, -1.0)
    else:
        y = schema.target_map(target.astype(np.float64))
    return X, y, names


def _split_index(n: int, split: str) -> np.ndarray:
    order = np.random.default_rng(0).permutation(n)
    cut = int(round(0.8 * n))
    if split == "train":
        return np.sort(order[:cut])
    if split == "test":
        return np.sort(order[cut:])
    return np.arange(n)


def _load(raw_name: str | None, schema: Schema, *, split: str, return_X_y: bool, as_frame: bool, data_norm: float,
          name: str):
    if split not in ("train", "test", "all"):
        raise ValueError(f"split must be 'train', 'test' or 'all', got {split!r}")
    if not (np.isfinite(data_norm) and data_norm > 0):
        raise ValueError(f"data_norm must be a finite number > 0, got {data_norm}")
    if raw_name is None:  # ADULT: the official split
        parts = {"train": ["adult_train"], "test": ["adult_test"], "all": ["adult_train", "adult_test"]}[split]
        raw = pd.concat([_raw(p) for p in parts], ignore_index=True)
    else:
        full = _raw(raw_name)
        raw = full.iloc[_split_index(len(full), split)].reset_index(drop=True)
    X, y, names = preprocess(raw, schema, data_norm)
    if as_frame:
        X = pd.DataFrame(X, columns=names)
        y = pd.Series(y, name=schema.target)
    if return_X_y:
        return X, y
    descr = (f"{name} ({split}): {len(raw)} rows, {len(names)} features ({schema.task}). "
             f"{__doc__.split('Preprocessing')[1].strip()}\n{schema.notes}\nCitation: {schema.citation}")
    return Bunch(
        data=X, target=y, feature_names=names, task=schema.task, data_norm=float(data_norm),
        label_bound=1.0, raw=raw.copy(), DESCR=descr,
        target_names=np.array([-1.0, 1.0]) if schema.task == "binary" else None,
    )


def load_adult(*, split: str = "train", return_X_y: bool = False, as_frame: bool = False, data_norm: float = 1.0):
    """ADULT (census income > 50K), official train (32561) / test (16281) split."""
    return _load(None, _ADULT, split=split, return_X_y=return_X_y, as_frame=as_frame, data_norm=data_norm, name="ADULT")


def load_bank(*, split: str = "all", return_X_y: bool = False, as_frame: bool = False, data_norm: float = 1.0):
    """BANK marketing (45211 rows; target: subscribed a term deposit)."""
    return _load("bank", _BANK, split=split, return_X_y=return_X_y, as_frame=as_frame, data_norm=data_norm, name="BANK")


def load_credit_card(*, split: str = "all", return_X_y: bool = False, as_frame: bool = False, data_norm: float = 1.0):
    """Default of credit card clients, Taiwan (30000 rows)."""
    return _load("credit_card", _CREDIT, split=split, return_X_y=return_X_y, as_frame=as_frame,
                 data_norm=data_norm, name="CreditCard")


def load_wine(*, split: str = "all", return_X_y: bool = False, as_frame: bool = False, data_norm: float = 1.0):
    """Wine quality, red and white (6497 rows; regression of quality)."""
    return _load("wine", _WINE, split=split, return_X_y=return_X_y, as_frame=as_frame, data_norm=data_norm, name="WINE")


def load_bike(*, split: str = "all", return_X_y: bool = False, as_frame: bool = False, data_norm: float = 1.0):
    """Bike sharing, hourly (17379 rows; regression of the rental count)."""
    return _load("bike", _BIKE, split=split, return_X_y=return_X_y, as_frame=as_frame, data_norm=data_norm, name="BIKE")


DATASETS = {"adult": load_adult, "bank": load_bank, "credit_card": load_credit_card, "wine": load_wine, "bike": load_bike}


def load(name: str, **kwargs):
    """Load a shipped dataset by name (see ``DATASETS``)."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose one of {sorted(DATASETS)}")
    return DATASETS[name](**kwargs)


_SCHEMAS = {"adult": (None, _ADULT), "bank": ("bank", _BANK), "credit_card": ("credit_card", _CREDIT),
            "wine": ("wine", _WINE), "bike": ("bike", _BIKE)}


def load_raw(name: str, *, split: str = "all") -> tuple[pd.DataFrame, pd.Series]:
    """The raw table of a shipped dataset, as a person with the file would have it:
    ``(X, y)`` with X the feature columns as read (strings for categories, the file's
    numbers, ADULT's '?' as it is; the columns the schema drops are dropped) and y the raw
    target (ADULT/BANK: the file's labels, CreditCard: 0/1, WINE: quality, BIKE: count).

    The split is the same as the schema loaders' (ADULT's official one, else the fixed 80%
    permutation), so a raw fit and a schema fit see the same rows.
    """
    if name not in _SCHEMAS:
        raise ValueError(f"unknown dataset {name!r}; choose one of {sorted(_SCHEMAS)}")
    if split not in ("train", "test", "all"):
        raise ValueError(f"split must be 'train', 'test' or 'all', got {split!r}")
    raw_name, schema = _SCHEMAS[name]
    if raw_name is None:
        parts = {"train": ["adult_train"], "test": ["adult_test"], "all": ["adult_train", "adult_test"]}[split]
        raw = pd.concat([_raw(p) for p in parts], ignore_index=True)
    else:
        full = _raw(raw_name)
        raw = full.iloc[_split_index(len(full), split)].reset_index(drop=True)
    keep = [c for c in raw.columns if c != schema.target and c not in schema.drop]
    return raw[keep].copy(), raw[schema.target].copy()


def describe() -> pd.DataFrame:
    """Rows, features and task of every shipped dataset (split 'all')."""
    rows = []
    for name, loader in DATASETS.items():
        X, _ = loader(split="all", return_X_y=True)
        rows.append({"dataset": name, "rows": X.shape[0], "features": X.shape[1],
                     "task": {"adult": "binary", "bank": "binary", "credit_card": "binary"}.get(name, "regression")})
    return pd.DataFrame(rows)
