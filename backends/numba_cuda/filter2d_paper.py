"""filter2d, 3x3 uint8, paper-faithful integer accumulator: the 33 kernels of seed 000
(Özer & Demirci, "Konvolüsyon İşlemi Üzerinde GPU Eniyileme Yöntemlerinin Etkisi").

What every kernel computes (the meaning of the paper's listings, Algorithms 1-3 and §2.4.5):
``int acc = 0``; for the 9 taps, kernel row outer, column inner, ``acc = (int)((float)acc +
w*(float)x)`` in float32 without FMA; then ``acc >> shift`` (the paper: ``>> 4``) and a C wrap
cast to ``unsigned char``.  Only the interior (pixels whose 3x3 window lies inside the image) is
written.

Memory kinds (Çizelge 1): ``GM`` weights in global memory; ``CM`` weights in constant memory
(one compiled kernel per weight matrix: ``cuda.const.array_like`` needs the values at compile
time); ``SM`` the block's input tile plus a 1-pixel halo (corners too) staged in shared memory,
weights in global memory.  ``_CF{k}``: a thread computes k consecutive outputs along x, sliding
the 3x3 frame in registers (one new column per output), weights loaded once.  ``_Vec``: the k
output bytes are stored as 32-bit words (16-bit for CF=2, as the paper's halved STG count for
CF=2 shows) wherever a word is aligned and lies wholly inside the thread's interior outputs,
bytes elsewhere (row start/end, unaligned heads and tails; rows start at ``y*W`` which is rarely
a multiple of 4, and the interior starts at x=1).

Deviations from the printed listings (bugs, not meaning): Algorithm 2 loads no halo corners and
hard-codes a 32x32 block; Algorithm 3 never resets ``new_val`` between outputs, skips the first
column block (``ty > 0`` with ``ty = 2*thread``), writes the second output unshifted and tests
``ty`` instead of ``_ty`` against the right edge.

How the kernels are written (:func:`source`; the same loads and the same arithmetic in the same
order as the OpenCL twin, ``backends/opencl/filter2d_3x3.cl``): one generated straight-line kernel
per (memory kind, CF, _Vec, block shape), the CF loop unrolled, the 3x3 window nine float32
registers that slide by renaming; a pixel is converted to float once, as its column enters the
window (exact for uint8); every thread with an interior output computes all CF outputs (columns
outside the image read as 0 and feed only outputs that are not stored), so only the stores and
the loads of columns that may lie outside the image are guarded.  Indices are int32 (the block
shape is a compile-time constant), a row's place ``(r-1)*W + c0`` is computed once, and subscripts
are unsigned 64-bit (numba wraps a negative signed subscript around: a 64-bit compare and select a
load).
"""
from __future__ import annotations

import functools

import numpy as np

from refconv import Param, Range, Variant

from refconv.tooling import cuda as kit
from refconv.tooling.cuda import cdiv, fits, from_device, io_bytes, launch, to_device_poisoned

from .filter2d_best import _ptx_intrinsic, jit_source

ORIGIN = "seeds/000_4bc22224e0c2d458.txt"
_SECTIONS = {"GM": "§2.4.1 Algoritma 1 (temel çekirdek)", "CM": "§2.4.2 sabit bellek",
             "SM": "§2.4.3 Algoritma 2 (paylaşımlı bellek)"}
CFS = (2, 4, 8, 12, 16)

SUPPORTS = {"dtype": ("uint8",), "c": (0,), "kh": (3,), "kw": (3,), "boundary": ("valid",),
            "flip": (False,), "accumulator": ("int",), "shift": Range(0, 8), "cast": ("wrap",),
            "rounding": ("trunc",), "out_dtype": (None,), "h": Range(3), "w": Range(3)}


def _vw(cf: int) -> int:
    """The bytes of a ``_Vec`` word: 4, 2 for CF=2 (as the study's halved STG count for CF=2 shows)."""
    return 2 if cf == 2 else 4


