"""The compile check's findings: one dict per finding (``class``, ``message``, ``variant``, and
the fields of its kind), as every ``Backend.preflight`` returns them (:mod:`refconv.preflight`)."""
from __future__ import annotations


def finding(cls, message, vid, **kw) -> dict:
    return {"class": cls, "message": message, "variant": vid, **kw}
