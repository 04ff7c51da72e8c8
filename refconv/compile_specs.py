"""Backend-neutral compile-check specialisations: for one variant, the tiny problems and launch
parameters a GPU-less compile check should compile it for.

A compile check (a backend's ``Backend.preflight`` that compiles its kernels for a real GPU
without one; any backend may use the same list) compiles the kernels a variant launches for a few small problems inside its ``supports``
crossed with its launch parameters, instead of the thousands the checker draws.
:func:`specialisations` lists them: the variant's default ``Param`` values plus combinations
that cover every value of every ``Param`` (``mode="all"``: the whole product), for every
supported dtype, on one tiny problem (the sizes of the op record's ``compile_dims``, the
variant's ``constraint`` respected), plus each value of each small option domain once, defaults elsewhere.
"""
from __future__ import annotations

import itertools
import json

#: the launch-parameter sweeps of :func:`specialisations`
MODES = ("cover", "all", "defaults")
#: where an unbounded domain is cut for the compile check (a dilation of 16 leaves no output)
UNBOUNDED_CAP = {"stride": 2, "padding": 2, "dilation": 2}


def _candidates(dim, dom, preferred):
    """Values of ``dim`` to compile for: ``preferred`` (the op record's ``compile_dims``) where the
    domain allows it, and the domain's ends (unbounded ones cut at :data:`UNBOUNDED_CAP`)."""
    from refconv.variant import Range
    if isinstance(dom, Range):
        pref = preferred.get(dim, dom.lo)
        dom = dom.cap(max(dom.lo, UNBOUNDED_CAP.get(dim, 16)))   # unbounded: compile for small ones
        vals = [min(max(pref, dom.lo), dom.hi), dom.lo, dom.hi]
    else:
        vals = list(dom)
    out = []
    for v in vals:
        if v not in out:
            out.append(v)
    return out


def output_layout(problem, writes: str = "all") -> tuple:
    """``(shape, dtype)`` of the output a variant writes for ``problem``, from the op's plain spec
    (not its acceptance bounds: cheap on the tiny problems here); raises what the spec raises for a
    problem it refuses (an option that does not apply to the dtype ...)."""
    from refconv.checking import expected_output_layout
    rec = problem.record
    if rec.rows is not None:
        shape, dtype, _ = rec.rows(problem.inputs)
        return tuple(shape), dtype
    args, kwargs = problem.spec_args()
    return expected_output_layout(problem, writes, expected=rec.spec(*args, **kwargs))


def _param_combos(variant, mode: str, max_param_combos: int) -> list:
    """The launch-parameter combinations ``mode`` compiles (see :func:`specialisations`)."""
    params = list(variant.params)
    default_params = variant.default_params()
    names = [p.name for p in params]
    if mode == "all":
        return [dict(zip(names, vals))
                for vals in itertools.product(*[p.values for p in params])][:max_param_combos] or [{}]
    combos = [default_params]
    if mode == "defaults":
        return combos
    # "cover": the defaults, then a diagonal that gives every value of every parameter once
    width = max((len(p.values) for p in params), default=0)
    for i in range(width):
        c = {p.name: p.values[i % len(p.values)] for p in params}
        if c not in combos:
            combos.append(c)
    return combos


def specialisations(variant, mode: str = "cover", max_param_combos: int = 256) -> list:
    """``[(params, problem_descriptor)]`` for ``variant`` (see the module docstring of
    :mod:`refconv.compile_specs`).  ``mode``
    ``"all"``: every combination of the launch parameters' values; ``"cover"`` (default): the
    defaults plus enough combinations that every value of every parameter is compiled once;
    ``"defaults"``: the default launch parameters only (every dtype and option value still
    compiled once: the cheap sweep the test suite's conformance runs use)."""
    if mode not in MODES:
        raise ValueError(f"compile-check parameter mode {mode!r} not accepted; accepted: {', '.join(MODES)}")
    from refconv import ops
    from refconv.problem import Problem

    od = ops.get(variant.op)
    sup = variant.supports
    combos = _param_combos(variant, mode, max_param_combos)
    default_params = variant.default_params()

    def dom(k, default):
        return sup.get(k, default)

    preferred = ops.get(variant.op).compile_dims
    dims0 = {k: _candidates(k, dom(k, d), preferred) for k, d in od.dims.items()}
    opts0 = {k: _candidates(k, dom(k, d), preferred) for k, d in od.options.items()}
    dtypes = dims0.get("dtype", [None])

    def make(dtype, params, opt_over=None):
        # first combination of candidate dims / options that builds and that the constraint takes
        base_d = {k: v[0] for k, v in dims0.items()}
        base_o = {k: v[0] for k, v in opts0.items()}
        if dtype is not None:
            base_d["dtype"] = dtype
        if opt_over:
            base_o.update(opt_over)
        tries = [base_d]
        for k, vals in dims0.items():
            for v in vals[1:]:
                if k != "dtype":
                    tries.append({**base_d, k: v})
        for d in tries:
            o = {k: v for k, v in base_o.items() if v is not None or k in sup}
            try:
                p = Problem(variant.op, d, o)
                _ = p.input_shapes()
                output_layout(p, variant.writes)   # the spec takes it (an option may not apply to a dtype)
            except Exception:
                continue
            if variant.constraint is not None:
                try:
                    if variant.constraint(p, params):
                        continue
                except Exception:
                    continue
            return p
        return None

    out, seen = [], set()
    for dt in dtypes:
        for pr in combos:
            p = make(dt, pr)
            if p is not None and (key := (json.dumps(pr, sort_keys=True, default=str), p.descriptor())) not in seen:
                seen.add(key)
                out.append((pr, p.descriptor()))
    for k, vals in opts0.items():
        if len(vals) < 2 or len(vals) > 6:
            continue
        for v in vals[1:]:
            p = make(dtypes[0], default_params, {k: v})
            if p is not None and (key := (json.dumps(default_params, sort_keys=True, default=str), p.descriptor())) not in seen:
                seen.add(key)
                out.append((default_params, p.descriptor()))
    return out
