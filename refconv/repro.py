"""Reproducer files: one JSON file per minimised failure, replayable with ``refconv repro FILE``.

The file holds the variant id, the one-line case (:class:`refconv.case.Case`: problem descriptor
``@`` launch params), the inputs themselves (dtype, shape, base64 bytes — so a replay does not
depend on the fill generator), the verdict and any findings, and how the run that found it was
configured: ``backend_options`` (the values of every backend option, e.g. ``{"target": "sim",
"check": true}``) and ``tolerance`` (the float verdict).  ``refconv repro`` replays with those
unless the command line or the environment sets them, so a finding of an instrumented target
(a sanitizer, a checking simulator) is replayed under the same instrument.
"""
from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import numpy as np

from .checking import (ExampleResult, acceptance_for, check_example, expected_output_layout, interior_offset,
                       poison_value)
from .case import SEP, Case, format_params, parse_params
from .errors import UsageError
from .jsonfile import read_json, write_json
from .problem import Problem
from .tolerance import default_mode
from .variant import Variant

FORMAT = "refconv-reproducer/1"


def _enc(a: np.ndarray) -> dict:
    a = np.ascontiguousarray(a)
    return {"dtype": a.dtype.str, "shape": list(a.shape), "b64": base64.b64encode(a.tobytes()).decode()}


def _dec(d: dict) -> np.ndarray:
    return np.frombuffer(base64.b64decode(d["b64"]), dtype=np.dtype(d["dtype"])).reshape(d["shape"]).copy()


def options_tag(variant: Variant, backend_options: dict) -> str:
    """The options of ``variant``'s backend that differ from their defaults, as a file-name part
    (``target-sim``, ``check``; ``""`` when all are defaults), so that the reproducers of
    one case found under two targets or instruments are two files, not one overwritten."""
    import re

    from .registry import backends
    from .variant import Backend
    b = backends().get(variant.backend)
    words = []
    for o in (b.options if isinstance(b, Backend) else ()):
        v = backend_options.get(o.dest)
        default = bool(o.default) if o.is_flag else o.default
        if v is None or v == default or (o.is_flag and not v):
            continue
        words.append(o.dest if o.is_flag else f"{o.dest}-{v}")
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", "+".join(words))


def save_reproducer(directory, variant: Variant, problem: Problem, params: dict, result: ExampleResult,
                    profile: str = "", backend_options: dict | None = None, tolerance: str | None = None) -> Path:
    """Write the reproducer of ``result`` under ``directory``; ``backend_options``: the backend
    option values of the run (recorded, re-applied by the replay, and those of the variant's
    backend that are not defaults named in the file name: :func:`options_tag`); ``tolerance``:
    its float verdict (default: ``REFCONV_TOLERANCE``, else proven).  The file is
    ``<op>__<backend>__<name>[__<options>]-<hash of id, case and options>.json``."""
    case = str(Case(problem, params))
    tag = options_tag(variant, backend_options or {})
    h = hashlib.sha1(f"{variant.id} {case}{' ' + tag if tag else ''}".encode()).hexdigest()[:10]
    path = Path(directory) / f"{variant.id.replace('/', '__')}{'__' + tag if tag else ''}-{h}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"format": FORMAT, "variant": variant.id, "case": case, "descriptor": problem.descriptor(),
           "params": params, "profile": profile,
           "backend_options": dict(backend_options or {}),
           "tolerance": tolerance or default_mode(),
           "status": result.status, "message": result.message,
           "result": result.to_dict(), "findings": result.findings,
           "inputs": {k: _enc(v) for k, v in problem.inputs.items()},
           "replay": f"refconv repro {path}"}
    write_json(path, doc)
    return path


REQUIRED = {"variant": str, "case": str, "descriptor": str, "params": dict, "inputs": dict}


def load_reproducer(path) -> dict:
    """Read and validate a reproducer file (:func:`validate_reproducer`); ``FileNotFoundError`` or
    ``UsageError`` with one line naming the file and what is wrong."""
    doc = read_json(path, "reproducer file")
    validate_reproducer(doc, str(path))
    return doc


