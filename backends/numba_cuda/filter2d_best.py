"""filter2d, 3x3 uint8, paper-faithful ``int`` accumulator: the project's own fastest kernels
(issue #24), ``filter2d/numba_cuda/best_R{R}``.  Not a seed design: the seed kernels stay as
the study describes them.

The arithmetic is the spec's, bit for bit: ``acc = 0``; per tap, kernel row outer, column inner,
``acc = (int)((float)acc + w*(float)x)`` (float32, product and sum rounded to nearest, no FMA;
the conversion truncates, saturating to int32, NaN -> 0); then ``acc >> shift`` and a wrap (or
saturating) cast to uint8; only the interior is written.

Layout: a thread computes 16 consecutive output columns of ``R`` consecutive output rows.  It
streams input rows top to bottom, keeping three rows of 18 converted pixels in registers (each
pixel is loaded and converted once per thread and used by up to 9 outputs).  Where ``W % 16 ==
0`` a row's 16 pixels are two aligned 64-bit loads (numba has no 128-bit ones) split into four
words, the two halo pixels come from the 4-byte words beside them (unguarded: the image sits
:data:`PAD` bytes into a zeroed buffer, :func:`padded_image`), and the interior outputs are two
64-bit stores; otherwise every load and store is a byte.  The next input row's loads are issued
before the current row's arithmetic, and one interior test per thread (``full``) selects the
unguarded word stores.  Where every band of ``R`` output rows is complete
(:func:`refconv.backends.filter2d_arith.bands_exact`) no row is tested against the last one.  The
kernel body is generated as straight-line code so the 54 pixels and the accumulators live in
registers.

Five arithmetic paths give the same bits; the host picks ``cvt``, ``magic``, ``exact`` or ``swar`` from the
weights and the output stage (``arith="auto"``; ``arith="float"``: never ``swar``):

* ``cvt``: the spec's conversions as written (``cvt.rn.f32.s32``, ``cvt.rzi.s32.f32``), used for
  any weights, and always with ``arith="cvt"``;
* ``magic`` (weights finite and ``B = 255 * sum|w| < 2**22``): every partial sum has ``|s| < 2**22``,
  so the accumulator is kept as a float and ``(float)(int)s`` is
  ``copysign(rz(|s| + 2**23) - 2**23, s)`` (``rz``: an add rounded toward zero, exact integers in
  ``[2**23, 2**24)``; ``truncf`` on alternate taps) and a pixel is ``bits(0x4B000000 | x) - 2**23``
  (one byte permute and an add): full-rate adds instead of conversions; product and sum still
  round separately; the output is ``rd(trunc(s) * 2**-shift + 1.5 * 2**23)``, whose low byte is
  ``(trunc(s) >> shift) mod 256`` (clamped first to saturate; :func:`_output`);
* ``exact`` (additionally every weight is ``m * 2**-k`` with ``B * 2**k < 2**23``): every product
  and partial sum is exactly representable, so ``rn(rn(w*x) + a) == fma(w, x, a)``: one FMA a tap;
* ``int`` (``arith="int"`` only, where ``exact`` applies): the same exact sums as int32 in units of
  ``2**-k``, the truncation an add and a mask (:func:`_output_int`): about as many instructions as
  ``exact`` but on the integer pipes instead of the float and conversion ones, and slower, so
  ``auto`` never takes it.  The OpenCL twin has no ``int``;
* ``swar`` (where :func:`refconv.backends.filter2d_arith.swar_plan` allows: small dyadic weights,
  a wrapped output, ``k + shift <= 7``): output columns ``i`` and ``i + 2`` in the two 16-bit lanes of
  one int32, one multiply-add a tap for both and the tap's truncation toward zero chosen from the
  weights' signs; the lanes hold their complement and a sign tap takes its correction from one byte
  permute and one multiply-add (:func:`_output_swar`).

What a kernel is built from is one frozen :class:`Build`: the variant's design (``rows``, a register
cap) and what the host picks for a problem (path, layout, cast, the two-lane plan, the indexing).  The
shipped designs are :data:`BEST_R2` and :data:`BEST_R5`; :func:`make_variant` makes a variant of any
design (the lab's sweeps pass theirs), :func:`source` gives a build's kernel source, and
``docs/kernels/`` holds that source for the preset's builds (``tests/test_kernel_sources.py``).
"""
from __future__ import annotations

import dataclasses
import functools
import linecache
from dataclasses import dataclass

import numpy as np

from refconv import Param, Range, Variant
from refconv import cuda as rc
from refconv.backends import filter2d_arith as arith_mod
from refconv.backends.filter2d_arith import (ARITH, TAP_CEIL, TAP_FLOOR, TAP_NONE, TAP_SIGN, choose_path,
                                             dyadic_exponent, swar_plan)

ORIGIN = "refconv (issue #24): register-blocked rows, 16-byte-wide rows per thread; spec of seed 000"
COLS = 16
#: threads a block by default: a preset row of 3072 is 192 chunks of 16 columns, which 64 divides
#: (128 left a quarter of every second block idle)
BX = 64
#: bytes of zeros before and after the image on the word layout (:func:`padded_image`): a multiple of
#: 256, so that the rows start on whole 128-byte lines as they would unpadded
PAD = 256

SUPPORTS = {"dtype": ("uint8",), "c": (0,), "kh": (3,), "kw": (3,), "boundary": ("valid",),
            "flip": (False,), "accumulator": ("int",), "shift": Range(0, 8), "cast": ("wrap", "saturate"),
            "rounding": ("trunc",), "out_dtype": (None,), "h": Range(3), "w": Range(3)}

