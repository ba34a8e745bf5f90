"""`dperm demo`: private learners x epsilons on the embedded ADULT data."""

from __future__ import annotations

from .._files import check_output_dir, write_atomic
from ._console import _Progress, _console, _table


def cmd_demo(args) -> int:
    from ..bench.demo import DemoConfig, plot_demo, run_demo

    out = check_output_dir(args.out)
    config = DemoConfig(
        algorithms=tuple(args.algorithms), epsilons=tuple(args.epsilons), delta=args.delta,
        mu=args.mu, repeats=args.repeats, seed=args.seed,
    )
    total = len(config.algorithms) * len(config.epsilons) * config.repeats
    with _Progress("demo: private fits on ADULT", total) as progress:
        table, context = run_demo(config, progress=progress.advance)
    console = _console()
    console.print(_table(
        table, f"dperm demo: ADULT ({context['n_train']} train x {context['n_features']} features, "
        f"{context['n_test']} test), logistic loss + (mu/2)||w||^2, mu={config.mu:g}, delta={config.delta:g}",
        floats={"excess_risk": ".3e", "test_accuracy": ".4f", "seconds": ".3f", "epsilon": "g"},
    ))
    write_atomic(out / "demo.csv", lambda p: table.to_csv(p, index=False))
    png = write_atomic(out / "demo.png", lambda p: plot_demo(table, p))
    console.print(f"table written to {out / 'demo.csv'}; plot written to {png}")
    return 0
