"""Adding an op is one spec module: a toy op defined entirely in one module's source below (its
spec, its record with its acceptance engine, profile caps, GPU shapes and peers; NumPy and
``refconv.specs`` its only imports) is drawn, checked, sized, benchmarked, timed against its peers
and offered by ``--op`` by the unchanged core; and the built-in records read their defaults from
their specs."""
import importlib.util
import inspect
import sys
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings

from refconv import ops
from refconv.bench import roofline
from refconv.checking import check_example
from refconv.problem import Problem
from refconv.runner import check_variant
from refconv.specs.peer import PeerCall
from refconv.specs.record import Input, OpRecord, Range
from refconv.strategies import cases, outside_support
from refconv.tolerance import acceptance
from refconv.variant import Backend, Param, Variant


# ----------------------------------------------------------------------------- the toy op, whole

SCALE_SPEC = '''
"""``scale``: a throw-away op, one spec module (what specs/<op>.py holds)."""
import numpy as np

from refconv.specs.dotbound import dot
from refconv.specs.intervals import exact_set
from refconv.specs.peer import PeerCall, cuda_tensor
from refconv.specs.record import BenchProblem, Input, OpRecord, Range


def scale(x, *, factor=3, offset=0, step=1):
    """``out[i] = x[i*step] * factor + offset`` for a 1-D int32 or float64 ``x`` (int32 wraps;
    float64: the product and the sum each rounded to nearest, no FMA)."""
    x = np.asarray(x)
    if x.ndim != 1 or x.dtype not in (np.int32, np.float64):
        raise TypeError(f"scale: x must be a 1-D int32 or float64 array, got {x.dtype} {x.shape}")
    if not 1 <= step <= len(x):
        raise ValueError(f"scale: step={step} outside 1..{len(x)}")
    t = x.dtype.type
    with np.errstate(all="ignore"):
        return x[::step] * t(factor) + t(offset)


def _accept(inputs, o):
    """int32: exact; float64: one dot product of two terms (FMA or not, any order)."""
    x = np.asarray(inputs["x"])[::o["step"]]
    if x.dtype.kind == "i":
        return exact_set(scale(inputs["x"], factor=o["factor"], offset=o["offset"], step=o["step"]))
    return dot(((np.float64(o["factor"]), x, None), (np.float64(1.0), np.float64(o["offset"]), None)),
               x.shape, np.float64)[0]


def _numpy_scale(problem):
    x, f, o, s = problem.inputs["x"], problem.option("factor"), problem.option("offset"), problem.option("step")
    return lambda: x[::s] * f + o


def _torch_scale(problem):
    x, f, o, s = cuda_tensor(problem.inputs["x"]), problem.option("factor"), problem.option("offset"), problem.option("step")
    return lambda: x[::s] * f + o


RECORD = OpRecord(
    name="scale",
    spec=scale,
    inputs=(Input("x"),),
    dims={"dtype": ("int32", "float64"), "length": Range(1)},
    options={"factor": Range(-4, 4), "offset": (0, 1, -7), "step": Range(1, 3)},
    shapes=lambda d: {"x": (d["length"],)},
    layout=lambda d, o: (((d["length"] + o["step"] - 1) // o["step"],), d["dtype"]),
    validity=lambda d, o: None if d["length"] >= o["step"] else f"step={o['step']} > length={d['length']}",
    accept=_accept,
    flops=lambda d, o, n_out: 2 * n_out,
    bench={"small": BenchProblem({"dtype": "float64", "length": 1000}, {"factor": 2}, {"x": "random.1"})},
    caps={"ci": {"length": 24}, "gpu": {"length": 4096}},
    profile_shapes={"gpu": ({"length": 65537}, {"length": 3})},
    peers=(PeerCall("torch_scale", "torch x[::step] * factor + offset", "gpu", _torch_scale, runtime="torch"),
           PeerCall("numpy_scale", "numpy x[::step] * factor + offset", "cpu", _numpy_scale)),
    baseline=("torch_scale", "numpy_scale"),
    compile_dims={"length": 8},
)
'''


def _module_from(source: str, name: str = "toy_scale_spec") -> types.ModuleType:
    mod = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), mod.__dict__)
    return mod


TOY = _module_from(SCALE_SPEC).RECORD
scale = TOY.spec


def _right(problem, out, block=4):     # block: a launch parameter, it changes nothing here
    x = problem.inputs["x"]
    o = {k: problem.option(k) for k in ("factor", "offset", "step")}
    out[...] = x[::o["step"]] * x.dtype.type(o["factor"]) + x.dtype.type(o["offset"])


