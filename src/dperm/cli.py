"""The ``dperm`` command line: demo, bench (table3, scaling), fit, predict, algorithms."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
from .bench.demo import DEFAULT_ALGORITHMS
from .bench.scaling import DEFAULT_SIZES, PROBLEMS

__all__ = ["main"]


def _console():
    from rich.console import Console

    return Console()


def _table(frame, title: str, floats: dict | None = None):
    from rich.table import Table

    table = Table(title=title)
    for i, column in enumerate(frame.columns):
        table.add_column(str(column), justify="right" if frame[column].dtype.kind in "fi" else "left",
                         no_wrap=i == 0, overflow="fold")
    for _, row in frame.iterrows():
        cells = []
        for column in frame.columns:
            value = row[column]
            if isinstance(value, float):
                fmt = (floats or {}).get(column, ".4g")
                cells.append("non-private" if math.isinf(value) else format(value, fmt))
            else:
                cells.append(str(value))
        table.add_row(*cells)
    return table


def _parse_spec(text: str | None):
    """'l2:0.1' -> ('l2', 0.1); 'elastic_net:0.1:0.5' -> ('elastic_net', 0.1, 0.5); None/'none' -> None."""
    if text is None or text.lower() == "none":
        return None
    name, *values = text.split(":")
    try:
        return (name, *[float(v) for v in values])
    except ValueError:
        raise SystemExit(f"dperm: cannot parse {text!r}; write NAME:VALUE, e.g. l2:0.1") from None


def cmd_demo(args) -> int:
    from rich.progress import Progress

    from .bench.demo import DemoConfig, plot_demo, run_demo

    config = DemoConfig(
        algorithms=tuple(args.algorithms), epsilons=tuple(args.epsilons), delta=args.delta,
        mu=args.mu, repeats=args.repeats, seed=args.seed,
    )
    console = _console()
    total = len(config.algorithms) * len(config.epsilons) * config.repeats
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("private fits on ADULT", total=total)
        table, context = run_demo(config, progress=lambda: progress.advance(task))
    console.print(_table(
        table, f"dperm demo: ADULT ({context['n_train']} train x {context['n_features']} features, "
        f"{context['n_test']} test), logistic loss + (mu/2)||w||^2, mu={config.mu:g}, delta={config.delta:g}",
        floats={"excess_risk": ".3e", "test_accuracy": ".4f", "seconds": ".3f", "epsilon": "g"},
    ))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "demo.csv", index=False)
    png = plot_demo(table, out / "demo.png")
    console.print(f"table written to {out / 'demo.csv'}; plot written to {png}")
    return 0


def cmd_bench_scaling(args) -> int:
    from rich.progress import Progress

    from .bench.scaling import scaling_command

    console = _console()
    total = len(set(args.sizes)) * args.repeats
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(f"{args.algorithm}: private fits over n", total=total)
        report = scaling_command(
            args.algorithm, sizes=args.sizes, repeats=args.repeats, out=args.out, epsilon=args.epsilon,
            delta=args.delta, d=args.d, seed=args.seed, problem=args.problem, mu=args.mu, radius=args.radius,
            progress=lambda: progress.advance(task),
        )
    s = report.summary
    console.print(_table(
        report.frame[["n", "measured", "measured_sem", "bound", "seconds", "iterations"]],
        f"dperm bench scaling: {s['algorithm']} on {s['problem']} ({s['setting']}), d={s['d']}, "
        f"epsilon={s['epsilon']:g}, delta={s['delta']:g}; measured: {s['quantity']}; bound: {s['source']}",
        floats={"n": ".0f", "measured": ".3e", "measured_sem": ".2e", "bound": ".3e", "seconds": ".4f",
                "iterations": ".0f"},
    ))
    console.print(report.text())
    console.print("The bound holds up to hidden constants: only its slope compares with the measurement.")
    console.print(f"table written to {report.csv}; plot written to {report.png}; summary in {report.json}")
    return 0


def cmd_bench_table3(args) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from .bench.table3 import Table3Config, comparison_frame, plot_table3, run_table3, summarize

    config = Table3Config(
        datasets=tuple(args.datasets), epsilons=tuple(args.epsilons), delta=args.delta,
        algorithms=tuple(args.algorithms) if args.algorithms else None,
        repeats=args.repeats,
        other_repeats=args.other_repeats if args.other_repeats is not None else min(args.repeats, 20),
        algorithm_repeats={} if args.sgd_repeats is None else {"dp_sgd": args.sgd_repeats},
        radius=args.radius if args.radius > 0 else None, max_rows=args.max_rows, seed=args.seed, n_jobs=args.n_jobs,
    )
    console = _console()
    out = Path(args.out)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("Table 3 of seed 003: private fits", total=None)
        frame = run_table3(config, out, progress=lambda done, total: progress.update(task, completed=done, total=total))
    summarize(frame, out)
    ok = frame[frame["status"] == "ok"]
    console.print(_table(
        comparison_frame(frame).drop(columns=["Out-GD / paper"]),
        f"dperm bench table3: seed 003 Table 3, delta={config.delta:g}; ours: mean ± s.e. over "
        f"{ok.groupby(['dataset', 'mu', 'epsilon', 'algorithm']).size().max() if len(ok) else 0} runs at most; "
        "error = excess empirical risk, s = CPU seconds per run",
    ))
    pngs = plot_table3(frame, out)
    console.print(f"runs in {out / 'runs.csv'} (rerun to resume or extend); every algorithm in {out / 'table3.md'}; "
                  f"plots {', '.join(str(p) for p in pngs)}")
    return 0


def _read_csv(path: str, target: str | None, columns: list | None = None):
    import pandas as pd

    frame = pd.read_csv(path)
    if target is not None and target not in frame.columns:
        raise SystemExit(f"dperm: no column {target!r} in {path}; columns are {list(frame.columns)}")
    if columns is not None:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise SystemExit(f"dperm: columns {missing} of the model are missing from {path}")
        features = frame[columns]
    else:
        features = frame.drop(columns=[target]) if target is not None else frame
    non_numeric = [c for c in features.columns if features[c].dtype.kind not in "biuf"]
    if non_numeric:
        raise SystemExit(f"dperm: non-numeric feature columns {non_numeric}; encode them first")
    return features, (frame[target] if target is not None else None)


def cmd_fit(args) -> int:
    from .algorithms import registry
    from .api import minimize
    from .problem.losses import make_loss

    features, target = _read_csv(args.data, args.target)
    loss = make_loss(args.loss)
    y = target.to_numpy()
    classes = None
    if loss.binary:
        classes = np.unique(y)
        if len(classes) != 2:
            raise SystemExit(f"dperm: the {loss.name} loss needs exactly 2 classes in {args.target!r}, found {len(classes)}")
        y = np.where(y == classes[1], 1.0, -1.0)
    hyper = json.loads(args.params) if args.params else {}
    if args.algorithm != "auto":
        registry.get(args.algorithm)
    fit = minimize(
        features.to_numpy(dtype=float), y, loss=loss, regularizer=_parse_spec(args.regularizer),
        constraint=_parse_spec(args.constraint), algorithm=args.algorithm, epsilon=args.epsilon,
        delta=args.delta, data_norm=args.data_norm, label_bound=args.label_bound,
        random_state=args.seed, **hyper,
    )
    model = fit.summary()
    model.update({
        "loss": loss.name,
        "feature_names": list(features.columns),
        "target": args.target,
        "classes": None if classes is None else [c.item() if hasattr(c, "item") else c for c in classes],
        "data_norm": args.data_norm,
    })
    Path(args.out).write_text(json.dumps(model, indent=2))
    print(f"fitted {fit.algorithm} on {len(y)} rows; privacy spent: epsilon={fit.privacy_spent.epsilon:.6g}, "
          f"delta={fit.privacy_spent.delta:.3g}; model written to {args.out}")
    return 0


def cmd_predict(args) -> int:
    import pandas as pd

    model = json.loads(Path(args.model).read_text())
    features, _ = _read_csv(args.data, None, model["feature_names"])
    X = features.to_numpy(dtype=float)
    scores = X @ np.asarray(model["coef"])
    if model.get("classes"):
        classes = model["classes"]
        predictions = np.where(scores > 0, classes[1], classes[0])
    else:
        predictions = scores
    frame = pd.DataFrame({"prediction": predictions})
    if args.out:
        frame.to_csv(args.out, index=False)
        print(f"{len(frame)} predictions written to {args.out}")
    else:
        frame.to_csv(sys.stdout, index=False)
    return 0


def cmd_algorithms(args) -> int:
    import pandas as pd

    from .algorithms import list_algorithms

    rows = [info.as_row() for info in list_algorithms()]
    frame = pd.DataFrame(rows)[["name", "setting", "guarantee", "requires", "source"]]
    _console().print(_table(frame, "dperm algorithm catalogue"))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dperm", description="Differentially private empirical risk minimization.")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="private learners x epsilons on the embedded ADULT data")
    demo.add_argument("--algorithms", nargs="+", default=list(DEFAULT_ALGORITHMS))
    demo.add_argument("--epsilons", nargs="+", type=float, default=[0.1, 0.5, 1.0, 2.0])
    demo.add_argument("--delta", type=float, default=1e-5)
    demo.add_argument("--mu", type=float, default=1e-3, help="l2 regularization strength")
    demo.add_argument("--repeats", type=int, default=1)
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--out", default="dperm_output", help="folder for demo.csv and demo.png")
    demo.set_defaults(func=cmd_demo)

    fit = sub.add_parser("fit", help="fit a private model on a CSV file, write it as JSON")
    fit.add_argument("data")
    fit.add_argument("--target", required=True)
    fit.add_argument("--loss", default="logistic")
    fit.add_argument("--algorithm", default="auto", help="a catalogue name, or auto (chosen from the problem)")
    fit.add_argument("--epsilon", type=float, required=True)
    fit.add_argument("--delta", type=float, default=0.0)
    fit.add_argument("--regularizer", default=None, help="e.g. l2:0.01, l1:0.001, elastic_net:0.01:0.5")
    fit.add_argument("--constraint", default=None, help="e.g. l2_ball:10, l1_ball:5, box:1")
    fit.add_argument("--data-norm", type=float, default=1.0)
    fit.add_argument("--label-bound", type=float, default=1.0)
    fit.add_argument("--params", default=None, help="algorithm hyper-parameters as JSON")
    fit.add_argument("--seed", type=int, default=None)
    fit.add_argument("--out", default="model.json")
    fit.set_defaults(func=cmd_fit)

    predict = sub.add_parser("predict", help="predict with a model written by `dperm fit`")
    predict.add_argument("model")
    predict.add_argument("data")
    predict.add_argument("--out", default=None)
    predict.set_defaults(func=cmd_predict)

    bench = sub.add_parser("bench", help="benchmarks")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True)
    scaling = bench_sub.add_parser(
        "scaling", help="run an algorithm over growing n; plot the measured error against its bound's slope")
    scaling.add_argument("--algorithm", default="gd_output_perturbation")
    scaling.add_argument("--sizes", nargs="+", type=int, default=list(DEFAULT_SIZES))
    scaling.add_argument("--repeats", type=int, default=5)
    scaling.add_argument("--epsilon", type=float, default=1.0)
    scaling.add_argument("--delta", type=float, default=None,
                         help="fixed over n; default 1e-5 (0 for algorithms that give pure DP only)")
    scaling.add_argument("--d", type=int, default=10, help="dimension of the synthetic problem")
    scaling.add_argument("--problem", default="auto", choices=["auto", *PROBLEMS],
                         help="synthetic problem; auto picks one that meets the algorithm's assumptions")
    scaling.add_argument("--mu", type=float, default=0.1, help="l2 strength of the strongly convex problems")
    scaling.add_argument("--radius", type=float, default=2.0, help="L2-ball radius of the constrained problems")
    scaling.add_argument("--seed", type=int, default=0)
    scaling.add_argument("--out", default="dperm_output",
                         help="folder for scaling_<algorithm>.csv, .png and .json")
    scaling.set_defaults(func=cmd_bench_scaling)

    table3 = bench_sub.add_parser(
        "table3", help="seed 003 Table 3: Out-GD vs DP-SGD (and every other applicable algorithm) on five UCI datasets",
    )
    table3.add_argument("--datasets", nargs="+", default=["bank", "adult", "credit_card", "wine", "bike"],
                        choices=["bank", "adult", "credit_card", "wine", "bike"])
    table3.add_argument("--epsilons", nargs="+", type=float, default=[0.1, 0.5, 1.0, 2.0])
    table3.add_argument("--delta", type=float, default=1e-3)
    table3.add_argument("--algorithms", nargs="+", default=None,
                        help="default: gd_output_perturbation, dp_sgd and every other registered algorithm")
    table3.add_argument("--repeats", type=int, default=100, help="runs per cell of the paper's two methods")
    table3.add_argument("--other-repeats", type=int, default=None,
                        help="runs per cell of the other algorithms (default: min(repeats, 20))")
    table3.add_argument("--sgd-repeats", type=int, default=None,
                        help="runs per cell of dp_sgd, overriding --repeats (it dominates the running time)")
    table3.add_argument("--radius", type=float, default=10.0,
                        help="L2-ball radius of the mu = 0 problems (0: unconstrained; DP-SGD is then n/a)")
    table3.add_argument("--max-rows", type=int, default=None, help="use a fixed random subset of each dataset")
    table3.add_argument("--n-jobs", type=int, default=-1, help="worker processes (-1: all cores)")
    table3.add_argument("--seed", type=int, default=0)
    table3.add_argument("--out", default="table3_output", help="folder for runs.csv, table3.md and the plots")
    table3.set_defaults(func=cmd_bench_table3)

    algorithms = sub.add_parser("algorithms", help="list the algorithm catalogue")
    algorithms.set_defaults(func=cmd_algorithms)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError) as exc:
        print(f"dperm: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
