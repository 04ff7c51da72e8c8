"""Compatibility name: the op-record vocabulary lives in :mod:`refconv.specs.record`."""
from .specs.record import ROLES, BenchProblem, Directed, Input, OpRecord, Range  # noqa: F401