def validate_reproducer(doc, name: str = "reproducer") -> None:
    """The rules a reproducer must meet before it is replayed: a JSON object of format
    :data:`FORMAT`; the keys of :data:`REQUIRED` with their types; a parseable ``descriptor`` equal
    to the descriptor part of the ``case`` line; exactly the inputs that case needs, each with the
    dtype and shape the case line implies and as many bytes as that shape holds.  ``UsageError``
    naming the first rule broken."""
    if not isinstance(doc, dict):
        raise UsageError(f"{name}: not a refconv reproducer (a JSON {type(doc).__name__}, expected an object)")
    if doc.get("format") != FORMAT:
        raise UsageError(f"{name}: format {doc.get('format')!r}, expected {FORMAT!r}")
    missing = [k for k in REQUIRED if k not in doc]
    if missing:
        raise UsageError(f"{name}: missing key(s) {', '.join(map(repr, missing))}; a reproducer has "
                         f"{', '.join(map(repr, REQUIRED))}")
    for k, t in REQUIRED.items():
        if not isinstance(doc[k], t):
            raise UsageError(f"{name}: {k!r} is a {type(doc[k]).__name__}, expected a "
                             f"{'JSON object' if t is dict else 'string'}")
    case_desc = Case.descriptor_of(doc["case"])
    if case_desc != doc["descriptor"]:
        raise UsageError(f"{name}: the case line {doc['case']!r} does not match the descriptor {doc['descriptor']!r}")
    try:
        problem = Problem.parse(doc["descriptor"])
    except (ValueError, KeyError, TypeError) as e:
        raise UsageError(f"{name}: bad descriptor: {e}") from None
    if not isinstance(doc.get("backend_options", {}), dict):
        raise UsageError(f"{name}: 'backend_options' is a {type(doc['backend_options']).__name__}, expected a JSON object")
    if doc.get("tolerance") not in (None, "proven", "probabilistic"):
        raise UsageError(f"{name}: tolerance {doc['tolerance']!r}, expected 'proven' or 'probabilistic'")
    from . import ops
    shapes = problem.input_shapes()
    if set(doc["inputs"]) != set(shapes):
        raise UsageError(f"{name}: inputs {sorted(doc['inputs'])}; the case line {case_desc!r} needs {sorted(shapes)}")
    for k, shape in shapes.items():
        d = doc["inputs"][k]
        if not isinstance(d, dict) or not {"dtype", "shape", "b64"} <= set(d):
            raise UsageError(f"{name}: input {k!r} needs 'dtype', 'shape' and 'b64'")
        want_dt = ops.get(problem.op).input_dtype(k, problem.dims)
        try:
            dt = np.dtype(d["dtype"])
        except TypeError:
            raise UsageError(f"{name}: input {k!r} has dtype {d['dtype']!r}, not a NumPy dtype") from None
        if dt != want_dt:
            raise UsageError(f"{name}: input {k!r} has dtype {dt}; the case line {case_desc!r} needs {want_dt}")
        if list(d["shape"]) != list(shape):
            raise UsageError(f"{name}: input {k!r} has shape {list(d['shape'])}; the case line {case_desc!r} "
                             f"needs {list(shape)}")
        try:
            nbytes = len(base64.b64decode(d["b64"], validate=True))
        except (ValueError, TypeError):
            raise UsageError(f"{name}: input {k!r}: 'b64' is not base64") from None
        if nbytes != int(np.prod(shape)) * dt.itemsize:
            raise UsageError(f"{name}: input {k!r} holds {nbytes} bytes; shape {list(shape)} of {dt} needs "
                             f"{int(np.prod(shape)) * dt.itemsize}")


