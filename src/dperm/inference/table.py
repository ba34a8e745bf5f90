"""The coefficient table of a private inference fit: estimates, standard errors, Wald
z statistics, p-values and intervals, and the text of ``summary()``.

Everything here is a post-processing of the released model (estimate and covariance)
and public values: free of privacy cost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import chi2, norm

from ..exceptions import InferenceWarning  # defined in the leaf, re-exported here

__all__ = ["CoefficientTable", "InferenceWarning"]


def _check_alpha(alpha) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) or not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}")
    return float(alpha)


@dataclass(frozen=True)
class CoefficientTable:
    """Estimates ``params`` with covariance ``covariance`` (intercept first when there is
    one), their ``names``, and the privacy facts of the fit that produced them.

    ``refused``: the released Hessian did not clear its noise, the intervals are
    infinite (never a silently short interval)."""

    names: tuple
    params: np.ndarray
    covariance: np.ndarray
    refused: bool = False
    method: str = ""
    privacy: dict = field(default_factory=dict)
    noise_share: np.ndarray | None = None  # the privacy noise's share of each variance

    @property
    def bse(self) -> np.ndarray:
        return np.sqrt(np.maximum(np.diag(self.covariance), 0.0))

    @property
    def zvalues(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            z = self.params / self.bse
        return np.where(np.isfinite(self.bse), z, 0.0)

    @property
    def pvalues(self) -> np.ndarray:
        """Two-sided Wald p-values for H0: coefficient = 0."""
        return 2.0 * norm.sf(np.abs(self.zvalues))

    def conf_int(self, alpha: float = 0.05) -> np.ndarray:
        """Wald intervals ``params -+ z_{1 - alpha/2} bse``, shape (p, 2)."""
        q = norm.ppf(1.0 - _check_alpha(alpha) / 2.0)
        half = q * self.bse
        return np.column_stack([self.params - half, self.params + half])

    def f_test(self, rows) -> dict:
        """The joint Wald test of H0: the coefficients at ``rows`` (indices) are all 0:
        ``W = b^T C^-1 b`` (b those estimates, C their covariance: sampling error and
        privacy noise), ``F = W / q`` with q = len(rows), and the p-value of W against
        chi-square(q) (an F with infinitely many denominator degrees of freedom). Refused
        fits give F = 0 and p-value 1 (never a rejection)."""
        rows = [int(i) for i in rows]
        if not rows or len(set(rows)) != len(rows) or min(rows) < 0 or max(rows) >= len(self.names):
            raise ValueError(f"rows must be distinct indices into the {len(self.names)} coefficients")
        q = len(rows)
        tested = tuple(self.names[i] for i in rows)
        if self.refused:
            return {"F": 0.0, "df_num": q, "df_denom": math.inf, "p_value": 1.0, "wald": 0.0, "names": tested,
                    "refused": True}
        b = self.params[rows]
        C = self.covariance[np.ix_(rows, rows)]
        wald = float(b @ np.linalg.lstsq(C, b, rcond=None)[0])
        return {"F": wald / q, "df_num": q, "df_denom": math.inf, "p_value": float(chi2.sf(wald, q)), "wald": wald,
                "names": tested, "refused": False}

    def rescaled(self, divisors: dict) -> "CoefficientTable":
        """The table per original unit: the rows named in ``divisors`` divided by it
        (a column scaled as ``(x - centre) / spread`` has the coefficient per unit of x
        ``coef / spread``); the other rows are left out."""
        keep = [i for i, name in enumerate(self.names) if name in divisors]
        scale = np.array([1.0 / float(divisors[self.names[i]]) for i in keep])
        cov = self.covariance[np.ix_(keep, keep)] * np.outer(scale, scale)
        return CoefficientTable(tuple(self.names[i] for i in keep), self.params[keep] * scale, cov, self.refused,
                                self.method, self.privacy,
                                None if self.noise_share is None else self.noise_share[keep])

    def to_dict(self, alpha: float = 0.05) -> dict:
        """Plain JSON-able values (model.json)."""
        ci = self.conf_int(alpha)

        def num(v):
            v = float(v)
            return v if math.isfinite(v) else ("inf" if v > 0 else "-inf")

        return {"method": self.method, "alpha": alpha, "refused": bool(self.refused),
                "names": list(self.names), "coef": [num(v) for v in self.params],
                "std_err": [num(v) for v in self.bse], "z": [num(v) for v in self.zvalues],
                "p_value": [num(v) for v in self.pvalues], "lower": [num(v) for v in ci[:, 0]],
                "upper": [num(v) for v in ci[:, 1]], "privacy": dict(self.privacy)}

    def text(self, alpha: float = 0.05, title: str = "", per_unit: "CoefficientTable | None" = None) -> str:
        """A table like statsmodels' ``summary()``: coef, std err, z, P>|z| and the
        interval per row, then the privacy spent and what the numbers cover."""
        lo, hi = alpha / 2.0, 1.0 - alpha / 2.0
        width = max([len("intercept")] + [len(str(n)) for n in self.names]) + 2
        header = (f"{'':<{width}}{'coef':>11}{'std err':>11}{'z':>9}{'P>|z|':>9}"
                  f"{f'[{lo:.3g}':>12}{f'{hi:.3g}]':>12}")
        rule = "=" * len(header)
        lines = [title, rule] if title else [rule]
        lines += self._rows(alpha, width, header)
        if per_unit is not None and len(per_unit.names):
            lines += ["", "Per unit of the original column (numeric columns with a linear declared or released map;",
                      "valid within the column's bounds, beyond which the map clips):"]
            lines += per_unit._rows(alpha, width, header)
        lines.append(rule)
        p = self.privacy
        if p:
            lines.append(f"Privacy spent: epsilon={p.get('epsilon'):.4g}, delta={p.get('delta'):.3g} (replace-one, "
                         f"{p.get('scope', 'the whole fit')})")
            if p.get("inference_share", 0):
                lines.append(f"  of which released for the intervals only: {p.get('inference_share', 0):.0%} of the "
                             f"model's Gaussian-DP budget, epsilon={p.get('inference_epsilon', 0):.4g} alone")
            else:
                lines.append("  of which released for the intervals only: nothing (the covariance is a "
                             "post-processing of the fit's releases)")
        lines.append(f"Method: {self.method}. Intervals cover the sampling error and the privacy noise "
                     "(docs/inference.md).")
        if self.refused:
            lines.append("REFUSED: the released Hessian did not clear its noise at this n and epsilon; the intervals "
                         "are infinite. Use a larger epsilon, more rows or fewer features.")
        return "\n".join(lines)

    def _rows(self, alpha, width, header) -> list:
        ci = self.conf_int(alpha)
        rows = [header, "-" * len(header)]
        for i, name in enumerate(self.names):
            rows.append(f"{str(name):<{width}}{self.params[i]:>11.4g}{self.bse[i]:>11.4g}{self.zvalues[i]:>9.3f}"
                        f"{self.pvalues[i]:>9.3f}{ci[i, 0]:>12.4g}{ci[i, 1]:>12.4g}")
        return rows
