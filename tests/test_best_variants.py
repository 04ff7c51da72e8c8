"""The roofline variants of issue #24 (``filter2d/*/best_R{R}``, ``sobel/*/best_R{R}``): the weight-driven
choice of arithmetic path, the float identities the fast paths rest on, and each path and load/store
layout judged by refconv's checker (poisoned buffer, the op's acceptance) on the CUDA simulator and on
PoCL.  The expected values come from the spec, never from the kernels."""
from __future__ import annotations

import numpy as np
import pytest

from refconv import Problem
from refconv.backends.filter2d_arith import choose_path
from refconv.checking import check_example
from refconv.specs.filter2d import f32_to_int32_rz

F2D = ("filter2d:dtype=uint8,c=0,h={h},w={w},kh=3,kw=3:boundary=valid,flip=0,accumulator=int,shift={shift},"
       "rounding=trunc,cast={cast}:image={image},weights={weights}")
SOBEL = ("sobel:dtype=uint8,channels={ch},h={h},w={w}:magnitude={mag},boundary=valid,out_dtype=uint8,"
         "cast=saturate,rounding=trunc:image={image}")

#: (weights fill, the path it must take): quarters -> exact, random floats -> magic, extremes -> cvt
WEIGHTS = (("exact.2", "exact"), ("random.3", "magic"), ("extreme.1", "cvt"))
#: (h, w): W % 16 == 0 takes the word / 16-byte layout, the others bytes; h = 3 is one output row
SHAPES_F2D = ((6, 32), (9, 21), (3, 16), (5, 3))
SHAPES_SOBEL = ((6, 8), (7, 13), (3, 4), (4, 3), (5, 24), (4, 12))


# ----------------------------------------------------------------------------- path choice

def test_quarter_weights_take_the_exact_fma_path():
    assert choose_path(np.array([5.5, -3.75, -6.25, -3.25, -1.5, 5.0, -0.75, -6.75, -2.75], np.float32)) == "exact"


def test_non_dyadic_small_weights_take_the_magic_path():
    assert choose_path(np.full(9, 0.1, np.float32)) == "magic"


def test_weights_whose_sums_may_reach_2_22_take_the_conversions():
    w = np.zeros(9, np.float32)
    w[0] = 2.0 ** 22 / 255          # one product reaches 2**22: the rz-add identity no longer holds
    assert choose_path(w) == "cvt"


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_weights_take_the_conversions(bad):
    w = np.ones(9, np.float32)
    w[4] = bad
    assert choose_path(w) == "cvt"


def test_dyadic_weights_too_fine_for_exact_sums_fall_back_to_magic():
    w = np.full(9, 1.0 + 2.0 ** -20, np.float32)      # k = 20: B * 2**20 exceeds 2**23
    assert choose_path(w) == "magic"


PRESET_W = np.array([5.5, -3.75, -6.25, -3.25, -1.5, 5.0, -0.75, -6.75, -2.75], np.float32)


def test_preset_weights_with_a_wrapped_output_take_the_two_lane_path():
    from refconv.backends.filter2d_arith import swar_plan
    assert choose_path(PRESET_W, "auto", 4, False) == "swar"
    k, m, kinds = swar_plan(PRESET_W, 4, False)
    # m = 4 w; the first weight is positive (a mask), the sixth a whole 20 (no truncation), the rest
    # follow weights of both signs (the lane sign test)
    assert k == 2 and m == [22, -15, -25, -13, -6, 20, -3, -27, -11] and kinds == (1, 3, 3, 3, 3, 0, 3, 3, 3)


@pytest.mark.parametrize("why,w,shift,sat", [
    ("saturate", PRESET_W, 4, True),
    ("k + shift > 7: the output byte would reach the lane's bias", PRESET_W, 6, False),
    ("positive m sum 129: 255 * 129 >= 2**15", np.array([32.25] + [0.0] * 8, np.float32), 0, False),
    ("negative m sum 129", np.array([-16.25, -16.0] + [0.0] * 7, np.float32), 0, False),
])
def test_the_two_lane_path_is_refused_where_a_lane_or_the_output_byte_could_overflow(why, w, shift, sat):
    from refconv.backends.filter2d_arith import swar_plan
    assert swar_plan(w, shift, sat) is None, why
    assert choose_path(w, "auto", shift, sat) in ("exact", "magic"), why