_M = 8388608.0          # 2**23
_CB = 12582912.0        # 1.5 * 2**23: n + _CB for |n| < 2**22 is exact, its low byte n mod 256


@dataclass(frozen=True)
class Build:
    """One kernel build.  The design: ``rows``, the output rows a thread computes (each R is a
    kernel of its own), and ``max_registers``, a cap on a thread's registers (None: ptxas's choice).
    What the host picks for a problem (:func:`specialise`): the arithmetic ``path`` (``cvt``,
    ``magic``, ``exact``, ``int`` or ``swar``, :func:`refconv.backends.filter2d_arith.choose_path`);
    ``vec``, the word layout (``W % 16 == 0``); ``sat``, a saturating cast (else wrap); ``k``, the
    weights' units ``2**-k`` on the ``int`` and ``swar`` paths, and ``kinds``, the two-lane path's
    tap kinds (:func:`refconv.backends.filter2d_arith.swar_plan`); ``off32`` (with ``vec``), row
    places as int32 word indices (:func:`refconv.backends.filter2d_arith.offsets_fit_int32`); and
    ``exact``, every band of ``rows`` output rows complete
    (:func:`refconv.backends.filter2d_arith.bands_exact`)."""

    rows: int
    path: str = "cvt"
    vec: bool = False
    sat: bool = False
    k: int = 0
    kinds: tuple = ()
    off32: bool = False
    exact: bool = False
    max_registers: int | None = None


#: the shipped designs, ``filter2d/numba_cuda/best_R2`` and ``best_R5``: R = 5 makes the preset's grid
#: one wave of blocks on an H100 (docs/performance.md)
BEST_R2 = Build(rows=2)
BEST_R5 = Build(rows=5)
SHIPPED = (BEST_R2, BEST_R5)


# ----------------------------------------------------------------------------- device helpers

def _sim_ops() -> dict:
    """The helpers under the simulator, in NumPy: float32 add rounded toward zero, FMA, bit casts."""
    f32 = np.float32

    def fadd_rz(a, b):
        v = float(a) + float(b)           # exact in float64 for the magnitudes used here
        r = f32(v)
        if abs(float(r)) > abs(v):
            r = np.nextafter(r, f32(0))
        return f32(r)

    def fma(a, b, c):     # exact in float64 wherever it is used (a 24-bit by 24-bit product, one sum
        return f32(float(a) * float(b) + float(c))      # of like magnitude), then rounded once

    def int_as_float(i):
        return np.array(i, np.int64).astype(np.uint32).view(np.float32)[()]

    def float_as_int(f):
        return np.array(f, np.float32).view(np.int32)[()]

    def copysign(a, b):
        return f32(np.copysign(f32(a), f32(b)))

    def fma_rd(a, b, c):  # exact in float64 where used (a power-of-two scale, a sum below 2**25), then rounded down
        v = float(a) * float(b) + float(c)
        r = f32(v)
        return f32(np.nextafter(r, f32(-np.inf)) if float(r) > v else r)

    def byte_perm(x, y, sel):
        """PTX ``prmt.b32`` (CUDA ``__byte_perm``): byte ``i`` of the result is byte ``n & 7`` of
        ``y:x``, ``n = (sel >> 4*i) & 15``, or, where ``n & 8``, that byte's bit 7 replicated
        (0xFF or 0)."""
        b = (int(x) & 0xFFFFFFFF) | ((int(y) & 0xFFFFFFFF) << 32)
        r = 0
        for i in range(4):
            n = (int(sel) >> (4 * i)) & 15
            byte = (b >> (8 * (n & 7))) & 0xFF
            r |= ((0xFF if byte & 0x80 else 0) if n & 8 else byte) << (8 * i)
        return np.int32(r - (1 << 32) if r >= 1 << 31 else r)

    return dict(fadd_rz=fadd_rz, fma=fma, int_as_float=int_as_float, float_as_int=float_as_int,
                copysign=copysign, fabs=lambda a: f32(abs(f32(a))), truncf=lambda a: f32(np.trunc(f32(a))),
                fma_rd=fma_rd, byte_perm=byte_perm, **_sim_lane_ops())


def _sim_lane_ops() -> dict:
    """The ``swar`` path's 32-bit lane operations under the simulator: Python integers wrapped to
    int32 (NumPy's int32 scalars would warn on the multiply's intended wraparound)."""
    def i32(v):
        v &= 0xFFFFFFFF
        return np.int32(v - (1 << 32) if v >= 1 << 31 else v)

    def imad(a, b, c):      # the low word of a * b + c, as IMAD and PTX mad.lo.s32
        return i32(int(a) * int(b) + int(c))

    return dict(imad=imad, mad=imad,
                imin=lambda a, b: i32(min(int(a), int(b))),
                # the complemented lanes (:func:`_output_swar`); the sign helper subtracts 2**k - 1
                # from the lanes whose bit 15 is set directly, not through the GPU's byte permute
                # and KINV, so that the two formulas check each other
                lanes_set=lambda s, km2: i32(int(s) | int(km2)),
                lanes_set_ceil=lambda s, km2: i32((int(s) - int(km2)) | int(km2)),
                lanes_set_sign=lambda s, kinv, km2: i32(
                    (int(s) - ((int(s) >> 15) & 0x10001) * (int(km2) & 0xFFFF)) | int(km2)))


