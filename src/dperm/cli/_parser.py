"""The parser of ``dperm`` and :func:`main`: every verb and option, and the dispatch to the
verb's module, imported only when that verb runs (pip's ``commands_dict`` style), so that
``dperm --version`` and ``dperm --help`` import nothing heavy."""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings

from .._version import __version__
from ..exceptions import CLIError
from ._console import _budget_exceeded, _one_line, _show_warning, _silence_stdout
from ._defaults import (
    DEFAULT_DELTA, DEMO_ALGORITHMS, DEMO_EPSILONS, PAPER, SCALING_PROBLEMS, SCALING_SIZES, TABLE3_DATASETS,
)


# verb function -> the module that defines it (pip's commands_dict): only the module of the verb
# that runs is imported. The function is looked up on the dperm.cli package at run time.
COMMANDS = {
    "cmd_algorithms": "algorithms",
    "cmd_audit": "audit",
    "cmd_bench_scaling": "bench",
    "cmd_bench_table3": "bench",
    "cmd_budget": "budget",
    "cmd_demo": "demo",
    "cmd_fit": "fit",
    "cmd_predict": "predict",
    "cmd_warmup": "warmup",
}


class _command:
    """A verb's function, imported when the verb runs (``args.func(args)``)."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, args) -> int:
        return getattr(importlib.import_module(__package__), self.name)(args)


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line with the help hint, exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _HelpFormatter(argparse.HelpFormatter):
    """Every option with its meaning and its default."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or not action.option_strings or action.default in (None, argparse.SUPPRESS):
            return text
        default = action.default
        if isinstance(default, bool):
            shown = "on" if default else "off"
        elif isinstance(default, (list, tuple)):
            shown = " ".join(str(v) for v in default)
        else:
            shown = str(default)
        return f"{text} (default: {shown.replace('%', '%%')})"


