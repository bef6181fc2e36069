"""Fixtures of the whole-body control tests."""
from tests.planning.conftest import pydrake  # noqa: F401  (pydrake.all, or skip)