def test_the_two_lane_bounds_are_inclusive_where_the_lanes_still_fit():
    from refconv.backends.filter2d_arith import swar_plan
    assert swar_plan(np.array([32.0] + [0.0] * 8, np.float32), 0, False) is not None    # P = 255 * 128 < 2**15
    assert swar_plan(np.array([-32.0] + [0.0] * 8, np.float32), 0, False) is not None   # N = 255 * 128 <= 2**15


def test_tap_kinds_follow_the_signs_so_far_and_whole_weights():
    from refconv.backends.filter2d_arith import tap_kinds
    # k = 2: m = 4 is whole; taps 0-1 positive so far (mask), tap 2 negative (sign test from then on)
    assert tap_kinds([1, 3, -2, 4, 5, 0, 1, -1, 8], 2) == (1, 1, 3, 0, 3, 0, 3, 3, 0)
    assert tap_kinds([-1, -3, 0, -5, 2, -1, -1, -1, -1], 2) == (2, 2, 0, 2, 3, 3, 3, 3, 3)
    assert tap_kinds([3, -7, 1, 0, 0, 0, 0, 0, 9], 0) == (0,) * 9                       # k = 0: all whole


def test_arith_float_keeps_the_float_paths():
    assert choose_path(PRESET_W, "float", 4, False) == "exact"
    assert choose_path(PRESET_W, "auto") == "exact"          # the output stage unknown: no two-lane path


def test_arith_cvt_forces_the_conversions_and_unknown_arith_is_refused():
    assert choose_path(np.ones(9, np.float32), "cvt") == "cvt"
    with pytest.raises(ValueError, match=r"arith='fast'.*'auto', 'cvt', 'float', 'int'"):
        choose_path(np.ones(9, np.float32), "fast")


# ----------------------------------------------------------------------------- the identities

def _sim_ops():
    from refconv.backends.numba_cuda.filter2d_best import _sim_ops
    return _sim_ops()


def test_rz_add_truncation_equals_the_int_conversion_below_2_22():
    """copysign(rz(|s| + 2**23) - 2**23, s) == (float)(int)s for |s| < 2**22, and the bits of
    rz(|s| + 2**23) minus 0x4B000000 are |(int)s|."""
    o = _sim_ops()
    rng = np.random.default_rng(1)
    s = np.concatenate([rng.uniform(-2.0 ** 22, 2.0 ** 22, 3000), rng.uniform(-4, 4, 3000),
                        [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0 ** 22 - 0.25, -(2.0 ** 22 - 0.25), 2.0 ** -30]]
                       ).astype(np.float32)
    want = f32_to_int32_rz(s.copy())
    for v, k in zip(s, want):
        t = o["fadd_rz"](o["fabs"](v), np.float32(2.0 ** 23))
        assert o["copysign"](np.float32(t - np.float32(2.0 ** 23)), v) == np.float32(k)
        assert int(o["float_as_int"](t)) - 0x4B000000 == abs(int(k))


def test_simulated_rz_add_rounds_toward_zero():
    o = _sim_ops()
    one = np.float32(1.0)
    tiny = np.float32(2.0 ** -30)
    assert o["fadd_rz"](one, tiny) == one                     # rn would give 1 too; rz never rounds up
    assert o["fadd_rz"](one, np.float32(1 - 2.0 ** -24)) == np.nextafter(np.float32(2.0), np.float32(0))
    assert o["fadd_rz"](-one, -np.float32(1 - 2.0 ** -24)) == -np.nextafter(np.float32(2.0), np.float32(0))


def test_magic_byte_to_float_is_exact_for_every_byte():
    o = _sim_ops()
    got = [o["int_as_float"](0x4B000000 | x) - np.float32(2.0 ** 23) for x in range(256)]
    assert got == [np.float32(x) for x in range(256)]