@functools.lru_cache(maxsize=None)
def _ptx_intrinsic(ptx: str, nargs: int = 3):
    """A numba-cuda intrinsic of ``nargs`` int32 operands (2 or 3; other integers are converted)
    and an int32 result that is the one PTX instruction ``ptx`` (``$0`` the result, ``$1 ..`` the
    operands), as inline assembly."""
    from llvmlite import ir
    from numba import types
    from numba.cuda.extending import intrinsic

    def codegen(context, builder, signature, args):
        args = [context.cast(builder, v, t, types.int32) for v, t in zip(args, signature.args)]
        fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32)] * nargs)
        return builder.asm(fnty, ptx, "=r" + ",r" * nargs, args, side_effect=False)

    if nargs == 2:
        @intrinsic
        def op2(typingctx, a, b):
            return types.int32(types.int32, types.int32), codegen
        return op2

    @intrinsic
    def op3(typingctx, a, b, c):
        return types.int32(types.int32, types.int32, types.int32), codegen
    return op3


def _asm_ops() -> dict:
    """The inline PTX of the kernels: for the two-lane path's sign taps (:func:`_output_swar`) ``prmt``, since
    libdevice's ``__nv_byte_perm`` keeps only the low three bits of each selector nibble (sm_90 SASS
    of ``byte_perm(s, 0, 0x4B49)``: ``PRMT ... 0x4341``), dropping the sign replication; ``mad``
    (``mad.lo.s32``), since LLVM reassociates a tap's multiply-add with the next one's where no
    truncation stands between them (a tap of kind none), which costs an add a pair (sm_90 SASS:
    ``IMAD``, ``IMAD``, ``IMAD.IADD`` for two taps); for the int32 row indices (``off32`` of
    :func:`source`), ``mad`` and ``imin`` (``min.s32``), which numba would compute in 64 bits."""
    return dict(prmt=_ptx_intrinsic("prmt.b32 $0, $1, $2, $3;"), mad=_ptx_intrinsic("mad.lo.s32 $0, $1, $2, $3;"),
                imin=_ptx_intrinsic("min.s32 $0, $1, $2;", 2))


def device_ops() -> dict:
    """The float helpers the generated kernels call (libdevice on a GPU, NumPy under the simulator)."""
    fmul, fadd, f2i, _, _ = rc.float_ops()
    ops = dict(fmul=fmul, fadd=fadd, f2i=f2i)
    if rc.is_sim():
        ops.update(_sim_ops())
    else:
        from numba.cuda import libdevice as L
        ops.update(fadd_rz=L.fadd_rz, fma=L.fmaf, int_as_float=L.int_as_float, float_as_int=L.float_as_int,
                   copysign=L.copysignf, fabs=L.fabsf, truncf=L.truncf, fma_rd=L.fmaf_rd, byte_perm=L.byte_perm,
                   umulhi=L.umulhi, **_asm_ops())
    return ops


# ----------------------------------------------------------------------------- code generation
#
# Every index is a uint64 (constants ``U{n}``): numba wraps a negative signed index around (a
# compare and a select a subscript, in 64-bit arithmetic), which for this kernel was a third of
# its instructions (issue #24, Nsight Compute on an H200: 65 instructions an output, 41 without).


def _conv(path: str):
    if path == "cvt":
        return lambda x: f"float32({x})"
    if path == "int":
        return lambda x: f"int32({x})"
    return lambda x: f"fadd(int_as_float(int32(int32({x}) | MAGI)), NEGM)"


def _load_raw(j: int, vec: bool, off32: bool = False, exact: bool = False) -> list:
    """Lines loading input row ``r0 - 1 + j`` raw: four words (two 64-bit loads, split) and the two
    32-bit words beside them (halves of the 8-byte words beside the chunk), whose bytes 3 and 0 are
    the halo pixels, or 18 bytes.  On the word layout the image sits :data:`PAD` bytes into a
    buffer of ``H * W + 2 * PAD``, so that the words beside the first and the last chunk of the
    image are in the buffer (their pixels feed only output columns that are not written) and no halo
    load needs a guard; ``qu{j}`` is the chunk's index in 8-byte words of that buffer.  The row is clamped to the last one unless ``exact`` (every
    band of output rows complete, so that no row past ``H - 1`` is ever loaded)."""
    row = f"r0 - 1 + {j}"
    if vec:
        if off32:       # the row's chunk as an index of 8-byte words, one 32-bit multiply-add
            L = [f"qa{j} = mad({row if exact else f'imin({row}, Hm1)'}, W8, gi2)", f"qu{j} = uint64(qa{j})"]
        else:
            L = [f"qu{j} = uint64({row if exact else f'min({row}, H - 1)'}) * (Wu >> U3) + gq"]
        L += [f"d{j}_{h} = img64[qu{j} + U{h}]" for h in range(2)]
        L += [f"q{j}_{q} = uint32(d{j}_{q // 2} & M32)" if q % 2 == 0 else f"q{j}_{q} = uint32(d{j}_{q // 2} >> U32)"
              for q in range(4)]
        L.append(f"h{j}_0 = uint32(img64[qu{j} - U1] >> U32)")     # a 32-bit load: LLVM narrows it
        L.append(f"h{j}_1 = uint32(img64[qu{j} + U2] & M32)")
        return L
    L = [f"rb{j} = uint64({row if exact else f'min({row}, H - 1)'}) * Wu"]
    for i in range(18):
        lo = "c0 > 0" if i == 0 else f"c0 + {i - 1} < W"
        L.append(f"b{j}_{i} = (img8[rb{j} + c0u + U{i} - U1] if {lo} else Z8)")
    return L