def _ignores_step(problem, out):          # reads every element: wrong whenever step > 1
    x = problem.inputs["x"]
    n = out.shape[0]
    out[...] = x[:n] * x.dtype.type(problem.option("factor")) + x.dtype.type(problem.option("offset"))


def _skips_last(problem, out):            # forgets the last element
    full = np.empty_like(out)
    _right(problem, full)
    out[:-1] = full[:-1]


def _toy_backend() -> Backend:
    mk = lambda name, run, **kw: Variant("scale", "toy", name, run=run, **kw)  # noqa: E731
    return Backend("toy", variants=lambda: (
        mk("right", _right, params=(Param("block", (4, 8)),)),
        mk("ignores_step", _ignores_step),
        mk("skips_last", _skips_last, supports={"length": Range(2)})))


@pytest.fixture
def toy():
    ops.register_op(TOY)
    try:
        yield {v.name: v for v in _toy_backend().variants()}
    finally:
        ops.unregister_op("scale")


def test_the_toy_op_is_an_op_once_registered_and_not_before():
    assert "scale" not in ops.names() and not ops.has("scale")
    with pytest.raises(ValueError, match="scale"):
        Variant("scale", "toy", "right", run=_right)
    ops.register_op(TOY)
    try:
        assert "scale" in ops.names() and ops.get("scale") is TOY
        assert Variant("scale", "toy", "right", run=_right).id == "scale/toy/right"
        with pytest.raises(ValueError, match="already registered"):
            ops.register_op(OpRecord(**{**{f: getattr(TOY, f) for f in ("name", "spec", "inputs", "dims",
                                                                          "shapes", "layout")}}))
    finally:
        ops.unregister_op("scale")
    assert not ops.has("scale")


def test_the_toy_record_reads_its_defaults_from_the_spec(toy):
    assert TOY.defaults == {"factor": 3, "offset": 0, "step": 1}
    p = Problem("scale", {"dtype": "int32", "length": 5}, {}, {"x": "ramp.0"})
    assert p.option("factor") == 3 and p.option("step") == 1
    np.testing.assert_array_equal(p.output(), np.zeros(5, np.int32))


def test_a_record_whose_options_are_not_spec_keywords_is_refused():
    with pytest.raises(ValueError, match="keyword argument with a default"):
        OpRecord(name="bad", spec=scale, inputs=(Input("x"),), dims={"dtype": ("int32",), "length": Range(1)},
                 options={"gain": (1, 2)}, shapes=TOY.shapes, layout=TOY.layout)
    with pytest.raises(ValueError, match="first arguments"):
        OpRecord(name="bad", spec=scale, inputs=(Input("y"),), dims={"dtype": ("int32",)},
                 shapes=TOY.shapes, layout=TOY.layout)


def test_the_toy_problem_round_trips_sizes_and_benches(toy):
    p = Problem("scale", {"dtype": "float64", "length": 7}, {"factor": -2, "step": 3}, {"x": "random.4"})
    assert Problem.parse(p.descriptor()) == p
    out = scale(p.inputs["x"], factor=-2, step=3)
    assert roofline.output_layout(p) == (out.shape, out.dtype) == ((3,), np.dtype("float64"))
    assert roofline.work(p).flops == 6 and roofline.work(p).bytes == 7 * 8 + 3 * 8
    from refconv.bench import problems
    assert problems.bench_problem("scale", "small").dims == {"dtype": "float64", "length": 1000}