def check_params(variant: Variant, params: dict, what: str = "--params") -> None:
    """Launch ``params`` must be declared by ``variant`` and take one of the declared values, of
    the declared value's type (``2.0`` or ``True`` is not the integer ``2`` or ``1`` a kernel
    takes); ``UsageError`` naming ``what``, the parameter and the accepted values otherwise."""
    declared = {p.name: p for p in variant.params}
    for k, val in params.items():
        val = tuple(val) if isinstance(val, list) else val  # JSON turns a tuple value into a list
        if k not in declared:
            raise UsageError(f"{what}: {variant.id} has no launch parameter {k!r}; accepted: "
                             f"{', '.join(declared) or 'none (the variant takes no parameters)'}")
        values = declared[k].values
        if val not in values:
            raise UsageError(f"{what}: {k}={val!r} not accepted by {variant.id}; accepted: "
                             f"{', '.join(map(str, values))}")
        if not any(d == val and _same_type(d, val) for d in values):
            want = type(next(d for d in values if d == val)).__name__
            raise UsageError(f"{what}: {k}={val!r} is {_a(type(val).__name__)}; {variant.id} takes "
                             f"{_a(want)}: one of {', '.join(map(str, values))}")


def _same_type(a, b) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same_type(x, y) for x, y in zip(a, b))
    return type(a) is type(b)