def test_gray_product_as_one_fma_on_the_magic_byte_is_the_rounded_product():
    """sobel best_R: rn(c*x) == fma(c, 2**23 + x, -c * 2**23) for the three gray weights and every byte
    (the fma's exact value is c*x; computed here in float64, exact for these magnitudes, rounded once)."""
    M = np.float32(2.0 ** 23)
    for c in (np.float32(0.299), np.float32(0.587), np.float32(0.114)):
        x = np.arange(256, dtype=np.float32)
        want = c * x                                              # float32 product, rounded to nearest
        fused = (np.float64(c) * (np.float64(M) + x.astype(np.float64)) + np.float64(-c * M)).astype(np.float32)
        assert np.array_equal(fused, want), c


def test_trunc_on_odd_taps_equals_the_rz_add_truncation():
    """filter2d best_R truncates odd taps with truncf and even ones with the rz add: both are (float)(int)s."""
    o = _sim_ops()
    s = np.random.default_rng(2).uniform(-2.0 ** 22, 2.0 ** 22, 2000).astype(np.float32)
    for v in s:
        rz = o["copysign"](np.float32(o["fadd_rz"](o["fabs"](v), np.float32(2.0 ** 23)) - np.float32(2.0 ** 23)), v)
        assert o["truncf"](v) == rz == np.float32(f32_to_int32_rz(np.array([v]))[0])


def test_simulated_byte_perm_is_cudas():
    o = _sim_ops()
    x, y = np.int32(0x44332211), np.int32(0x4B000000)
    assert [int(o["byte_perm"](x, y, np.int32(0x7540 | b))) for b in range(4)] == [0x4B000000 | (0x11 * (b + 1)) for b in range(4)]
    assert int(o["byte_perm"](np.int32(0x000000FF), np.int32(0x12), np.int32(0x0040))) == 0xFFFF12FF - 2 ** 32
    assert int(o["byte_perm"](np.int32(0x0A0B), np.int32(0x0C0D), np.int32(0x5410))) == 0x0C0D0A0B


def test_round_down_scale_on_a_biased_float_is_the_shift_and_its_low_byte_the_wrap():
    """filter2d best_R's output stage: ``rd(t * 2**-s + 1.5 * 2**23)`` is ``1.5 * 2**23 + (t >> s)``,
    whose low byte is ``(t >> s) mod 256``; clamping it to ``[1.5 * 2**23, 1.5 * 2**23 + 255]`` saturates."""
    o = _sim_ops()
    cb = np.float32(1.5 * 2.0 ** 23)
    rng = np.random.default_rng(5)
    t = np.concatenate([rng.integers(-2 ** 22 + 1, 2 ** 22, 3000), np.arange(-600, 600)])
    for s in range(9):
        for v in t:
            q = o["fma_rd"](np.float32(v), np.float32(2.0 ** -s), cb)
            assert q == cb + np.float32(int(v) >> s)
            assert int(o["float_as_int"](q)) & 0xFF == (int(v) >> s) & 0xFF
            sat = min(max(q, cb), cb + np.float32(255))
            assert int(o["float_as_int"](sat)) & 0xFF == min(max(int(v) >> s, 0), 255)


# ----------------------------------------------------------------------------- the kernels

def _variant(vid):
    from refconv import registry
    return registry.get(vid)


def _judge(vid, spec, params):
    r = check_example(_variant(vid), Problem.parse(spec), params)
    assert r.status == "pass", f"{vid} {params} on {spec}: {r.message}"


def _filter2d_cases():
    for weights, path in WEIGHTS:
        for k, (h, w) in enumerate(SHAPES_F2D):
            for cast in ("wrap", "saturate"):
                # the shift's ends (0, 8) and a middle one: the output stage scales by 2**-shift
                yield F2D.format(h=h, w=w, shift=(0, 3, 8, 5)[k], cast=cast, image="random.5", weights=weights), path


@pytest.mark.parametrize("rows", [2, 5])
def test_numba_filter2d_best_matches_the_spec_on_every_path_and_layout(sim, rows):
    for spec, path in _filter2d_cases():
        assert choose_path(Problem.parse(spec).inputs["weights"].astype(np.float32)) == path
        _judge(f"filter2d/numba_cuda/best_R{rows}", spec, {"bx": 32, "arith": "auto"})
    _judge(f"filter2d/numba_cuda/best_R{rows}", F2D.format(h=6, w=32, shift=4, cast="wrap", image="random.1",
                                                          weights="exact.2"), {"bx": 32, "arith": "cvt"})