#: the pixels of a loaded row on the word layout, columns c0 - 1 .. c0 + 16: (word, byte)
_WORD_PIXELS = (("h{j}_0", 3), *((f"q{{j}}_{i // 4}", i % 4) for i in range(16)), ("h{j}_1", 0))


def _convert_row(j: int, slot: int, path: str, vec: bool) -> list:
    """Lines converting raw row ``j`` into ``p{slot}_0 .. p{slot}_17`` (columns c0-1 .. c0+16).  Off
    the ``cvt`` path a word's byte ``b`` becomes ``bits(0x4B000000 | x)`` in one byte permute
    (``__byte_perm(q, 0x4B000000, 0x7540 | b)``), then ``- 2**23``."""
    if path == "swar":
        return _pair_row(j, slot, vec)
    conv = _conv(path)
    if not vec:
        return [f"p{slot}_{i} = {conv(f'b{j}_{i}')}" for i in range(18)]
    L = []
    for n, (word, b) in enumerate(_WORD_PIXELS):
        q = word.format(j=j)
        if path == "int":      # byte b of the word, zero extended: one byte permute
            x = f"byte_perm(int32({q}), I0, SELZ{b})"
        elif path != "cvt":
            x = f"fadd(int_as_float(byte_perm(int32({q}), MAGI, SEL{b})), NEGM)"
        else:
            x = conv(f"(uint32({q}) >> S{8 * b}) & UFF")
        L.append(f"p{slot}_{n} = {x}")
    return L


def _pair_row(j: int, slot: int, vec: bool) -> list:
    """The ``swar`` path: raw row ``j`` as the 16 column pairs ``p{slot}_{c+1} = x[c] | x[c+2] << 16``,
    ``c = -1 .. 14`` (columns relative to c0).  A word ``q`` gives two in one byte permute each,
    ``(x0, x2)`` and ``(x1, x3)``; a pair across two words is one permute of two of those
    (``__byte_perm(a, b, 0x5432)``: the high lane of ``a``, the low lane of ``b``), and a pair with
    a halo pixel one permute of its halo word and a lane (``0x5453``: byte 3 of the word before,
    ``x[1]``; ``0x3432``: ``x[14]``, byte 0 of the word after; the zero bytes from the lane)."""
    if not vec:
        return [f"p{slot}_{c + 1} = int32(int32(b{j}_{c + 1}) | (int32(b{j}_{c + 3}) << I16))" for c in range(-1, 15)]
    L = []
    for v in range(4):
        L.append(f"e{v} = byte_perm(int32(q{j}_{v}), I0, SWE)")
        L.append(f"o{v} = byte_perm(int32(q{j}_{v}), I0, SWO)")
    L.append(f"p{slot}_0 = byte_perm(int32(h{j}_0), o0, SWL)")   # (byte 3 of the word before, x1)
    for v in range(4):
        L += [f"p{slot}_{4 * v + 1} = e{v}", f"p{slot}_{4 * v + 2} = o{v}"]
        if v < 3:
            L += [f"p{slot}_{4 * v + 3} = byte_perm(e{v}, e{v + 1}, SWF)",
                  f"p{slot}_{4 * v + 4} = byte_perm(o{v}, o{v + 1}, SWF)"]
    L.append(f"p{slot}_15 = byte_perm(e3, int32(h{j}_1), SWR)")   # (x14, byte 0 of the word after)
    return L


#: the ``swar`` path's pairs: output columns ``i`` (low lane) and ``i + 2`` (high lane)
PAIRS = (0, 1, 4, 5, 8, 9, 12, 13)
#: the lane operations: inline int32 expressions on a GPU (numba's 64-bit intermediates, which NVVM
#: narrows back to 32 bits), the helpers of :func:`_sim_lane_ops` under the simulator
_LANE_GPU = {"imad": "int32({0} * {1} + {2})", "mad": "mad({0}, {1}, {2})",
             "lanes_set": "int32({0} | {1})", "lanes_set_ceil": "int32(({0} - {1}) | {1})",
             "lanes_set_sign": "int32((prmt({0}, I0, SGNB) * {1} + {0}) | {2})"}
#: each tap kind's truncation (:func:`refconv.backends.filter2d_arith.tap_kinds`) on the complemented
#: lanes: the lane operation and its constants
_LANE_SET = {TAP_NONE: None, TAP_FLOOR: ("lanes_set", "KM2"), TAP_CEIL: ("lanes_set_ceil", "KM2"),
             TAP_SIGN: ("lanes_set_sign", "KINV", "KM2")}


def lane_constants(k: int) -> dict:
    """The constants of the ``swar`` path's lane operations (``_LANE_GPU`` and the helpers of
    :func:`_sim_lane_ops`) for weights in units of ``2**-k``, as the kernels' namespace holds them."""
    mk = (1 << k) - 1
    return dict(KM2=np.int32(mk * 0x10001), I0=np.int32(0), BIASC=np.int32(0x7FFF7FFF), SGNB=np.int32(0x4B49),
                KINV=np.int32(mk * 0x01010101))


def _lane(sim: bool, op: str, *args: str) -> str:
    return f"{op}({', '.join(args)})" if sim else _LANE_GPU[op].format(*args)