def _col(k: int) -> str:
    """The name part of window column ``c0 + k`` (``k >= -1``)."""
    return "m1" if k < 0 else str(k)


def _load_col(k: int, mem: str) -> list:
    """Lines loading column ``c0 + k`` of rows r-1, r, r+1 as floats ``x{k}_0 .. x{k}_2``.  The
    conversion of a uint8 is exact, so each pixel is converted once, as its column enters the
    window, not once a tap.  From the shared tile every column is there (its halo holds zeros);
    from global memory a column outside the image reads as 0 without a load.  Columns ``c0`` and
    ``c0 + 1`` are inside for every thread that gets here (``c0 < W - 1``); the others only feed
    outputs that are not stored where they are outside, but must not be loaded there."""
    n = _col(k)
    if mem == "SM":
        off = "t0 - U1" if k < 0 else f"t0 + U{k}"
        return [f"x{n}_{i} = float32(tile[{off}{f' + UTW{i}' if i else ''}])" for i in range(3)]
    off = (lambda i: f"p{i} - U1") if k < 0 else (lambda i: f"p{i} + U{k}")
    loads = [f"x{n}_{i} = float32(img[{off(i)}])" for i in range(3)]
    if k in (0, 1):
        return loads
    cond = "c0 > 0" if k < 0 else f"lim >= {k - 1}"      # c0 + k <= W - 1
    return ([f"if {cond}:"] + ["    " + x for x in loads] + ["else:"]
            + [f"    x{n}_{i} = F0" for i in range(3)])


def _output(j: int) -> list:
    """Output ``c0 + j``: the nine taps over window columns j-1, j, j+1, kernel row outer, column
    inner; ``acc = (int)((float)acc + w*(float)x)``, product and sum each rounded (``fmul``/``fadd``
    are libdevice's ``__fmul_rn``/``__fadd_rn``, which NVVM never contracts into an FMA), the
    conversion ``cvt.rzi.s32.f32`` (truncation, saturating, NaN -> 0).  The first tap's
    ``(float)acc`` is the constant 0.0f."""
    cols = (_col(j - 1), _col(j), _col(j + 1))
    L = []
    for t in range(9):
        x = f"x{cols[t % 3]}_{t // 3}"
        a = "F0" if t == 0 else "float32(acc)"
        L.append(f"acc = f2i(fadd({a}, fmul(w{t}, {x})))")
    L.append(f"o{j} = uint32(sar32(acc, sh))")          # its low byte: the wrap to uint8
    return L


def _word(j: int, vw: int) -> str:
    """The word of outputs ``j .. j+vw-1``, output ``j`` in its lowest byte (byte permutes on sm_90)."""
    return " | ".join(f"((o{j + q} & UFF) << S{8 * q})" if q else f"(o{j} & UFF)" for q in range(vw))


