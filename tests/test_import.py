"""``import dperm`` is light: public names and submodules are loaded on first use."""

import subprocess
import sys

import pytest

import dperm

_HEAVY = ("numpy", "scipy", "sklearn", "numba", "dp_accounting", "dperm.algorithms", "dperm.estimators")


def test_import_dperm_loads_no_heavy_dependency():
    code = f"import dperm, sys; print(','.join(m for m in {_HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("name", dperm.__all__)
def test_every_public_name_resolves(name):
    assert getattr(dperm, name) is not None
    assert name in dir(dperm)


def test_public_names_are_the_defining_objects():
    from dperm.estimators.linear import DPLogisticRegression
    from dperm.problem.erm import ERMProblem

    assert dperm.DPLogisticRegression is DPLogisticRegression
    assert dperm.ERMProblem is ERMProblem
    assert dperm.problem.ERMProblem is ERMProblem
    assert dperm.datasets.__name__ == "dperm.datasets"  # subpackages outside __all__ too


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        dperm.not_a_name
    assert not hasattr(dperm, "also_missing")
