"""`dperm audit`: a black-box lower bound on a mechanism's epsilon (dperm.audit)."""

from __future__ import annotations

from ._console import _Progress


def cmd_audit(args) -> int:
    """Black-box lower bound on a mechanism's epsilon (dperm.audit); exit 1 if above the claim."""
    from ..audit import audit

    with _Progress(f"auditing {args.algorithm}", total=None) as bar:
        result = audit(args.algorithm, args.epsilon, args.delta, runs=args.runs, seed=args.seed,
                       confidence=args.confidence, miscalibrated=args.miscalibrated,
                       progress=lambda done, total: bar.update(done, total))
    verdict = "above the claim: a privacy bug" if result.epsilon_lower_bound > result.epsilon else "below the claim"
    print(f"{result.algorithm}: claim epsilon={result.epsilon:.6g}, delta={result.delta:g}; run at epsilon="
          f"{result.epsilon_run:.6g}; epsilon lower bound {result.epsilon_lower_bound:.4g} at confidence "
          f"{result.confidence:g} from {result.runs} runs per neighbour: {verdict}")
    return 1 if result.epsilon_lower_bound > result.epsilon and not args.miscalibrated else 0