@pytest.mark.parametrize("vid,params", [("filter2d/numba_cuda/best_R2", {"bx": 32}),
                                        ("filter2d/numba_cuda/best_R5", {"bx": 32}),
                                        ("filter2d/opencl/best_R2", {"wg_x": 8}),
                                        ("filter2d/opencl/best_R5", {"wg_x": 8})])
def test_filter2d_best_indexes_rows_alike_in_32_and_64_bit_offsets(request, monkeypatch, vid, params):
    """Images below filter2d_arith.OFF32_LIMIT index rows with 32-bit offsets (every test image is
    one); told that they do not fit, the same cases take the 64-bit indexing, which only images past
    2**31 pixels reach on a device: every path on the word layout (W % 16 == 0), both casts, the
    two-lane path.  Each run must have asked which indexing applies and been told the answer."""
    from refconv.backends import filter2d_arith
    request.getfixturevalue("sim" if "numba" in vid else "pocl")
    answers = []
    fits = filter2d_arith.offsets_fit_int32
    for use32 in (True, False):
        monkeypatch.setattr(filter2d_arith, "offsets_fit_int32",
                            lambda H, W, use32=use32: answers.append(use32 and fits(H, W)) or answers[-1])
        answers.clear()
        for spec, _ in _filter2d_cases():
            if ",w=32," in spec or ",w=16," in spec:
                _judge(vid, spec, {**params, "arith": "auto"})
        _judge(vid, F2D.format(h=7, w=48, shift=4, cast="wrap", image="random.3", weights="exact.2"),
               {**params, "arith": "auto"})
        assert answers and set(answers) == {use32}, (use32, answers)


def test_arith_int_takes_the_integer_path_where_the_sums_are_exact_and_the_auto_path_elsewhere():
    from refconv.backends.filter2d_arith import dyadic_exponent
    quarters = Problem.parse(F2D.format(h=5, w=5, shift=4, cast="wrap", image="random.1", weights="exact.2"))
    w = quarters.inputs["weights"].astype(np.float32)
    assert choose_path(w, "int") == "int" and choose_path(w) == "exact" and dyadic_exponent(w) == 2
    assert dyadic_exponent(np.array([3.0, -7.0])) == 0 and dyadic_exponent(np.array([0.1])) is None
    for weights, path in WEIGHTS[1:]:                        # magic, cvt: as auto
        ws = Problem.parse(F2D.format(h=5, w=5, shift=4, cast="wrap", image="random.1", weights=weights))
        assert choose_path(ws.inputs["weights"].astype(np.float32), "int") == path


@pytest.mark.parametrize("rows", [2, 5])
def test_numba_filter2d_best_integer_path_matches_the_spec(sim, rows):
    """arith=int: the exact sums in int32 units of 2**-k, truncation toward zero by an add of the
    sign's 2**k - 1 and a mask; quarters (k = 2), integers (k = 0) and eighths (k = 3), negative
    partial sums included, every shift end, wrap and saturate, both layouts."""
    for weights in ("exact.2", "ramp.1", "exact.7"):
        for k, (h, w) in enumerate(SHAPES_F2D):
            for cast in ("wrap", "saturate"):
                spec = F2D.format(h=h, w=w, shift=(0, 3, 8, 5)[k], cast=cast, image="random.5", weights=weights)
                _judge(f"filter2d/numba_cuda/best_R{rows}", spec, {"bx": 32, "arith": "int"})
    eighths = Problem.parse(F2D.format(h=9, w=32, shift=1, cast="wrap", image="edge.2", weights="exact.2"))
    w8 = (eighths.inputs["weights"] * 0.5).astype(np.float32)          # quarters / 2: eighths, k = 3
    p8 = eighths.with_inputs({**eighths.inputs, "weights": w8})
    assert choose_path(w8, "int") == "int"
    r = check_example(_variant(f"filter2d/numba_cuda/best_R{rows}"), p8, {"bx": 32, "arith": "int"})
    assert r.status == "pass", r.message


