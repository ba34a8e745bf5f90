"""`dperm bench scaling` and `dperm bench table3`: the experiment runners of dperm.bench."""

from __future__ import annotations

from .._files import check_output_dir
from ._console import _Progress, _console, _table
from ._defaults import PAPER


def cmd_bench_scaling(args) -> int:
    from ..bench.scaling import scaling_command

    check_output_dir(args.out)
    with _Progress(f"bench scaling: {args.algorithm} over n", len(set(args.sizes)) * args.repeats) as progress:
        report = scaling_command(
            args.algorithm, sizes=args.sizes, repeats=args.repeats, out=args.out, epsilon=args.epsilon,
            delta=args.delta, d=args.d, seed=args.seed, problem=args.problem, mu=args.mu, radius=args.radius,
            progress=progress.advance,
        )
    s = report.summary
    console = _console()
    console.print(_table(
        report.frame[["n", "measured", "measured_sem", "bound", "seconds"]],
        f"dperm bench scaling: {s['algorithm']} on {s['problem']} ({s['setting']}), d={s['d']}, "
        f"epsilon={s['epsilon']:g}, delta={s['delta']:g}; measured: {s['quantity']}; bound: {s['source']}",
        floats={"n": ".0f", "measured": ".3e", "measured_sem": ".2e", "bound": ".3e", "seconds": ".4f"},
    ))
    console.print(report.text())
    console.print("The bound holds up to hidden constants: only its slope compares with the measurement.")
    console.print(f"table written to {report.csv}; plot written to {report.png}; summary in {report.json}")
    return 0


def cmd_bench_table3(args) -> int:
    from ..bench.table3 import Table3Config, comparison_frame, plot_table3, run_table3, summarize

    out = check_output_dir(args.out)
    config = Table3Config(
        datasets=tuple(args.datasets), epsilons=tuple(args.epsilons), delta=args.delta,
        algorithms=tuple(args.algorithms) if args.algorithms else None,
        repeats=args.repeats,
        other_repeats=args.other_repeats if args.other_repeats is not None else min(args.repeats, 20),
        algorithm_repeats={} if args.sgd_repeats is None else {"dp_sgd": args.sgd_repeats},
        radius=args.radius if args.radius > 0 else None, max_rows=args.max_rows, seed=args.seed, n_jobs=args.n_jobs,
    )
    with _Progress("bench table3: private fits", None) as progress:
        frame = run_table3(config, out, progress=progress.update)
    summarize(frame, out)
    ok = frame[frame["status"] == "ok"]
    runs = ok.groupby(["dataset", "mu", "epsilon", "algorithm"]).size().max() if len(ok) else 0
    console = _console()
    comparison = comparison_frame(frame)
    console.print(_table(
        comparison[["dataset", "mu", "eps", "Out-GD error", "DP-SGD error", "best (all algorithms)"]],
        f"dperm bench table3 ({PAPER}, Table 3), delta={config.delta:g}: mean excess empirical risk ± s.e. "
        f"over {runs} runs at most",
    ))
    console.print(_table(
        comparison[["dataset", "mu", "eps", "Out-GD s", "DP-SGD s", "paper Out-GD s", "paper DP-SGD s"]],
        "CPU seconds per run (ours ± s.e.; the paper's, on its own machine)",
    ))
    pngs = plot_table3(frame, out)
    console.print(f"runs in {out / 'runs.csv'} (rerun to resume or extend); every algorithm and the paper's "
                  f"figures in {out / 'table3.md'}; plots {', '.join(str(p) for p in pngs)}")
    return 0
