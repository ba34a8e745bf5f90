"""Warnings raised for the user point at the user's line.

A fixed ``stacklevel`` is right for one call path only: the same ``DataNormWarning`` is
reached from ``dperm.minimize``, from an estimator's ``fit`` (through scikit-learn's
``fit`` wrapper), from a pipeline and from scikit-learn's search tools, at different
depths, and a fixed level then names a line inside dperm. :func:`user_stacklevel` counts
the frames instead: the level of the first caller outside dperm, scikit-learn (which calls
dperm's ``fit`` from its own wrappers and meta-estimators) and joblib (through which
scikit-learn's search tools run their fits). Pass it where the
warning is raised: ``warnings.warn(message, Category, stacklevel=user_stacklevel())``.
A leaf: imports nothing of dperm.
"""

from __future__ import annotations

import os
import sys

__all__ = ["user_stacklevel"]

_DPERM = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _library_folders() -> tuple[str, ...]:
    folders = [_DPERM]
    for name in ("sklearn", "joblib"):  # scikit-learn's search tools run fits through joblib
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            folders.append(os.path.dirname(os.path.abspath(module.__file__)) + os.sep)
    return tuple(folders)


def user_stacklevel() -> int:
    """The ``stacklevel`` of ``warnings.warn`` that names the first frame outside dperm,
    scikit-learn and joblib, counted from the function that calls ``warnings.warn`` (which must call
    this in the same statement). Where every frame is inside (a worker thread), the
    outermost one."""
    folders = _library_folders()
    frame = sys._getframe(1)  # the function that raises the warning: level 1
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(folders):
        frame = frame.f_back
        level += 1
    return level