def _output_swar(i: int, rows: tuple, kinds: tuple, sim: bool) -> list:
    """Lines computing ``v{i}``, the lanes of output columns ``i`` and ``i + 2`` (the ``swar`` path,
    :func:`refconv.backends.filter2d_arith.swar_plan`; ``kinds``: each tap's truncation, none, floor,
    ceiling or by the lane's sign).  Each lane holds ``G = 2**15 - 1 - A``, the
    bitwise complement of ``2**15 + A`` (``A`` the partial sum in units of ``2**-k``), so that its
    bit 15 is set exactly where ``A < 0``; ``s = (2**15 - 1) * 0x10001``, a tap is
    ``s = (-m) * X + s`` and truncating ``A`` toward zero is, on ``G`` (whose low ``k`` bits are all
    ones at a whole ``A``): ``G | (2**k - 1)`` where ``A >= 0`` (the floor of ``A``), ``(G - (2**k -
    1)) | (2**k - 1)`` where ``A < 0`` (the ceiling).  A sign tap takes the subtrahend from one
    byte permute, ``prmt(s, 0, 0x4B49)`` (``0xFF`` in the low byte of each lane whose bit 15 is set,
    0 elsewhere), times ``KINV = (2**k - 1) * 0x01010101`` (``0xFF * KINV = -(2**k - 1) mod
    2**32``), one multiply-add: four instructions for two outputs, two on the integer ALU and two
    on the multiply pipe.  The output:
    ``v = s * nsc + nsc`` with ``nsc = -2**(8 - k - shift)``, which is ``~s << (8 - k - shift)`` (the
    complement ``~s = -s - 1``): the output bytes (bits ``k + shift ..`` of each lane) land in
    bytes 1 and 3, and the low lane's bits above 16 stay below the high lane's output byte (one
    multiply-add instead of a 32-bit shift, which numba widens to 64 bits)."""
    L = []
    for t in range(9):
        a, b = divmod(t, 3)
        L.append("s = " + _lane(sim, "mad", f"n{t}", f"p{rows[a]}_{i + b}", "BIASC" if t == 0 else "s"))
        op = _LANE_SET[kinds[t]]
        if op:
            L.append("s = " + _lane(sim, op[0], "s", *op[1:]))
    L.append(f"v{i} = " + _lane(sim, "imad", "s", "nsc", "nsc"))
    return L


def _trunc(t: int) -> str:
    """``(float)(int)s`` for ``|s| < 2**22`` before tap ``t``: odd taps through the conversion unit
    (``cvt.rzi.f32.f32``), even taps through the float pipe (``copysign(rz(|s| + 2**23) - 2**23, s)``),
    so that the two units share the work."""
    return "truncf(s)" if t % 2 else "copysign(fadd(fadd_rz(fabs(s), M), NEGM), s)"


def _output(i: int, path: str, rows: tuple, sat: bool, k: int = 0) -> list:
    """Lines computing ``v{i}`` for output column c0+i from the register rows ``rows`` = (top,
    middle, bottom) slots (taps in spec order): on the ``cvt`` path the shifted int; otherwise a
    float ``2**23 * 1.5 + n`` whose low byte is the output byte, ``n = trunc(s) >> shift`` taken as
    ``rd(trunc(s) * 2**-shift + 1.5 * 2**23)`` (exact: ``|n| < 2**22``, spacing 1 in ``[2**23,
    2**24)``; ``rd``, round down, is the arithmetic shift's floor), clamped to ``[0, 255]`` when
    saturating."""
    L = []
    taps = [(f"w{3 * a + b}", f"p{rows[a]}_{i + b}") for a in range(3) for b in range(3)]
    if path == "int":
        return _output_int(i, taps, sat, k)
    if path == "cvt":
        L.append(f"a = f2i(fmul({taps[0][0]}, {taps[0][1]}))")
        for w, x in taps[1:]:
            L.append(f"a = f2i(fadd(float32(a), fmul({w}, {x})))")
        L.append(f"v{i} = int32(int32(a) >> shift)")
        return L
    L.append(f"s = fmul({taps[0][0]}, {taps[0][1]})")
    for t, (w, x) in enumerate(taps[1:], start=1):
        L.append(f"a = {_trunc(t)}")
        L.append(f"s = fma({w}, {x}, a)" if path == "exact" else f"s = fadd(a, fmul({w}, {x}))")
    L.append(f"v{i} = fma_rd(truncf(s), sc, CB)")
    if sat:
        L.append(f"v{i} = min(max(v{i}, CB), CB255)")
    return L


def _output_int(i: int, taps: list, sat: bool, k: int) -> list:
    """The ``int`` path (weights ``W / 2**k`` with integer ``W``, every sum exact, ``|S| < 2**23``):
    ``S`` is the spec's float sum in units of ``2**-k``, an int32.  Before each tap and at the end
    ``t = S + (uint32(S) >> (32 - k))`` adds ``2**k - 1`` to a negative ``S`` (its top ``k`` bits are
    ones), so that ``t & -2**k`` is ``2**k * trunc(S / 2**k)`` (the spec's truncation toward zero)
    and ``t >> (k + shift)`` is ``trunc(S / 2**k) >> shift``; a tap is ``S = W * x + (t & -2**k)``
    (three integer instructions; with ``k = 0``, integer weights, one multiply-add).  ``v`` is the
    shifted int."""
    (w0, x0), rest = taps[0], taps[1:]
    L = [f"s = int32({w0} * {x0})"]
    for w, x in rest:
        if k:
            L.append("t = int32(s + int32(uint32(s) >> KSH))")
            L.append(f"s = int32({w} * {x} + (t & KMASK))")
        else:
            L.append(f"s = int32({w} * {x} + s)")
    L.append("t = int32(s + int32(uint32(s) >> KSH))" if k else "t = s")
    L.append(f"v{i} = int32(t >> (K + shift))")
    if sat:
        L.append(f"v{i} = min(max(v{i}, I0), I255)")
    return L