def test_drawn_toy_problems_keep_the_record_s_rule_and_caps(toy):
    seen = set()

    @settings(max_examples=80, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(cases(toy["right"], "ci"))
    def t(case):
        problem, params = case
        d, o = problem.dims, problem.options
        assert 1 <= d["length"] <= 24 and d["length"] >= o["step"] and set(o) == {"factor", "offset", "step"}
        assert params["block"] in (4, 8)
        seen.add((d["dtype"], o["step"]))
    t()
    assert {dt for dt, _ in seen} == {"int32", "float64"} and {st for _, st in seen} == {1, 2, 3}


def test_the_checker_accepts_the_right_toy_kernel(toy):
    res = check_variant(toy["right"], "ci", seed=1, db="none", failures_dir=None)
    assert res.status == "pass", res
    assert res.examples >= 20 and res.passed == res.examples - res.invalid


def test_the_checker_rejects_a_toy_kernel_that_ignores_an_option(toy):
    res = check_variant(toy["ignores_step"], "ci", seed=1, db="none", failures_dir=None)
    assert res.status == "fail", res
    assert res.failure and "not accepted" in res.failure["message"]
    assert Problem.parse(res.failure["descriptor"]).option("step") > 1


def test_the_checker_names_the_element_a_toy_kernel_leaves_unwritten(toy):
    p = Problem("scale", {"dtype": "float64", "length": 6}, {"step": 2}, {"x": "ramp.0"})
    r = check_example(toy["skips_last"], p, {})
    assert r.status == "fail" and r.n_unwritten == 1 and r.first_bad == (2,)


def test_the_toy_float_acceptance_takes_an_fma_and_refuses_a_wrong_ulp(toy):
    x = np.array([0.1, 1 / 3, 2.5e-8], np.float64)
    a = acceptance("scale", {"x": x}, {"factor": 3, "offset": 1})
    fma = np.array([np.float64(np.longdouble(v) * 3 + 1) for v in x])      # one rounding
    assert a.check(fma).ok and a.check(a.expected).ok
    assert not a.check(a.expected * (1 + 1e-12)).ok


def test_outside_support_applies_the_toy_record_rule(toy):
    v = toy["right"]
    ok = Problem("scale", {"dtype": "int32", "length": 3}, {"step": 3}, {})
    bad = Problem("scale", {"dtype": "int32", "length": 2}, {"step": 3}, {})
    assert outside_support(v, ok, {"block": 4}) is None
    assert outside_support(v, bad, {"block": 4}) == "step=3 > length=2"


# ----------------------------------------------------------------------------- one spec module is enough

def _load_spec_file(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def scale_file(tmp_path):
    """The toy op as a spec module file in a fresh directory, imported from there and registered."""
    path = tmp_path / "scale.py"
    path.write_text(SCALE_SPEC)
    mod = _load_spec_file(path)
    ops.register_op(mod.RECORD)
    try:
        yield path, mod
    finally:
        ops.unregister_op("scale")
        sys.modules.pop(path.stem, None)


def test_the_toy_spec_module_keeps_to_the_ground_floor(scale_file):
    from meta.test_spec_imports import _outside_the_ground_floor
    path, _ = scale_file
    assert _outside_the_ground_floor(path) == []


def test_the_profiles_take_the_toy_op_s_caps_and_gpu_shapes_from_its_module(scale_file):
    from refconv.profiles import get_profile
    from refconv.strategies import domain
    _, mod = scale_file
    v = Variant("scale", "toy", "right", run=_right)
    assert get_profile("ci").cap("scale", "length") == 24 and domain(v, "length", get_profile("ci")) == Range(1, 24)
    assert domain(v, "length", get_profile("gpu")) == Range(1, 4096)
    assert get_profile("gpu").configurations("scale") == ({"length": 65537}, {"length": 3})
    assert get_profile("ci").configurations("scale") == ()
    found = find(cases(v, "gpu"), lambda pp: pp[0].dims["length"] == 65537,
                 settings=settings(max_examples=200, database=None, suppress_health_check=list(HealthCheck)))
    assert found[0].op == "scale"


def test_the_bench_times_the_toy_op_s_peers_and_picks_its_baseline(scale_file):
    from refconv import peers, timing
    listed = dict((p.name, why) for p, why in peers.for_op("scale", "all"))
    assert set(listed) == {"torch_scale", "numpy_scale"} and listed["numpy_scale"] is None
    assert "numpy_scale" in peers.names()
    if listed["torch_scale"] is None:       # a GPU here: the GPU peer is the baseline
        assert peers.default_baseline("scale", peers.for_op("scale", "all")) == "torch_scale"
    else:
        assert peers.default_baseline("scale", peers.for_op("scale", "all")) == "numpy_scale"
    peer = next(p for p in peers.all_peers() if p.op == "scale" and p.name == "numpy_scale")
    run = peer.prepare(Problem("scale", {"dtype": "float64", "length": 9}, {"step": 2}, {"x": "ramp.0"}))
    with timing.collect() as iv:
        run()
    assert len(iv) == 1 and iv.seconds()[0] >= 0


def test_the_command_line_offers_the_toy_op(scale_file):
    from refconv import cli
    sub = next(a for a in cli.build_parser()._actions if a.dest == "cmd")
    op_help = next(a.help for a in sub.choices["check"]._actions if a.dest == "op")
    assert "scale" in op_help and all(r.name in op_help for r in ops.records())


def test_a_record_refuses_peers_it_cannot_use():
    base = {f: getattr(TOY, f) for f in ("name", "spec", "inputs", "dims", "options", "shapes", "layout")}
    cpu = PeerCall("np", "numpy", "cpu", lambda problem: (lambda: None))
    with pytest.raises(ValueError, match=r"baseline \['cuda'\] not accepted; accepted: peer names \['np'\]"):
        OpRecord(**base, peers=(cpu,), baseline=("cuda",))
    with pytest.raises(ValueError, match="not distinct"):
        OpRecord(**base, peers=(cpu, cpu))
    with pytest.raises(TypeError, match="peers must be a tuple of PeerCall"):
        OpRecord(**base, peers=("np",))
    with pytest.raises(ValueError, match=r"profile_shapes\['gpu'\] .* names \['size'\]"):
        OpRecord(**base, profile_shapes={"gpu": ({"size": 3},)})
    with pytest.raises(ValueError, match="a GPU peer's runtime is None; accepted"):
        PeerCall("t", "torch", "gpu", cpu.prepare)
    with pytest.raises(ValueError, match="device 'tpu' not accepted"):
        PeerCall("t", "torch", "tpu", cpu.prepare)


# ----------------------------------------------------------------------------- the built-in records

BUILTIN = ("filter2d", "conv2d", "sobel", "matvec", "kron")


@pytest.mark.parametrize("op", BUILTIN)
def test_each_record_reports_its_spec_s_signature_defaults(op):
    rec = ops.get(op)
    sig = inspect.signature(rec.spec).parameters
    assert rec.defaults == {k: p.default for k, p in sig.items()
                            if k not in rec.input_names and p.default is not inspect.Parameter.empty}
    assert set(rec.options) <= set(rec.defaults)
    # the spec called with the record's defaults spelled out gives what it gives without them
    bp = rec.bench["small"]
    p = Problem(op, bp.dims, {}, bp.fills)
    args, kwargs = p.spec_args()
    explicit = {**rec.defaults, **kwargs}
    np.testing.assert_array_equal(rec.spec(*args, **kwargs), rec.spec(*args, **explicit))


def test_the_filter2d_shift_default_is_the_spec_s():
    # filter2d_paper used to read shift with a default of 4; the spec's default is 0
    assert ops.get("filter2d").default("shift") == 0
    p = Problem("filter2d", {"dtype": "uint8", "c": 0, "h": 4, "w": 4, "kh": 3, "kw": 3}, {}, {})
    assert p.option("shift") == 0 and p.option("boundary") == "zero"


_PAPER_WITHOUT_SHIFT = """
from refconv import registry
from refconv.checking import check_example
from refconv.problem import Problem
p = Problem("filter2d", {"dtype": "uint8", "c": 0, "h": 6, "w": 7, "kh": 3, "kw": 3},
            {"boundary": "valid", "flip": False, "accumulator": "int", "cast": "wrap"},
            {"image": "random.3", "weights": "exact.1"})
r = check_example(registry.get("filter2d/numba_cuda/GM"), p, {"bx": 4, "by": 2})
print("RESULT", r.status, r.message)
"""


@pytest.mark.slow
def test_the_paper_kernel_given_no_shift_shifts_by_the_spec_s_default():
    # it read shift with a default of 4 (the spec's is 0): 20 of 20 elements wrong, under the simulator
    import os
    import subprocess
    import sys
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", REFCONV_CUDA="sim")
    p = subprocess.run([sys.executable, "-c", _PAPER_WITHOUT_SHIFT], env=env, capture_output=True, text=True,
                       timeout=600)
    assert "RESULT pass" in p.stdout, p.stdout + p.stderr[-2000:]


@pytest.mark.parametrize("op", BUILTIN)
def test_the_record_output_layout_is_the_spec_s_on_drawn_problems(op):
    v = Variant(op, "meta", "any", run=lambda p, out: None)
    seen = []

    @settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(cases(v, "ci"))
    def t(case):
        problem, _ = case
        try:
            out = np.asarray(acceptance(problem.op, *_named(problem)).expected)
        except (ValueError, TypeError):
            return
        assert problem.record.output_layout(problem.dims, problem.options) == (out.shape, out.dtype)
        seen.append(problem)
    t()
    assert len(seen) >= 10


@pytest.mark.parametrize("op", BUILTIN)
def test_each_available_peer_of_a_record_times_the_record_s_small_bench_problem(op):
    # the peers are declared in the spec modules: a helper shadowed there, or an input the
    # declaration misnames, fails here (on the CPU; the GPU peers where a GPU is)
    from refconv import peers, timing
    from refconv.bench import problems
    listed = peers.for_op(op, "all")
    assert [p.name for p, _ in listed] == [c.name for c in ops.get(op).peers] and listed
    problem = problems.bench_problem(op, "small")
    ran = 0
    for peer, why in listed:
        if why is None:
            run = peer.prepare(problem)
            with timing.collect() as iv:
                run()
            assert len(iv) == 1 and iv.seconds()[0] >= 0, peer.name
            ran += 1
    assert ran >= 1 or all(why for _, why in listed)


def _named(problem):
    args, kwargs = problem.spec_args()
    return {n: a for n, a in zip(problem.record.input_names, args) if a is not None}, kwargs