@pytest.mark.parametrize("rows", [2, 5])
def test_opencl_filter2d_best_matches_the_spec_on_every_path_and_layout(pocl, rows):
    for spec, _ in _filter2d_cases():
        _judge(f"filter2d/opencl/best_R{rows}", spec, {"wg_x": 8, "arith": "auto"})
    _judge(f"filter2d/opencl/best_R{rows}", F2D.format(h=6, w=32, shift=4, cast="wrap", image="random.1",
                                                      weights="exact.2"), {"wg_x": 8, "arith": "cvt"})


#: weights for the two-lane path: (weights, k, kinds it must give), each kind of tap truncation and
#: the lanes' bounds; every one with a wrapped output and k + shift <= 7
SWAR_WEIGHTS = (
    (PRESET_W, 2, (1, 3, 3, 3, 3, 0, 3, 3, 3)),                                   # the preset: mixed signs
    (np.array([0.25, 0.5, 1.75, 2.0, 0.75, 1.25, 0.25, 1.5, 0.5], np.float32), 2, (1, 1, 1, 0, 1, 1, 1, 1, 1)),
    (-np.array([0.25, 0.5, 1.75, 2.0, 0.75, 1.25, 0.25, 1.5, 0.5], np.float32), 2, (2, 2, 2, 0, 2, 2, 2, 2, 2)),
    (np.array([3, -7, 1, 0, 2, 5, -4, 8, -1], np.float32), 0, (0,) * 9),             # integers: no truncation
    (np.array([-1.875, 0.625, -0.125, 1.0, -0.375, 2.5, -3.0, 0.875, -1.125], np.float32), 3,
     (2, 3, 3, 0, 3, 3, 0, 3, 3)),                                                  # eighths, negative first
    (np.array([-8.0, -8.0, -8.0, -8.0, 7.5, 7.5, 7.5, 7.5, 1.75], np.float32), 2,
     (0, 0, 0, 0, 3, 3, 3, 3, 3)),              # N = 255 * 128, P = 255 * 127: the lanes' ends
)


@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_the_complemented_lanes_truncate_every_partial_sum_toward_zero(k):
    """The two-lane path holds a lane as ``G = 2**15 - 1 - A``: for every partial sum ``A`` a
    lane can hold (``-2**15 <= A < 2**15``), the sign tap's helper on ``G`` in the low lane (and a
    fixed high lane) gives ``2**15 - 1 - trunc(A)``, ``trunc`` toward zero to a multiple of ``2**k``;
    the floor and ceiling taps do where ``A >= 0`` and ``A <= 0``."""
    from refconv.backends.numba_cuda.filter2d_best import _sim_lane_ops
    ops = _sim_lane_ops()
    mk = (1 << k) - 1
    km2 = mk * 0x10001
    hi_a = -77                                       # the high lane: a negative sum, its bits fixed
    hi_g = (0x7FFF - hi_a) << 16
    hi_want = (0x7FFF - (-((-hi_a) >> k << k))) << 16
    for a in range(-(1 << 15), 1 << 15):
        t = (a >> k << k) if a >= 0 else -((-a) >> k << k)
        g = hi_g | (0x7FFF - a)
        g = g - (1 << 32) if g >= 1 << 31 else g
        want = (hi_want | (0x7FFF - t)) & 0xFFFFFFFF
        assert int(ops["lanes_set_sign"](g, mk * 0x01010101, km2)) & 0xFFFFFFFF == want, (k, a)
        if a >= 0:
            assert int(ops["lanes_set"](g, km2)) & 0xFFFF == 0x7FFF - t, (k, a)
        if a <= 0:
            assert int(ops["lanes_set_ceil"](g, km2)) & 0xFFFF == 0x7FFF - t, (k, a)


def _prmt(a, b, sel):
    """PTX ``prmt.b32 d, a, b, sel`` as the PTX ISA states it, written apart from the simulator's
    helper: the eight bytes of ``b:a`` numbered 0-7; result byte ``i`` is byte ``sel[4i+2:4i]``, or,
    where ``sel[4i+3]`` is set, that byte's most significant bit replicated over the byte."""
    src = [(int(a) >> (8 * j)) & 0xFF for j in range(4)] + [(int(b) >> (8 * j)) & 0xFF for j in range(4)]
    out = 0
    for i in range(4):
        nib = (int(sel) >> (4 * i)) & 0xF
        byte = src[nib & 7]
        out |= ((0xFF if byte >> 7 else 0x00) if nib & 8 else byte) << (8 * i)
    return out - (1 << 32) if out >= 1 << 31 else out


