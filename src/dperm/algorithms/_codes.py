"""The integer codes the compiled kernels (:mod:`dperm.algorithms._kernels`) take for a
projection: shared vocabulary in a leaf, so the Python drivers can name a projection
without importing numba."""

__all__ = ["PROJ_NONE", "PROJ_L2", "PROJ_L1", "PROJ_BOX"]

PROJ_NONE, PROJ_L2, PROJ_L1, PROJ_BOX = 0, 1, 2, 3