def _integer_at_least(minimum: int):
    """An argparse type: an integer >= ``minimum``, or argparse's one-line error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {value}")
        return value

    return parse


_positive_int = _integer_at_least(1)
_count = _integer_at_least(0)


def _sub(sub, name: str, help: str, description: str | None = None):
    return sub.add_parser(name, help=help, description=description or help, formatter_class=_HelpFormatter)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``dperm`` (every option documented with its default)."""
    parser = _Parser(prog="dperm", description="Differentially private empirical risk minimization.",
                     formatter_class=_HelpFormatter)
    parser.add_argument("--version", action="version", version=f"dperm {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = _sub(sub, "demo", "private learners x epsilons on the embedded ADULT data (about 1.5 min on 2 cores)",
                "Fit several private learners at several epsilons on ADULT (logistic loss, l2 "
                "regularizer); print excess empirical risk, test accuracy and seconds next to the "
                "non-private optimum; write demo.csv and demo.png.")
    demo.add_argument("--algorithms", nargs="+", default=list(DEMO_ALGORITHMS), metavar="NAME",
                      help="catalogue names of the learners (see dperm algorithms)")
    demo.add_argument("--epsilons", nargs="+", type=float, default=list(DEMO_EPSILONS), metavar="EPS",
                      help="privacy parameters epsilon to run (each > 0)")
    demo.add_argument("--delta", type=float, default=1e-5, help="privacy parameter delta of every fit")
    demo.add_argument("--mu", type=float, default=1e-3, help="l2 regularization strength mu of (mu/2)||w||^2")
    demo.add_argument("--repeats", type=_positive_int, default=1, help="private fits per cell (averaged)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the noise (reproducible runs)")
    demo.add_argument("--out", default="dperm_output", help="folder for demo.csv and demo.png")
    demo.set_defaults(func=_command("cmd_demo"))

    fit = _sub(sub, "fit", "fit a private model on a CSV file, write it as JSON",
               "Fit a private linear model on a raw CSV file (numeric, categorical and missing values) and "
               "write it as JSON. By default the table goes through dperm.make_pipeline's private "
               "preprocessing under the one budget: numeric columns scaled between declared (--bounds, free) "
               "or privately estimated bounds, with a missing-value indicator; categorical columns one-hot "
               "over declared (--categories, free) or privately selected categories; rows bounded with a "
               "public norm; a regression target between declared (--y-bounds) or private bounds. model.json "
               "holds the declared values and the released noisy statistics, the model, the privacy spent "
               "and the public hyper-parameters; `dperm predict` applies the same preprocessing. With "
               "--data-norm (rows already prepared, numbers only) the rows are used as they are. See "
               "docs/your-data.md.")
    fit.add_argument("data", help="CSV file with a header row; every column but the target (and the weights) "
                                  "is a feature")
    fit.add_argument("--target", required=True, help="name of the label column (required)")
    fit.add_argument("--sample-weight", default=None, metavar="COLUMN",
                     help="name of a column of per-row weights in [0, 1] (not a feature; the privacy guarantee "
                          "is unchanged, each weight part of its row's private record) (default: unweighted)")
    fit.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0 (required)")
    fit.add_argument("--delta", type=float, default=DEFAULT_DELTA,
                     help="privacy parameter delta in [0, 1), well below 1/rows; 0 asks for pure epsilon-DP "
                          f"(several algorithms need delta > 0) (default: {DEFAULT_DELTA:g}, the estimators' default)")
    fit.add_argument("--loss", default="logistic",
                     choices=["logistic", "huberized_hinge", "hinge", "squared", "huber", "sigmoid_squared",
                              "biweight"],
                     help="logistic, huberized_hinge, hinge: classification; the others: regression")
    fit.add_argument("--classes", default=None, metavar="LABELS",
                     help="the label set, declared (public), comma-separated, e.g. no,yes (default: taken from "
                          "the data with a warning that the label set is then released unprotected)")
    fit.add_argument("--algorithm", default="auto",
                     help="a catalogue name (dperm algorithms), or auto: chosen from the problem's properties")
    fit.add_argument("--regularizer", default=None, metavar="SPEC",
                     help="l2:MU, l1:LAMBDA, elastic_net:LAMBDA:RATIO or none (default: the estimator's "
                          "l2 regularizer with its default alpha, see docs/estimators.md)")
    fit.add_argument("--constraint", default=None, metavar="SPEC",
                     help="l2_ball:R, l1_ball:R or box:R (default: none; squared loss: l2_ball:1)")
    fit.add_argument("--preprocessing", default="auto", choices=["auto", "private", "none"],
                     help="private: dperm.make_pipeline's private preprocessing (any column types, missing "
                          "values); none: numeric rows used as they are, clipped at --data-norm; auto: none when "
                          "--data-norm is given and nothing is declared, else private")
    fit.add_argument("--bounds", action="append", default=None, metavar="COLUMN=LOW:HIGH",
                     help="declared public bounds of a numeric column (free; repeatable), e.g. --bounds age=0:100 "
                          "(default: estimated privately within the budget)")
    fit.add_argument("--categories", action="append", default=None, metavar="COLUMN=A,B,C",
                     help="declared public categories of a column, which makes it categorical (free; repeatable; "
                          "other values encode as zeros), e.g. --categories sex=female,male (default: a column "
                          "that is not all numbers is categorical, its frequent categories selected privately)")
    fit.add_argument("--y-bounds", default=None, metavar="LOW:HIGH",
                     help="declared public bounds of a regression target, in its units (free); predictions come "
                          "back in those units (default: estimated privately within the budget); a negative LOW "
                          "takes the form --y-bounds=-10:10")
    fit.add_argument("--regime", choices=("auto", "model", "constant"), default="auto",
                     help="the regime: 'model' fits the model, 'constant' predicts a released constant with the "
                          "whole budget (a regression: the target's private median; a classifier: the majority of "
                          "noisy counts of the declared --classes), 'auto' chooses from public inputs (n, the "
                          "columns, epsilon): the constant where the model would be mostly noise (default: auto)")
    fit.add_argument("--schema", default=None, metavar="JSON",
                     help="a JSON file of declarations: bounds, categories, numeric, categorical, y_bounds (format "
                          "in docs/your-data.md) (default: none)")
    fit.add_argument("--data-norm", type=float, default=None,
                     help="declared public bound on the L2 norm of each feature row of a numeric CSV whose rows are "
                          "already prepared; longer rows are scaled down; implies --preprocessing none (default: "
                          "none, the private preprocessing bounds the rows)")
    fit.add_argument("--label-bound", type=float, default=1.0,
                     help="declared public bound on |label| in the model's units (regression losses; after "
                          "--y-bounds or the private target bounds); larger labels are clipped")
    fit.add_argument("--no-intercept", action="store_true",
                     help="fit no intercept (default: an intercept, as a constant feature of value "
                          "--intercept-scaling)")
    fit.add_argument("--intercept-scaling", type=float, default=1.0,
                     help="value of the constant intercept feature (> 0)")
    fit.add_argument("--params", default=None, metavar="JSON",
                     help='algorithm hyper-parameters as a JSON object, e.g. \'{"steps": 100}\' (default: the '
                          "algorithm's theorem)")
    fit.add_argument("--seed", type=int, default=None,
                     help="seed of the noise, for reproducible experiments (default: fresh OS entropy)")
    fit.add_argument("--out", default="model.json", help="file for the model (JSON)")
    fit.add_argument("--summary", action="store_true",
                     help="fit the unregularized model with error bars (--loss logistic, huber or squared) and print "
                          "the table: coef, std err, z, P>|z|, 95%% interval; model.json holds the intervals "
                          "(docs/inference.md)")
    fit.add_argument("--accountant", default=None, metavar="LEDGER",
                     help="charge this fit to a ledger made by `dperm budget` (composed exactly with its earlier "
                          "fits; refused before the data is read if the total would be exceeded) (default: none)")
    fit.set_defaults(func=_command("cmd_fit"))

    aud = _sub(sub, "audit", "black-box audit: a lower bound on a mechanism's epsilon from worst-case neighbours",
               "Run a catalogue algorithm many times on two worst-case replace-one neighbours and report a "
               "Clopper-Pearson lower bound on its epsilon (docs/audit.md); exit status 1 if the bound exceeds "
               "the claim.")
    aud.add_argument("algorithm", help="a catalogue name with an audit scenario (see docs/audit.md)")
    aud.add_argument("--epsilon", type=float, default=2.0, help="the claimed epsilon (default: 2)")
    aud.add_argument("--delta", type=float, default=0.01, help="the claimed delta (default: 0.01)")
    aud.add_argument("--runs", type=_positive_int, default=4000, help="runs on each neighbour (default: 4000)")
    aud.add_argument("--confidence", type=float, default=0.95, help="confidence of the bound (default: 0.95)")
    aud.add_argument("--seed", type=int, default=0, help="seed of the runs (default: 0)")
    aud.add_argument("--miscalibrated", action="store_true",
                     help="run with about half the noise the claim needs (the audit should catch it)")
    aud.set_defaults(func=_command("cmd_audit"))

    budget = _sub(sub, "budget", "create a ledger of a total privacy budget, or show what it has spent",
                  "With --epsilon: create LEDGER, a total budget that `dperm fit --accountant LEDGER` charges. "
                  "Without: show what the fits charged to it have spent, composed exactly.")
    budget.add_argument("ledger", metavar="LEDGER", help="the ledger file (JSON)")
    budget.add_argument("--epsilon", type=float, default=None,
                        help="total epsilon > 0 of a new ledger (default: show an existing ledger)")
    budget.add_argument("--delta", type=float, default=DEFAULT_DELTA,
                        help=f"total delta in [0, 1) of a new ledger (default: {DEFAULT_DELTA:g}, as dperm fit)")
    budget.set_defaults(func=_command("cmd_budget"))

    predict = _sub(sub, "predict", "predict with a model written by `dperm fit`",
                   "Predict the label (classification) or value (regression) of every row of a CSV file.")
    predict.add_argument("model", help="model file written by dperm fit")
    predict.add_argument("data", help="CSV file holding at least the model's feature columns")
    predict.add_argument("--on-missing", choices=["error", "empty"], default="error",
                         help="models fitted with --data-norm (no preprocessing): rows with a missing feature: error "
                              "stops, empty leaves their prediction empty (a model with the private preprocessing "
                              "handles missing values as in its fit)")
    predict.add_argument("--out", default=None,
                         help="CSV file for the predictions; - for standard output (default: standard output)")
    predict.add_argument("--interval", nargs="?", type=float, const=0.95, default=None, metavar="LEVEL",
                         help="add lower and upper columns: the prediction interval of a new observation at LEVEL "
                              "(default 0.95), for a model fitted with --loss squared --summary")
    predict.set_defaults(func=_command("cmd_predict"))

    bench = _sub(sub, "bench", "benchmarks: table3, scaling")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True, metavar="BENCHMARK")
    scaling = _sub(bench_sub, "scaling", "run an algorithm over growing n; plot the measured error against its "
                                         "bound's slope")
    scaling.add_argument("--algorithm", default="gd_output_perturbation", help="catalogue name of the algorithm")
    scaling.add_argument("--sizes", nargs="+", type=_positive_int, default=list(SCALING_SIZES), metavar="N",
                         help="sample sizes n")
    scaling.add_argument("--repeats", type=_positive_int, default=5,
                         help="independent runs per size (fresh noise at every size)")
    scaling.add_argument("--epsilon", type=float, default=1.0, help="privacy parameter epsilon")
    scaling.add_argument("--delta", type=float, default=None,
                         help="privacy parameter delta, fixed over n (default: 1e-5; 0 for algorithms that give "
                              "pure DP only)")
    scaling.add_argument("--d", type=_positive_int, default=10, help="dimension of the synthetic problem")
    scaling.add_argument("--problem", default="auto", choices=["auto", *SCALING_PROBLEMS],
                         help="synthetic problem; auto picks one that meets the algorithm's assumptions")
    scaling.add_argument("--mu", type=float, default=0.1, help="l2 strength of the strongly convex problems")
    scaling.add_argument("--radius", type=float, default=2.0, help="L2-ball radius of the constrained problems")
    scaling.add_argument("--seed", type=int, default=0, help="seed of the data and the noise")
    scaling.add_argument("--out", default="dperm_output",
                         help="folder for scaling_<algorithm>.csv, .png and .json")
    scaling.set_defaults(func=_command("cmd_bench_scaling"))

    table3 = _sub(bench_sub, "table3",
                  f"Table 3 of {PAPER}: Out-GD vs DP-SGD (and every other applicable algorithm) on five UCI datasets",
                  f"Reproduce Table 3 of {PAPER}: output-perturbation gradient descent (Out-GD) against "
                  "DP-SGD, and every other applicable algorithm, on five UCI datasets at four epsilons. "
                  "Rows are scaled to unit norm and the mu = 0 problems constrained to an L2 ball "
                  "(--radius), unlike the paper: compare dperm's algorithms with each other, not the "
                  "error values with the paper's (see docs/results.md).")
    table3.add_argument("--datasets", nargs="+", default=list(TABLE3_DATASETS), choices=TABLE3_DATASETS,
                        metavar="NAME", help=f"datasets among {', '.join(TABLE3_DATASETS)}")
    table3.add_argument("--epsilons", nargs="+", type=float, default=[0.1, 0.5, 1.0, 2.0], metavar="EPS",
                        help="privacy parameters epsilon")
    table3.add_argument("--delta", type=float, default=1e-3, help="privacy parameter delta (the paper's)")
    table3.add_argument("--algorithms", nargs="+", default=None, metavar="NAME",
                        help="catalogue names (default: gd_output_perturbation, dp_sgd and every other "
                             "registered algorithm)")
    table3.add_argument("--repeats", type=_positive_int, default=100,
                        help="runs per cell of the paper's two methods (the paper's 100)")
    table3.add_argument("--other-repeats", type=_count, default=None,
                        help="runs per cell of the other algorithms (default: min(repeats, 20))")
    table3.add_argument("--sgd-repeats", type=_count, default=None,
                        help="runs per cell of dp_sgd, overriding --repeats (default: --repeats; dp_sgd dominates "
                             "the running time)")
    table3.add_argument("--radius", type=float, default=10.0,
                        help="L2-ball radius of the mu = 0 problems (0: unconstrained; DP-SGD is then n/a)")
    table3.add_argument("--max-rows", type=_positive_int, default=None,
                        help="use a fixed random subset of this many rows of each dataset (default: all rows)")
    table3.add_argument("--n-jobs", type=int, default=-1, help="worker processes (-1: all cores)")
    table3.add_argument("--seed", type=int, default=0, help="root seed of every run's noise")
    table3.add_argument("--out", default="table3_output", help="folder for runs.csv, table3.md and the plots")
    table3.set_defaults(func=_command("cmd_bench_table3"))

    warm = _sub(sub, "warmup", "compile the stochastic algorithms' kernels once (run after installing)",
                "Compile the numba kernels (dp_sgd's, dp_svrg's and the secure path's exact samplers), or "
                "load them from numba's disk cache, so that the first fit of a new process does not "
                "compile them (seconds per kernel). The first 'import dperm' of an installation starts "
                "this in the background (DPERM_WARMUP=0 turns that off).")
    warm.set_defaults(func=_command("cmd_warmup"))

    algorithms = _sub(sub, "algorithms", "list the algorithm catalogue, or describe one algorithm")
    algorithms.add_argument("name", nargs="?", default=None, help="an algorithm to describe (default: list all)")
    algorithms.set_defaults(func=_command("cmd_algorithms"))
    return parser


def main(argv=None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad usage or input, 1 internal failure)."""
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            return args.func(args)
        except (CLIError, ValueError, TypeError) as error:
            print(f"dperm: error: {_one_line(error)}", file=sys.stderr)
            return 2
        except BrokenPipeError:
            # the reader of standard output went away (`dperm predict ... --out - | head`):
            # stop quietly, as Unix tools do, with the status of a SIGPIPE death
            _silence_stdout()
            return 141
        except OSError as error:
            where = f": {error.filename}" if error.filename else ""
            print(f"dperm: error: {error.strerror or _one_line(error)}{where}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("dperm: interrupted", file=sys.stderr)
            return 130
        except Exception as error:  # noqa: BLE001 - one line instead of a traceback
            if _budget_exceeded(error):  # a refused charge: bad input, like the others
                print(f"dperm: error: {_one_line(error)}", file=sys.stderr)
                return 2
            print(f"dperm: internal error: {type(error).__name__}: {_one_line(error)} (please report it)",
                  file=sys.stderr)
            return 1