def test_the_simulators_byte_permute_is_ptx_prmt_with_its_sign_replication():
    """The simulator's ``byte_perm`` against :func:`_prmt` on every selector nibble, in every byte
    place, with bytes whose top bit is set and clear (the ``prmt`` sign test relies on the
    replication: selector 0x4B49)."""
    from refconv.backends.numba_cuda.filter2d_best import _sim_ops
    bp = _sim_ops()["byte_perm"]
    a, b = -0x7E5A3C01, 0x13F1807F        # bytes 0xFF 0xC3 0xA5 0x81 / 0x7F 0x80 0xF1 0x13
    for place in range(4):
        for nib in range(16):
            sel = (0x3210 & ~(0xF << 4 * place)) | (nib << 4 * place)
            assert int(bp(a, b, sel)) == _prmt(a, b, sel), hex(sel)
    assert _prmt(0x80017FFF, 0, 0x4B49) == 0x00FF0000


def test_the_gpu_lane_expressions_compute_what_the_simulator_helpers_compute():
    """The ``swar`` path's lane operations are inline int32 expressions on a GPU (``_LANE_GPU``, never
    run under the simulator) and Python helpers under it (``_sim_lane_ops``).  Evaluated as numba
    evaluates them on a GPU (int32 operands, wider intermediates narrowed to int32, PTX ``prmt`` and
    ``mad.lo.s32``) with the kernels' own
    constants (``lane_constants``), each expression equals its helper: every truncation on
    pairs of lanes at both ends of [0, 2**16) and at random, k = 0 .. 7, and the tap's multiply-add."""
    from refconv.backends.numba_cuda import filter2d_best as fb

    def i32(v):
        v = int(v) & 0xFFFFFFFF
        return v - (1 << 32) if v >= 1 << 31 else v

    sim = fb._sim_lane_ops()
    rng = np.random.default_rng(7)
    lanes = [0, 1, 3, 0x7FFC, 0x7FFF, 0x8000, 0x8003, 0xFFFC, 0xFFFF] + [int(v) for v in rng.integers(0, 1 << 16, 24)]
    ops = {"lanes_set": ("KM2",), "lanes_set_ceil": ("KM2",), "lanes_set_sign": ("KINV", "KM2")}
    assert set(ops) | {"imad", "mad"} == set(fb._LANE_GPU)
    for k in range(8):
        mk = (1 << k) - 1
        ns = dict(int32=i32, prmt=_prmt, mad=lambda a, b, c: i32(a * b + c),      # PTX mad.lo.s32: the low word
                  **{name: int(v) for name, v in fb.lane_constants(k).items()})   # the kernels' constants
        for lo in lanes:
            for hi in lanes[::3]:
                ns["s"] = i32(lo | hi << 16)
                for op, names in ops.items():
                    got = eval(fb._LANE_GPU[op].format("s", *names), ns)
                    want = i32(sim[op](ns["s"], *(ns[n] for n in names)))
                    assert got == want, (op, k, hex(ns["s"] & 0xFFFFFFFF), got, want)
    for w, x, s in ((-27, 255 | 255 << 16, i32(0x80008000)), (22, 3 | 250 << 16, i32(0x7FF08123)), (-1, 0, 0)):
        ns.update(w=w, x=x, s=s)
        assert eval(fb._LANE_GPU["imad"].format("w", "x", "s"), ns) == i32(sim["imad"](w, x, s))
        assert eval(fb._LANE_GPU["mad"].format("w", "x", "s"), ns) == i32(sim["mad"](w, x, s))


