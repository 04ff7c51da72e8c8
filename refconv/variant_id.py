"""The id of a variant, ``op/backend/name`` (``Variant.id``): the one place that reads it back.

The rule: an id is exactly three non-empty parts joined by ``/`` -- the op, the backend, the
variant's name -- so ``str(VariantId.parse(s)) == s`` for every accepted ``s``.  Registry lookup,
the JUnit report, the bench (twins, coarsening, rows), reproducers and merges read ids only
through :meth:`VariantId.parse`; nothing splits an id by hand.
"""
from __future__ import annotations

from dataclasses import dataclass

#: the accepted form, as error messages name it
FORM = "op/backend/name"


@dataclass(frozen=True, order=True)
class VariantId:
    """A parsed variant id: ``.op``, ``.backend``, ``.name``; ``str()`` gives ``op/backend/name``."""

    op: str
    backend: str
    name: str

    def __post_init__(self):
        for field, value in (("op", self.op), ("backend", self.backend), ("name", self.name)):
            if not isinstance(value, str) or not value or "/" in value:
                raise ValueError(f"variant id part {field}={value!r} not accepted; accepted: a non-empty "
                                 f"string without '/' (an id is {FORM})")

    @classmethod
    def parse(cls, text: str) -> VariantId:
        """The id ``text`` (``op/backend/name``); ``ValueError`` naming ``text`` and the accepted form
        when it has not exactly three non-empty parts."""
        parts = text.split("/") if isinstance(text, str) else []
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"variant id {text!r} not accepted; accepted: {FORM} (three non-empty parts "
                             "separated by '/')")
        return cls(*parts)

    def __str__(self) -> str:
        return f"{self.op}/{self.backend}/{self.name}"