def _stores(cf: int, vec: bool) -> list:
    """The stores of the thread's outputs ``c0 .. c0+cf-1`` of row ``r`` (``ob``: the first one's
    index), interior columns only (``1 <= c <= W - 2``; ``lim = W - 2 - c0 >= 0``).  Scalar: one
    guarded byte store each.  ``_Vec``: an output is stored inside a word (``vw`` bytes at an
    address that is a multiple of ``vw``) where that word lies wholly among the thread's interior
    outputs, as a byte elsewhere.  Where the thread's outputs are all interior and its first one is
    word aligned (every thread of a row but the first and the last, where ``W`` is a multiple of 4)
    that is cf / vw word stores; otherwise each output's predicates say it: a word starts at ``j``
    where ``ob + j`` is aligned and ``j .. j+vw-1`` are interior, and output ``j`` is a byte where
    it is interior and no such word ``s = j - ((ob + j) mod vw)`` covers it."""
    def byte(j):
        if j == 0:
            return ["if c0 > 0:", "    out8[ob] = uint8(o0)"]
        return [f"if lim >= {j}:", f"    out8[ob + U{j}] = uint8(o{j})"]
    if not vec:
        L = []
        for j in range(cf):
            L += byte(j)
        return L
    vw = _vw(cf)
    wt = "uint16" if vw == 2 else "uint32"
    sh = "U1" if vw == 2 else "U2"
    L = [f"mis = uint32(ob) & UVM", f"if mis == UZ and c0 > 0 and lim >= {cf - 1}:"]
    L += [f"    outv[(ob >> {sh}) + U{j // vw}] = {wt}({_word(j, vw)})" for j in range(0, cf, vw)]
    L.append("else:")
    B = []
    starts = range(cf - vw + 1)
    for s in starts:       # word start at s: aligned, first column interior, last column interior
        first = "c0 > 0 and " if s == 0 else ""
        B.append(f"ws{s} = ((mis + UI{s}) & UVM) == UZ and {first}lim >= {s + vw - 1}")
    for j in range(cf):
        if j in starts:
            B += [f"if ws{j}:", f"    outv[(ob + U{j}) >> {sh}] = {wt}({_word(j, vw)})"]
        cover = [f"ws{s}" for s in range(max(0, j - vw + 1), j + 1) if s in starts]
        guard = [f"if not ({' or '.join(cover)}):"] if cover else []
        B += guard + ["    " * bool(cover) + x for x in byte(j)]
    return L + ["    " + x for x in B]


def _fill(bx: int, by: int, cf: int, sim: bool) -> list:
    """Lines filling the SM tile: image rows ``gy*by - 1 ..``, columns ``gx*bx*cf - 1 ..``, zeros
    outside the image; the block's threads take its elements in turn (element ``i`` of the
    row-major tile by thread ``i mod bx*by``), the (row, column) of the next one kept by adding, not
    by a division an element.  On the GPU in int32, tested with one unsigned compare a coordinate;
    under the simulator the same steps on Python integers (a NumPy scalar cast costs there what
    the rest of the step does)."""
    TW, TH, NT = bx * cf + 2, by + 2, bx * by
    if sim:
        head = [f"i = int(ty) * {bx} + int(tx)", f"yy = int(y0) + i // {TW}", f"xx = int(x0) + i % {TW}",
                "Hp = int(Hi)", "Wp = int(Wi)"]
        test, load, at = "0 <= yy < Hp and 0 <= xx < Wp", "img[yy * Wp + xx]", "i"
        step = [f"i += {NT}", f"yy += {NT // TW}", f"xx += {NT % TW}", "if xx >= xe:", f"    xx -= {TW}",
                "    yy += 1"]
    else:
        head = [f"i = int32(ty * {bx} + tx)", "ti = int32(uint32(i) // UTW)", f"xx = int32(x0 + i - ti * {TW})",
                "yy = int32(y0 + ti)"]
        test = "uint32(yy) < uint32(Hi) and uint32(xx) < uint32(Wi)"
        load, at = "img[uint64(uint32(yy)) * Wu + uint64(uint32(xx))]", "uint64(uint32(i))"
        step = [f"i = int32(i + {NT})", f"yy = int32(yy + {NT // TW})", f"xx = int32(xx + {NT % TW})",
                "if xx >= xe:", f"    xx = int32(xx - {TW})", "    yy = int32(yy + 1)"]
    return ([f"y0 = int32(gy * {by} - 1)", f"x0 = int32(gx * {bx * cf} - 1)", f"xe = int32(x0 + {TW})"] + head
            + [f"while i < {TH * TW}:", "    v = Z8", f"    if {test}:", f"        v = {load}",
               f"    tile[{at}] = v"] + ["    " + x for x in step])