def _swar_cases():
    for w, k, kinds in SWAR_WEIGHTS:
        for n, (h, wd) in enumerate(SHAPES_F2D + ((7, 48),)):
            for image in ("random.5", "extreme.1", "full255"):
                spec = F2D.format(h=h, w=wd, shift=(0, 7 - k, 3, 1, 2)[n], cast="wrap",
                                  image="random.1" if image == "full255" else image, weights="exact.2")
                p = Problem.parse(spec)
                img = np.full_like(p.inputs["image"], 255) if image == "full255" else p.inputs["image"]
                yield p.with_inputs({"image": img, "weights": w.reshape(3, 3)}), k, kinds


@pytest.mark.parametrize("vid,params", [("filter2d/numba_cuda/best_R2", {"bx": 32}),
                                        ("filter2d/numba_cuda/best_R5", {"bx": 32}),
                                        ("filter2d/opencl/best_R2", {"wg_x": 8}),
                                        ("filter2d/opencl/best_R5", {"wg_x": 8})])
def test_filter2d_best_two_lane_path_matches_the_spec(request, vid, params):
    """arith=auto with a wrapped output takes the two-lane path: every tap kind (floor, ceiling,
    sign test, none), k = 0, 2, 3, the lanes' ends (a uint8 image of 255s under weights whose
    negative or positive m sum to 128), both layouts (W % 16 == 0 and bytes), one output row,
    shifts up to 7 - k; the kernel's bits against the spec's."""
    from refconv.backends.filter2d_arith import swar_plan
    request.getfixturevalue("sim" if "numba" in vid else "pocl")
    for p, k, kinds in _swar_cases():
        w = p.inputs["weights"].astype(np.float32)
        plan = swar_plan(w, p.option("shift"), False)
        assert plan is not None and plan[0] == k and plan[2] == kinds, (w, plan)
        r = check_example(_variant(vid), p, {**params, "arith": "auto"})
        assert r.status == "pass", f"{vid} on {p.descriptor()} weights {w.tolist()}: {r.message}"


def _sobel_cases():
    for ch in (0, 3, 4):
        for (h, w) in SHAPES_SOBEL:
            for mag in ("l1", "l2"):
                yield SOBEL.format(ch=ch, h=h, w=w, mag=mag, image="random.1")


@pytest.mark.parametrize("rows", [1, 4])
def test_numba_sobel_best_matches_the_spec_on_every_layout(sim, rows):
    for spec in _sobel_cases():
        _judge(f"sobel/numba_cuda/best_R{rows}", spec, {"bx": 32})


@pytest.mark.parametrize("rows", [1, 4])
def test_opencl_sobel_best_matches_the_spec_on_every_layout(pocl, rows):
    for spec in _sobel_cases():
        _judge(f"sobel/opencl/best_R{rows}", spec, {"wg_x": 8})


@pytest.mark.parametrize("backend,rows", [("numba_cuda", 3), ("opencl", 6)])
def test_sobel_best_of_a_design_the_roofline_sweep_times_matches_the_spec(request, backend, rows):
    """lab/sweeps/gpu_roofline_sweep.py times sobel best designs that do not ship (other row counts, a
    register cap) through ``make_variant(Build(...))``: they must give the spec's bits too, or the
    comparison is of a wrong kernel; and the variant must be built from the design passed, not from a
    shipped one."""
    import importlib
    request.getfixturevalue("sim" if backend == "numba_cuda" else "pocl")
    mod = importlib.import_module(f"refconv.backends.{backend}.sobel_best")
    assert all(d.rows != rows for d in mod.SHIPPED)
    v = mod.make_variant(mod.Build(rows=rows, max_registers=64))
    assert v.id == f"sobel/{backend}/best_R{rows}"
    params = {"bx": 32} if backend == "numba_cuda" else {"wg_x": 8}
    for spec in _sobel_cases():
        r = check_example(v, Problem.parse(spec), params)
        assert r.status == "pass", f"{v.id} (max_registers=64) {params} on {spec}: {r.message}"
    for h in _row_count_cases(rows):
        r = check_example(v, Problem.parse(SOBEL.format(ch=4, h=h, w=16, mag="l1", image="random.2")), params)
        assert r.status == "pass", f"{v.id} (max_registers=64) {params} at h={h}: {r.message}"


def _row_count_cases(rows: int):
    """Heights whose output rows end a block at every place of the row loop unrolled by three: one
    block cut short at each of its rows, a full block, and a full block then a short one."""
    return sorted({2 + n for n in range(1, rows + 1)} | {2 + rows + n for n in (1, rows - 1) if n >= 1})