def _byte(i: int, sat: bool, path: str) -> str:
    """Output column ``i``'s byte."""
    if path == "swar":          # byte 1 (3) of pair i (i - 2): a byte permute, not a shift, which
        hi = i % 4 >= 2         # numba widens to 64 bits and LLVM then keeps the multiply-add's high word
        return f"uint32(byte_perm(v{i - 2 * hi}, I0, SELZ{1 + 2 * hi}))"
    if path == "int":
        return f"(uint32(v{i}) & UFF)"
    if path != "cvt":
        return f"(uint32(float_as_int(v{i})) & UFF)"
    return f"uint32(min(max(v{i}, I0), I255))" if sat else f"(uint32(v{i}) & UFF)"


def _word(q: int, sat: bool, path: str) -> str:
    """The output word of columns c0+4q .. c0+4q+3 (byte permutes of the float results' low bytes
    off the ``cvt`` path)."""
    if path == "swar":      # columns 4q, 4q+1 (low lanes), 4q+2, 4q+3 (high lanes): one byte permute
        return f"byte_perm(v{4 * q}, v{4 * q + 1}, SWW8)"
    if path == "int":       # the low bytes of the four ints, packed by byte permutes
        f = [f"v{4 * q + b}" for b in range(4)]
        return f"byte_perm(byte_perm({f[0]}, {f[1]}, PK0), byte_perm({f[2]}, {f[3]}, PK0), PK1)"
    if path != "cvt":
        f = [f"float_as_int(v{4 * q + b})" for b in range(4)]
        return f"byte_perm(byte_perm({f[0]}, {f[1]}, PK0), byte_perm({f[2]}, {f[3]}, PK0), PK1)"
    return " | ".join(f"({_byte(4 * q + b, sat, path)} << S{8 * b})" for b in range(4))


def _store(vec: bool, sat: bool, path: str, off32: bool = False) -> list:
    """Lines storing row ``r``'s 16 outputs: where the whole chunk is interior (``full``, computed
    once before the row loop: every thread but a row's first and last) two 64-bit stores, else
    word or byte stores each guarded by its columns (``off32`` as for :func:`source`)."""
    if vec and off32:
        L = ["oq = uint64(mad(int32(r), W8, gx2))", "ob = oq * U8"]
    else:
        L = ["ob = uint64(r) * Wu + c0u", "oq = ob >> U3"]
    if vec:
        L.append("if full:")
        L += [f"    out64[oq + U{h}] = uint64(uint32({_word(2 * h, sat, path)})) | "
              f"(uint64(uint32({_word(2 * h + 1, sat, path)})) << U32)" for h in range(2)]
        L.append("else:")
        for q in range(4):
            L.append(f"    if c0 + {4 * q} >= 1 and c0 + {4 * q + 3} <= W - 2:")
            L.append(f"        out32[(ob >> U2) + U{q}] = {_word(q, sat, path)}")
            L.append("    else:")
            for b in range(4):
                i = 4 * q + b
                L.append(f"        if c0 + {i} >= 1 and c0 + {i} <= W - 2:")
                L.append(f"            out8[ob + U{i}] = uint8({_byte(i, sat, path)})")
    else:
        for i in range(COLS):
            L.append(f"if c0 + {i} >= 1 and c0 + {i} <= W - 2:")
            L.append(f"    out8[ob + U{i}] = uint8({_byte(i, sat, path)})")
    return L


def unrolled_rows(rows: int, step, full: bool = False) -> list:
    """The row loop over ``rows`` output rows, unrolled by three (``full``: not a loop at all, every
    row its own code, as the OpenCL twins' ``#pragma unroll`` does): ``step(j, slots)`` gives the
    lines of output row ``r0 + k + j`` from the register rows ``slots`` = (top, middle, bottom), the
    bottom one to be filled.  Within an iteration the slots rotate (0, 1, 2), (1, 2, 0), (2, 0, 1),
    so that after three rows they are back where they started and no register row is copied (a
    rolled loop copies two rows of registers an output row).  Where ``rows`` is not a multiple of
    three, a row past ``rows`` returns."""
    if full:
        L = ["k = 0"]
        for j in range(rows):
            L += step(j, (j % 3, (j + 1) % 3, (j + 2) % 3))
        return L
    L = []
    for j in range(min(rows, 3)):
        if j and rows % 3:
            L += [f"if k + {j} >= {rows}:", "    return"]
        L += step(j, (j % 3, (j + 1) % 3, (j + 2) % 3))
    if rows <= 3:
        return ["k = 0"] + L
    return [f"for k in range(0, {rows}, 3):"] + ["    " + x for x in L]


