"""`dperm warmup`: compile the stochastic algorithms' kernels once."""

from __future__ import annotations


def cmd_warmup(args) -> int:
    from .._warmup import warm_all

    print(f"dperm: kernels ready in {warm_all():.1f} s")
    return 0