def source(mem: str, cf: int, vec: bool, bx: int, by: int, sim: bool = False) -> str:
    """The Python source of the kernel ``kern(img, out8, outv, wg, H, W, shift)`` of one variant and
    block shape (``bx`` x ``by``): straight-line code, the CF loop unrolled (the window's columns are
    registers, renamed instead of copied).  Indices are int32, widened to uint64 where they
    subscript (the constants ``U{n}``); a row's place is computed once, ``(r-1)*W + c0``, and the
    pixels of a row are that place plus a constant.  ``sim``: the SM tile fill on Python integers
    (:func:`_fill`)."""
    TW = bx * cf + 2
    TH = by + 2
    L = ["Hi = int32(H)", "Wi = int32(W)", "sh = int32(shift & I31)",
         "tx = int32(cuda.threadIdx.x)", "ty = int32(cuda.threadIdx.y)",
         "gx = int32(cuda.blockIdx.x)", "gy = int32(cuda.blockIdx.y)",
         f"r = int32(gy * {by} + ty)", f"c0 = int32((gx * {bx} + tx) * {cf})",
         "Wu = uint64(uint32(Wi))"]
    if mem == "SM":
        L += [f"tile = cuda.shared.array({TH * TW}, uint8)"] + _fill(bx, by, cf, sim) + ["cuda.syncthreads()"]
    L += ["Hm2 = int32(Hi - 2)", "Wm1 = int32(Wi - 1)",
          "if r < 1 or r > Hm2 or c0 >= Wm1:", "    return",
          "lim = int32(Wi - 2 - c0)"]
    if mem == "CM":
        L += ["wc = cuda.const.array_like(WC)"] + [f"w{t} = wc[{t}]" for t in range(9)]
    else:
        L += [f"w{t} = wg[{t}]" for t in range(9)]
    if mem == "SM":
        L += [f"t0 = uint64(uint32(ty * {TW} + tx * {cf} + 1))"]     # tile row of r-1, column of c0
    else:
        L += ["p0 = uint64(uint32(r - 1)) * Wu + uint64(uint32(c0))", "p1 = p0 + Wu", "p2 = p1 + Wu"]
    L += _load_col(-1, mem) + _load_col(0, mem) + _load_col(1, mem)
    for j in range(cf):
        if j > 0:
            L += _load_col(j + 1, mem)
        L += _output(j)
    if mem == "SM":
        L += ["ob = uint64(uint32(r)) * Wu + uint64(uint32(c0))"]
    else:
        L += ["ob = p1"]
    L += _stores(cf, vec)
    return "def kern(img, out8, outv, wg, H, W, shift):\n" + "".join(f"    {x}\n" for x in L)


def _sar32_sim(a, s):
    """The int32 arithmetic shift ``a >> s`` under the simulator (on a GPU one ``shr.s32``:
    numba widens ``int32 >> int32`` to 64 bits, two instructions an output)."""
    return np.int32(np.int32(a) >> np.int32(s))


@functools.lru_cache(maxsize=None)
def _kernel(mem: str, cf: int, vec: bool, bx: int, by: int, wkey: bytes | None, mode: str):
    cuda = kit.cuda()
    if mode == "sim":       # numba's types cast Python values through NumPy's, at several times the cost
        from numpy import float32, int32, uint8, uint16, uint32, uint64
    else:
        from numba import float32, int32, uint8, uint16, uint32, uint64
    fmul, fadd, f2i, _, _ = kit.float_ops()
    sar32 = _sar32_sim if mode == "sim" else _ptx_intrinsic("shr.s32 $0, $1, $2;", 2)
    src = source(mem, cf, vec, bx, by, mode == "sim")
    WC = (np.frombuffer(wkey, np.float32).copy() if wkey is not None else np.zeros(9, np.float32))
    ns = dict(cuda=cuda, float32=float32, int32=int32, uint8=uint8, uint16=uint16, uint32=uint32,
              uint64=uint64, fmul=fmul, fadd=fadd, f2i=f2i, sar32=sar32, WC=WC, F0=np.float32(0),
              Z8=np.uint8(0), UZ=np.uint32(0), I31=np.int32(31), UTW=np.uint32(bx * cf + 2),
              UFF=np.uint32(0xFF), UVM=np.uint32(_vw(cf) - 1),
              **{f"UI{n}": np.uint32(n) for n in range(cf)},
              **{f"S{s}": np.uint32(s) for s in (0, 8, 16, 24)},
              **{f"U{n}": np.uint64(n) for n in range(cf + 2)},
              **{f"UTW{i}": np.uint64(i * (bx * cf + 2)) for i in (1, 2)})
    fname = f"<refconv filter2d_paper {mem} CF{cf}{' vec' if vec else ''} {bx}x{by}>"
    return jit_source(cuda, src, fname, ns)