def source(build: Build, sim: bool = False) -> str:
    """The Python source of ``build``'s kernel ``kern(img8, img64, out8, out32, out64, wg0, .., wg8, H,
    W, shift, sc)`` (``sim``: the lane operations as the simulator's helpers, else inline int32
    expressions and PTX; ``sc = 2**-shift``; the weights are nine scalar arguments, which sit in the
    constant bank and feed each multiply-add directly instead of being loaded by every thread): two
    input rows loaded and converted and the third loaded before the ``rows`` output rows
    (:func:`unrolled_rows`, fully unrolled, the register rows renamed instead of copied), each of
    which converts the loaded row into the bottom register row, loads the row after it (issued
    before this row's arithmetic and stores, so the load overlaps them; not on the band's last row,
    whose next row no output of the thread uses), computes and stores.  ``off32`` (with ``vec``): a
    row chunk's place is an int32 index of 8-byte words, ``row * W/8 + c0/8``, one multiply-add
    (inline PTX, kept 32-bit), widened once and scaled by the address arithmetic, instead of numba's
    64-bit products and shifts (about 20 instructions a row).  ``exact``: no row is tested against
    the last output row nor clamped to the last input row.  On the word layout (``vec``) ``img8``
    and ``img64`` are the padded buffer of :func:`padded_image`."""
    rows, path, vec, sat, off32, exact = build.rows, build.path, build.vec, build.sat, build.off32, build.exact
    body = ["gx = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x",
            "c0 = gx * 16",
            f"r0 = 1 + cuda.blockIdx.y * {rows}",
            "if c0 >= W - 1 or r0 > H - 2:",
            "    return",
            "Wu = uint64(W)", "c0u = uint64(c0)", "gq = uint64(gx) * U2 + UPAD8",
            "full = c0 >= 1 and c0 + 15 <= W - 2"]
    if vec and off32:       # gx2: the chunk's 8-byte word in an output row, gi2: in the padded input
        body += ["W8 = int32(W >> 3)", "gx2 = int32(gx * 2)", "gi2 = int32(gx2 + IPAD8)", "Hm1 = int32(H - 1)"]
    if path == "swar":      # the complemented lanes: the host passes -m
        body += [f"n{t} = wg{t}" for t in range(9)]
        body += [f"w{t} = int32(-n{t})" for t in range(9)]
        body += ["ks = int32(K + shift)", "nsc = int32(-(1 << (8 - ks)))"]
    else:
        body += [f"w{t} = wg{t}" for t in range(9)]
    body += _load_raw(0, vec, off32, exact) + _load_raw(1, vec, off32, exact)
    body += _convert_row(0, 0, path, vec) + _convert_row(1, 1, path, vec)
    body += _load_raw(2, vec, off32, exact)

    def step(j: int, slots: tuple) -> list:
        L = [f"r = r0 + k + {j}"] + ([] if exact else ["if r > H - 2:", "    return"])
        L += _convert_row(2, slots[2], path, vec)
        nxt = [s.replace("r0 - 1 + 2", "r + 2") for s in _load_raw(2, vec, off32, exact)]
        if j + 1 < rows:         # every row its own code: the band's last row loads nothing after it
            L += nxt
        if path == "swar":
            for i in PAIRS:
                L += _output_swar(i, slots, build.kinds, sim)
        else:
            for i in range(COLS):
                L += _output(i, path, slots, sat, build.k)
        return L + _store(vec, sat, path, off32)

    body += unrolled_rows(rows, step, full=True)
    head = f"def kern(img8, img64, out8, out32, out64, {', '.join(f'wg{t}' for t in range(9))}, H, W, shift, sc):"
    return "\n".join([head] + ["    " + b for b in body]) + "\n"