def _a(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def check_fits(variant: Variant, doc: dict, name: str) -> None:
    """A valid reproducer (:func:`validate_reproducer`) must also fit ``variant``, the one it names:
    a case of the variant's op; saved ``params`` the variant declares, of their types
    (:func:`check_params`); a case line whose launch parameters are those ``params``.
    ``UsageError`` naming ``name`` and the first rule broken."""
    op = Problem.parse(doc["descriptor"]).op
    if op != variant.op:
        raise UsageError(f"{name}: the case is of op {op!r}, but {variant.id} is a variant of op "
                         f"{variant.op!r}; a reproducer replays a case of its variant's own op")
    check_params(variant, doc["params"], what=f"{name}: saved params")
    saved = format_params({k: tuple(v) if isinstance(v, list) else v for k, v in doc["params"].items()})
    line = doc["case"].partition(SEP)[2].strip()
    if line != saved:
        check_params(variant, parse_params(line), what=f"{name}: case line")
        raise UsageError(f"{name}: the case line's launch parameters {line or '(none)'!r} do not match "
                         f"its 'params' {saved or '(none)'!r}")


def recorded_options(doc: dict) -> tuple[dict, str | None]:
    """The backend option values and the float verdict the saving run recorded (``{}`` and
    ``None`` for a file written before they were recorded)."""
    return dict(doc.get("backend_options") or {}), doc.get("tolerance")


def saved_problem(doc: dict) -> Problem:
    """The saved case with its saved input arrays (not regenerated from the fills)."""
    return Problem.parse(doc["descriptor"]).with_inputs({k: _dec(v) for k, v in doc["inputs"].items()})


def replay(doc: dict, variant: Variant, params: dict | None = None):
    """Re-run the saved case; returns ``(problem, params, ExampleResult, got_buffer)``."""
    problem = saved_problem(doc)
    params = dict(doc["params"] if params is None else params)
    kept: dict = {}
    result = check_example(variant, problem, params, keep=kept)
    out = kept.get("out")
    return problem, params, result, (out if isinstance(out, np.ndarray) else None)


def _replayer(send, variant_id: str, descriptor: str):
    """The worker's ``setup`` (:mod:`refconv.worker`): a task ``(doc, params)`` is answered with
    ``("result", ExampleResult, got)``, or ``("invalid", why)`` when the case cannot be run."""
    from .worker import warm_variant
    v = warm_variant(variant_id, descriptor)

    def run(task):
        doc, params = task
        try:
            _, _, r, got = replay(doc, v, params)
        except Exception as e:  # noqa: BLE001 - the case itself is bad (e.g. outside the spec's domain)
            return ("invalid", f"{type(e).__name__}: {e}")
        return ("result", r, np.asarray(got))
    return run


def replay_in_worker(doc: dict, params: dict | None, *, timeout: float, backend_options: dict,
                     start_timeout: float = 300.0, tolerance: str | None = None):
    """:func:`replay` in a worker process (:class:`refconv.worker.Worker`, killed with its process
    group afterwards), so a case that hangs or crashes cannot take the caller with it.  Returns
    ``("result", ExampleResult, got)``, ``("hang", message, None)`` when the replay is still running
    after ``timeout`` seconds (counted from the worker's start-up being done, judged as the check
    judges an example), ``("crash", message, None)`` when the worker died, or ``("invalid", message,
    None)`` when the case cannot be run (the spec refuses it).  ``tolerance``: the float verdict of
    the replay (``None``: the worker's default)."""
    from .worker import Ended, Worker
    w = Worker(_replayer, doc["variant"], doc["descriptor"], backend_options=backend_options, tolerance=tolerance,
               start_limit=start_timeout, start_says=f"hang: the worker did not start in {start_timeout:g}s (killed)")
    try:
        got = w.wait()
        if not isinstance(got, Ended):
            w.send((doc, params))
            w.example(timeout)
            got = w.wait()
    finally:
        w.kill()
    if isinstance(got, Ended):
        return (got.kind, got.reason, None)
    return ("result", got[1], got[2]) if got[0] == "result" else ("invalid", got[1], None)


#: the expected value a diff shows for a border element an interior-only variant wrote
UNTOUCHED = "untouched (the border keeps its poison)"


def diff_rows(problem: Problem, variant: Variant, got: np.ndarray, limit: int = 20):
    """Rows ``(index, got, expected)`` of what the variant wrote wrong, and their count: elements
    that differ from the spec (bitwise, NaN == NaN).  For a ``writes="interior"`` variant, its
    interior against the spec and each border element it changed (no longer the poison the check
    put there, compared bitwise), expected :data:`UNTOUCHED`; the border it left alone is no
    difference."""
    exp = np.asarray(acceptance_for(problem).expected)
    if variant.writes != "interior":
        if got.shape != exp.shape:
            return [], 0
        idx = np.argwhere(~_equal(got, exp))
        return [(tuple(int(i) for i in ix), got[tuple(ix)], exp[tuple(ix)]) for ix in idx[:limit]], len(idx)
    shape, dtype = expected_output_layout(problem, "interior", exp)
    if got.shape != tuple(shape):
        return [], 0
    r0, c0 = interior_offset(problem)
    inner = (..., slice(r0, r0 + exp.shape[-2]), slice(c0, c0 + exp.shape[-1]))
    u = np.dtype(f"u{got.dtype.itemsize}")
    wrong = np.ascontiguousarray(got).view(u) != np.asarray(poison_value(dtype, exp), got.dtype).view(u)
    wrong[inner] = ~_equal(got[inner], exp)
    ho, wo = exp.shape[-2:]

    def expected(ix):
        r, c = ix[-2] - r0, ix[-1] - c0
        return exp[(*ix[:-2], r, c)] if 0 <= r < ho and 0 <= c < wo else UNTOUCHED
    found = np.argwhere(wrong)
    idx = [tuple(int(i) for i in ix) for ix in found[:limit]]
    return [(ix, got[ix], expected(ix)) for ix in idx], len(found)


def _equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise ``a == b``, NaN equal to NaN."""
    same = a == b
    return same | (np.isnan(a) & np.isnan(b)) if a.dtype.kind == "f" else same


def save_hang_reproducers(results, failures_dir, profile, backend_options: dict | None = None,
                          tolerance: str | None = None) -> None:
    """Hangs are detected by the parent (the worker was killed): save their case as a reproducer,
    with the backend options of the run.  One that cannot be saved keeps its error and says why
    in ``reproducer_error`` (and on stderr)."""
    import sys
    if not failures_dir:
        return
    from . import registry
    for r in results.values():
        if r.status == "error" and r.failure and r.failure.get("case") and r.reproducer is None:
            try:
                v = registry.get(r.variant)
                c = Case.parse(r.failure["case"])
                er = ExampleResult("error", c.descriptor, c.params, message=r.reason)
                r.reproducer = str(save_reproducer(failures_dir, v, c.problem, c.params, er, profile,
                                                   backend_options=backend_options, tolerance=tolerance))
            except Exception as e:  # the error stays reported, with its case; say why there is no file
                r.reproducer_error = f"{failures_dir}: {type(e).__name__}: {e}"
                print(f"refconv: warning: could not save the reproducer of {r.variant} in {failures_dir}: "
                      f"{type(e).__name__}: {e}", file=sys.stderr)