def _make_run(mem, cf, vec):
    def run(problem, out, bx=32, by=8):
        cuda = kit.cuda()
        img = np.ascontiguousarray(problem.inputs["image"])
        w = np.ascontiguousarray(problem.inputs["weights"], dtype=np.float32).reshape(-1)
        shift = int(problem.option("shift"))
        H, W = img.shape
        k = _kernel(mem, cf, vec, bx, by, w.tobytes() if mem == "CM" else None, kit.mode())
        d_out, n = to_device_poisoned(out, pad_to=4)
        if vec:
            d_v = d_out.view(np.uint16 if cf == 2 else np.uint32)
        else:
            d_v = d_out
        d_img = cuda.to_device(img.reshape(-1))
        d_w = cuda.to_device(w)
        grid = (cdiv(cdiv(W, cf), bx), cdiv(H, by))
        launch(k[grid, (bx, by)], d_img, d_out, d_v, d_w, np.int32(H), np.int32(W), np.int32(shift))
        cuda.synchronize()
        return from_device(d_out, n, out)
    return run


def _constraint(mem, cf):
    """The device limits: bx*by threads, a grid of (W/cf/bx, H/by) blocks, SM's (by+2) x (bx*cf+2)
    byte tile, CM's 9 float weights, image + output (+ padding to a word) in device memory."""
    def check(problem, params):
        bx, by = params.get("bx", 32), params.get("by", 8)
        H, W = problem.dims["h"], problem.dims["w"]
        return fits(problem, threads=bx * by, grid=(cdiv(cdiv(W, cf), bx), cdiv(H, by)),
                    shared=(by + 2) * (bx * cf + 2) if mem == "SM" else 1,   # the kernel's 1x1 tile otherwise
                    const=36 if mem == "CM" else 0,
                    device_bytes=io_bytes(problem, H * W + 4, 1))
    return check


def variants():
    available = kit.reason
    out = []
    table = [(m, 1, False) for m in ("GM", "CM", "SM")]
    table += [(m, k, False) for m in ("GM", "CM", "SM") for k in CFS]
    table += [(m, k, True) for m in ("GM", "CM", "SM") for k in CFS]
    for mem, cf, vec in table:
        name = mem + (f"_CF{cf}" if cf > 1 else "") + ("_Vec" if vec else "")
        sec = _SECTIONS[mem] + (" + §2.4.4 Algoritma 3 (kalınlaştırma)" if cf > 1 else "") + \
            (" + §2.4.5 vektörleştirme" if vec else "")
        doc = (f"3x3 uint8 filter, weights in {'constant' if mem == 'CM' else 'global'} memory"
               + (", input tile + 1-px halo in shared memory" if mem == "SM" else "")
               + (f", {cf} consecutive outputs per thread (sliding 3x3 register frame)" if cf > 1 else "")
               + (f", outputs stored as {'16' if cf == 2 else '32'}-bit words where aligned" if vec else "")
               + "; acc=(int)((float)acc+w*(float)x) per tap (row-major, no FMA), acc>>shift, wrap to uint8; "
               "interior only")
        out.append(Variant(
            op="filter2d", backend="numba_cuda", name=name, run=_make_run(mem, cf, vec),
            supports=dict(SUPPORTS),
            params=(Param("bx", (4, 8, 16, 32), 32), Param("by", (2, 4, 8), 8)),
            available=available, writes="interior", constraint=_constraint(mem, cf),
            origin=f"{ORIGIN} {sec}", doc=doc))
    return out