@functools.lru_cache(maxsize=None)
def _kernel(build: Build, mode: str):
    cuda = rc.cuda()
    from numba import float32, int32, uint8, uint32, uint64
    src = source(build, mode == "sim")
    b = build
    tag = {"int": str(b.k), "swar": f"{b.k}:{''.join(map(str, b.kinds))}"}.get(b.path, "")
    fname = (f"<refconv filter2d_best R{b.rows} {b.path}{tag} {'vec' if b.vec else 'byte'}{' off32' if b.off32 else ''}"
             f"{' exact' if b.exact else ''} {'sat' if b.sat else 'wrap'}>")
    k = b.k
    ns = dict(device_ops(), cuda=cuda, float32=float32, int32=int32, uint8=uint8, uint32=uint32, uint64=uint64,
              M=np.float32(_M), NEGM=np.float32(-_M), F0=np.float32(0), MAGI=np.int32(0x4B000000),
              Z8=np.uint8(0), UFF=np.uint32(0xFF), I255=np.int32(255), min=min, max=max,
              CB=np.float32(_CB), CB255=np.float32(_CB + 255), PK0=np.int32(0x0040), PK1=np.int32(0x5410),
              **{f"SEL{b}": np.int32(0x7540 | b) for b in range(4)},
              **{f"SELZ{b}": np.int32(0x4440 | b) for b in range(4)},
              K=np.int32(k), KSH=np.uint32(32 - k), KMASK=np.int32(-(1 << k)),
              I16=np.int32(16), **lane_constants(k), SWE=np.int32(0x4240),
              SWO=np.int32(0x4341), SWL=np.int32(0x5453), SWF=np.int32(0x5432), SWR=np.int32(0x3432),
              SWW8=np.int32(0x7351),
              **{f"S{s}": np.uint32(s) for s in (0, 8, 16, 24)}, **{f"U{n}": np.uint64(n) for n in (*range(18), 32)},
              UPAD8=np.uint64(PAD // 8), IPAD8=np.int32(PAD // 8),
              M32=np.uint64(0xFFFFFFFF))
    return jit_source(cuda, src, fname, ns, build.max_registers)


def jit_source(cuda, src: str, fname: str, ns: dict, max_registers=None):
    """``cuda.jit`` of the function ``kern`` that generated source ``src`` defines, executed in the
    namespace ``ns``; the source is put in :mod:`linecache` under ``fname``, so that numba's errors
    and the compile check's findings quote its lines."""
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    exec(compile(src, fname, "exec"), ns)
    if max_registers is None:
        return cuda.jit(ns["kern"])
    return cuda.jit(max_registers=max_registers)(ns["kern"])


def _grid(H: int, W: int, rows: int, bx: int) -> tuple:
    return (rc.cdiv(rc.cdiv(W, COLS), bx), rc.cdiv(max(H - 2, 1), rows))


def specialise(design: Build, problem, arith: str = "auto") -> tuple:
    """``(build, weights)``: ``design`` specialised for ``problem`` (the arithmetic path chosen from its
    weights and output stage, ``arith`` as :func:`refconv.backends.filter2d_arith.choose_path` takes
    it), and the nine weights as the kernel takes them (float32, or on the ``int`` and ``swar``
    paths int32 in units of ``2**-k``, negated on the ``swar`` path's complemented lanes)."""
    img = problem.inputs["image"]
    w = np.ascontiguousarray(problem.inputs["weights"], dtype=np.float32).reshape(-1)
    H, W = img.shape
    vec = W % COLS == 0
    sat = problem.option("cast") == "saturate"
    path = choose_path(w, arith, problem.option("shift"), sat)
    kexp, kinds = (dyadic_exponent(w) if path in ("int", "swar") else 0), ()
    if path == "swar":
        kexp, _, kinds = swar_plan(w, problem.option("shift"), sat)
    if path in ("int", "swar"):       # the weights in units of 2**-k, exact integers
        w = (w.astype(np.float64) * 2.0 ** kexp).astype(np.int32)
    if path == "swar":                # the complemented lanes subtract the products
        w = -w
    build = dataclasses.replace(design, path=path, vec=vec, sat=sat, k=kexp, kinds=kinds,
                                off32=vec and arith_mod.offsets_fit_int32(H, W),
                                exact=arith_mod.bands_exact(H, design.rows))
    return build, w


def _make_run(design: Build):
    def run(problem, out, bx=BX, arith="auto"):
        cuda = rc.cuda()
        img = np.ascontiguousarray(problem.inputs["image"])
        H, W = img.shape
        build, w = specialise(design, problem, arith)
        k = _kernel(build, rc.mode())
        d_out, n = rc.to_device_poisoned(out, pad_to=8)
        d_img8 = padded_image(cuda, img) if build.vec else cuda.to_device(img.reshape(-1))
        d_img64 = d_img8.view(np.uint64) if build.vec else d_img8
        rc.launch(k[_grid(H, W, design.rows, bx), (bx, 1)], d_img8, d_img64, d_out, d_out.view(np.uint32),
                  d_out.view(np.uint64), *(w.dtype.type(v) for v in w),
                  np.int32(H), np.int32(W), np.int32(problem.option("shift")),
                  np.float32(2.0 ** -problem.option("shift")))
        cuda.synchronize()
        return rc.from_device(d_out, n, out)
    return run


def padded_image(cuda, img: np.ndarray):
    """``img`` flattened into a zeroed device buffer of ``img.size + 2 *`` :data:`PAD` bytes, at
    offset ``PAD``: the word layout's halo words beside the image's first and last chunk are then in
    the buffer (:func:`_load_raw`)."""
    n = img.size
    d = cuda.device_array(n + 2 * PAD, np.uint8)
    d[PAD:PAD + n].copy_to_device(img.reshape(-1))
    zeros = np.zeros(PAD, np.uint8)
    d[:PAD].copy_to_device(zeros)
    d[PAD + n:].copy_to_device(zeros)
    return d


def row_block_constraint(grid, rows: int, default_bx: int, pad: int = 0):
    """The device limits of a best_R kernel (filter2d's or sobel's): ``bx`` threads a block (the
    run's default when not given), a grid of ``grid(H, W, rows, bx)`` blocks, the inputs (and
    ``pad`` bytes more) and the uint8 output (padded to a word) in device memory."""
    def check(problem, params):
        H, W = problem.dims["h"], problem.dims["w"]
        bx = params.get("bx", default_bx)
        return rc.fits(problem, threads=bx, grid=grid(H, W, rows, bx),
                       device_bytes=problem.input_nbytes() + pad + H * W + 4)
    return check


def make_variant(design: Build) -> Variant:
    """The variant ``filter2d/numba_cuda/best_R{rows}`` of ``design`` (a :data:`SHIPPED` one, or a
    lab's own, e.g. with a register cap)."""
    rows = design.rows
    return Variant(
        op="filter2d", backend="numba_cuda", name=f"best_R{rows}", run=_make_run(design),
        supports=dict(SUPPORTS),
        params=(Param("bx", (32, 64, 128, 256), BX), Param("arith", ARITH, "auto")),
        available=rc.reason, writes="interior", constraint=row_block_constraint(_grid, rows, BX, 2 * PAD), origin=ORIGIN,
        doc=(f"3x3 uint8 filter, a thread computes 16 columns x {rows} rows from register-held "
             "input rows (64-bit word loads/stores where W % 16 == 0, bytes otherwise); "
             "acc=(int)((float)acc+w*(float)x) per tap bit for bit, through conversions (arith=cvt) "
             "or, where the weights bound every partial sum below 2**22, through exact round-toward-zero "
             "float adds (and one FMA a tap when every product and sum is exact), or, for small dyadic "
             "weights and a wrapped output, two outputs in the 16-bit lanes of one int32 (one multiply-add "
             "a tap for both; arith=float turns this off); acc>>shift, wrap or saturate to uint8; "
             "interior only"))


def variants():
    return [make_variant(d) for d in SHIPPED]