@pytest.mark.parametrize("vid,params", [("sobel/numba_cuda/best_R8", {"bx": 32}), ("sobel/opencl/best_R8", {"wg_x": 8}),
                                        ("sobel/numba_cuda/best_R2", {"bx": 32}), ("sobel/opencl/best_R2", {"wg_x": 8})])
def test_sobel_best_writes_every_row_whatever_the_rows_left_for_the_last_block(request, vid, params):
    """The row loop is unrolled by three with the register rows renamed: a block whose rows end at any
    place of an iteration (8 = 3 + 3 + 2 rows) must still write each of its rows once, from the right
    register rows, in both layouts (words: W % 8 == 0; bytes)."""
    request.getfixturevalue("sim" if "numba" in vid else "pocl")
    rows = int(vid.rsplit("R", 1)[1])
    for h in _row_count_cases(rows):
        for w in (16, 11):
            _judge(vid, SOBEL.format(ch=4, h=h, w=w, mag="l1", image="random.2"), params)


@pytest.mark.parametrize("vid,params", [("filter2d/numba_cuda/best_R5", {"bx": 32, "arith": "auto"}),
                                        ("filter2d/opencl/best_R5", {"wg_x": 8, "arith": "auto"}),
                                        ("filter2d/numba_cuda/best_R2", {"bx": 32, "arith": "auto"}),
                                        ("filter2d/opencl/best_R2", {"wg_x": 8, "arith": "auto"})])
def test_filter2d_best_writes_every_row_whatever_the_rows_left_for_the_last_block(request, monkeypatch, vid, params):
    """As for Sobel: R rows a block, every height from one output row to two blocks, on both layouts
    (W % 16 == 0 and bytes).  Where every band is complete (filter2d_arith.bands_exact) the kernel
    is built without a test of each row against the last one: each run must have asked which build
    applies, and the heights must reach both."""
    from refconv.backends import filter2d_arith
    request.getfixturevalue("sim" if "numba" in vid else "pocl")
    rows = int(vid.rsplit("R", 1)[1])
    answers = []
    exact = filter2d_arith.bands_exact
    monkeypatch.setattr(filter2d_arith, "bands_exact", lambda H, R: answers.append((H, R, exact(H, R))) or answers[-1][2])
    for h in _row_count_cases(rows):
        for w in (32, 21):
            answers.clear()
            _judge(vid, F2D.format(h=h, w=w, shift=4, cast="wrap", image="random.4", weights="exact.2"), params)
            assert answers and {a[:2] for a in answers} == {(h, rows)}, (h, answers)
    seen = {exact(h, rows) for h in _row_count_cases(rows)}
    assert seen == {True, False}, seen


def test_bands_are_exact_where_the_output_rows_split_into_whole_bands():
    from refconv.backends.filter2d_arith import bands_exact
    assert [h for h in range(1, 16) if bands_exact(h, 5)] == [7, 12]
    assert [h for h in range(1, 9) if bands_exact(h, 2)] == [4, 6, 8]
    assert bands_exact(3072, 2) and bands_exact(3072, 5) and not bands_exact(3073, 2)


def test_a_build_error_in_a_best_kernel_quotes_its_own_file_and_line_past_the_shared_pack4(pocl):
    """The OpenCL best kernels are built with pack4.cl prepended and ``#line 1`` before the kernel
    file: a compile error names the kernel file's own line."""
    import refconv.opencl as oc
    from refconv.backends.opencl import sobel_best as sb
    line = next(i for i, s in enumerate(sb.SRC.split('#line 1 "sobel_best.cl"\n', 1)[1].splitlines(), 1)
                if "fabs(gx) + fabs(gy)" in s)
    bad = sb.SRC.replace("fabs(gx) + fabs(gy)", "fabs(gx) + no_such_name")
    with pytest.raises(Exception, match=rf"sobel_best\.cl:{line}:\d+: .*no_such_name"):
        oc.kernel(bad, "sobel_best", sb.options(sb.Build(rows=1, ch=4, vec=True), oc.target() == "nvidia"), sb.SRC_NAME)
