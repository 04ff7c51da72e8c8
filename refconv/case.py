"""One example as a value: :class:`Case` ``(problem, params)``.

Its text form is the one-line case of reports, reproducers and the live progress::

    filter2d:dtype=uint8,c=0,h=5,w=6,kh=3,kw=3:boundary=valid,...:image=zero.0 @ bx=8 by=4

the problem's descriptor (:meth:`refconv.problem.Problem.descriptor`), then `` @ `` and the
launch parameters as ``key=value`` words when the variant has any.  ``str(case)`` writes it and
:meth:`Case.parse` reads it back; nothing else in refconv splits or joins that line.  Cases cross
process boundaries (worker → parent) as this text, not as objects: a problem may carry arrays.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .problem import Problem

#: what separates the descriptor from the launch parameters in the text form
SEP = " @ "


def format_params(params: dict) -> str:
    """``{"bx": 8, "by": 4}`` → ``"bx=8 by=4"`` (the part after `` @ ``)."""
    return " ".join(f"{k}={v}" for k, v in params.items())


def parse_params(text: str) -> dict[str, Any]:
    """Inverse of :func:`format_params` (also ``refconv repro --params 'bx=8 by=4'``): integers,
    ``True``/``False``, anything else kept as a string."""
    out: dict[str, Any] = {}
    for item in (text or "").split():
        k, _, v = item.partition("=")
        out[k] = int(v) if v.lstrip("-").isdigit() else ({"True": True, "False": False}.get(v, v))
    return out


@dataclass(frozen=True)
class Case:
    """A problem and the launch parameters it runs with."""

    problem: Problem
    params: dict = field(default_factory=dict)

    def __str__(self) -> str:
        ps = format_params(self.params)
        return self.problem.descriptor() + (f"{SEP}{ps}" if ps else "")

    @property
    def descriptor(self) -> str:
        return self.problem.descriptor()

    @classmethod
    def parse(cls, text: str) -> "Case":
        """Inverse of ``str(case)``; ``ValueError`` when the descriptor part is malformed."""
        desc, _, ps = text.partition(SEP)
        return cls(Problem.parse(desc.strip()), parse_params(ps))

    @staticmethod
    def descriptor_of(text: str | None) -> str:
        """The descriptor part of a case line, without parsing it (``""`` for no line): for a line
        kept as reported, e.g. the case a killed worker was running."""
        return (text or "").partition(SEP)[0].strip()

    @staticmethod
    def join(descriptor: str, params: dict | None) -> str:
        """The case line of a descriptor and params kept apart (a report's ``failure`` dict)."""
        ps = format_params(params or {})
        return (descriptor or "") + (f"{SEP}{ps}" if ps else "")
