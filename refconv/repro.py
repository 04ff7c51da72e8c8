"""Reproducer files: one JSON file per minimised failure, replayable with ``refconv repro FILE``.

The file holds the variant id, the one-line case (problem descriptor ``@`` launch params), the
inputs themselves (dtype, shape, base64 bytes — so a replay does not depend on the fill
generator), the verdict and any findings.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

import numpy as np

from .checking import ExampleResult, acceptance_for, check_example, expected_output_layout, interior_offset
from .problem import Problem
from .strategies import describe_case
from .variant import Variant

FORMAT = "refconv-reproducer/1"


def _enc(a: np.ndarray) -> dict:
    a = np.ascontiguousarray(a)
    return {"dtype": a.dtype.str, "shape": list(a.shape), "b64": base64.b64encode(a.tobytes()).decode()}


def _dec(d: dict) -> np.ndarray:
    return np.frombuffer(base64.b64decode(d["b64"]), dtype=np.dtype(d["dtype"])).reshape(d["shape"]).copy()


def save_reproducer(directory, variant: Variant, problem: Problem, params: dict, result: ExampleResult,
                    profile: str = "") -> Path:
    case = describe_case(problem, params)
    h = hashlib.sha1(f"{variant.id} {case}".encode()).hexdigest()[:10]
    path = Path(directory) / f"{variant.id.replace('/', '__')}-{h}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"format": FORMAT, "variant": variant.id, "case": case, "descriptor": problem.descriptor(),
           "params": params, "profile": profile, "status": result.status, "message": result.message,
           "result": result.to_dict(), "findings": result.findings,
           "inputs": {k: _enc(v) for k, v in problem.inputs.items()},
           "replay": f"refconv repro {path}"}
    path.write_text(json.dumps(doc, indent=1, default=str))
    return path


def load_reproducer(path) -> dict:
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"reproducer file {str(path)!r} does not exist")
    try:
        doc = json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a refconv reproducer (invalid JSON: {e})")
    if doc.get("format") != FORMAT:
        raise ValueError(f"{path}: format {doc.get('format')!r}, expected {FORMAT!r}")
    return doc


def replay(doc: dict, variant: Variant, params: dict | None = None):
    """Re-run the saved case; returns ``(problem, params, ExampleResult, got_buffer)``."""
    problem = Problem.parse(doc["descriptor"]).with_inputs({k: _dec(v) for k, v in doc["inputs"].items()})
    params = dict(doc["params"] if params is None else params)
    kept: dict = {}
    result = check_example(variant, problem, params, keep=kept)
    out = kept.get("out")
    return problem, params, result, (out if isinstance(out, np.ndarray) else None)


def diff_rows(problem: Problem, variant: Variant, got: np.ndarray, limit: int = 20):
    """Rows ``(index, got, expected)`` of the elements that differ (bitwise, NaN == NaN),
    including border elements a ``writes="interior"`` variant touched."""
    exp = np.asarray(acceptance_for(problem).expected)
    if variant.writes == "interior":
        shape, dtype = expected_output_layout(problem, "interior", exp)
        full = np.zeros(shape, dtype)
        r0, c0 = interior_offset(problem)
        ho, wo = exp.shape[-2:]
        full[..., r0:r0 + ho, c0:c0 + wo] = exp
        exp_show = full
    else:
        exp_show = exp
    if got.shape != exp_show.shape:
        return [], 0
    same = (got == exp_show) | (np.isnan(got) & np.isnan(exp_show) if got.dtype.kind == "f" else False)
    idx = np.argwhere(~same)
    return [(tuple(int(i) for i in ix), got[tuple(ix)], exp_show[tuple(ix)]) for ix in idx[:limit]], len(idx)


def default_dir() -> str:
    return os.environ.get("REFCONV_FAILURES", os.path.join(".refconv", "failures"))
