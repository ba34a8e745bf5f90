"""The shape of the code: no import cycle (lazy imports included), no module over 900 lines,
one module per verb of the command line. The layers themselves are
import-linter's contract (pyproject.toml), run by .ci/run."""

import importlib.util
from pathlib import Path

import dperm

SRC = Path(dperm.__file__).parents[1]
TOOL = Path(__file__).parents[1] / "tools" / "import_cycles.py"


def _cycles_tool():
    spec = importlib.util.spec_from_file_location("import_cycles", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_import_cycle_in_dperm():
    graph = _cycles_tool().Graph(SRC)
    assert graph.cycles() == []


def test_the_cycle_count_sees_lazy_imports_and_re_exports(tmp_path):
    # a package whose b imports a's name through the package's re-export, inside a function
    package = tmp_path / "dperm"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from .a import A\n")
    (package / "sub" / "a.py").write_text("from . import b\nA = 1\n")
    (package / "sub" / "b.py").write_text("def f():\n    from dperm.sub import A\n    return A\n")
    tool = _cycles_tool()
    assert tool.Graph(tmp_path).cycles() == [["dperm.sub.a", "dperm.sub.b"]]
    (package / "sub" / "b.py").write_text("def f():\n    return 1\n")
    assert tool.Graph(tmp_path).cycles() == []



def test_no_module_over_900_lines():
    long = {str(p.relative_to(SRC)): n for p in (SRC / "dperm").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 900}
    assert long == {}


def test_the_command_line_imports_only_the_verb_that_runs():
    # pip's commands_dict: the parser names each verb's module; building it imports none
    from dperm.cli import _parser

    assert set(_parser.COMMANDS.values()) == {"algorithms", "audit", "bench", "budget", "demo", "fit", "predict",
                                               "warmup"}
    for name, module in _parser.COMMANDS.items():
        assert hasattr(importlib.import_module(f"dperm.cli.{module}"), name)
