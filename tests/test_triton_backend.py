"""The triton backend under Triton's interpreter (no GPU, no torch on this path): the kit's
launches and its memory checker called directly, the built-in variants through ``refconv check``,
and deliberately wrong Triton kernels -- in the backend's own tests and as a third-party plugin
written against the public kit only -- each caught by a ci run with a fixed seed."""
from __future__ import annotations

import json

import numpy as np
import pytest

from helpers import plugin_env, refconv_cli

pytest.importorskip("triton")

from refconv import findings  # noqa: E402
from refconv.tooling.triton import kit  # noqa: E402

import triton.language as tl  # noqa: E402
from triton import jit as triton_jit_plain  # noqa: E402


@pytest.fixture(autouse=True)
def interpret():
    kit.configure({"triton": "interpret"})
    assert kit.mode() == "interpret"


# ----------------------------------------------------------------------------- kernels under test

@kit.jit
def copy_masked(src, dst, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(dst + i, tl.load(src + i, mask=i < n, other=0), mask=i < n)


@kit.jit
def copy_unmasked_load(src, dst, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    x = tl.load(src + i)
    tl.store(dst + i, x, mask=i < n)


@kit.jit
def copy_unmasked_store(src, dst, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    x = tl.load(src + i, mask=i < n, other=0)
    tl.store(dst + i, x)


@kit.jit
def reads_its_output(src, dst, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    old = tl.load(dst + i, mask=i < n, other=0)
    tl.store(dst + i, old + tl.load(src + i, mask=i < n, other=0), mask=i < n)


@kit.jit
def writes_its_input(src, dst, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(src + i, tl.load(src + i, mask=i < n, other=0), mask=i < n)
    tl.store(dst + i, tl.load(src + i, mask=i < n, other=0), mask=i < n)


@kit.jit
def dot16(a, b, c, PREC: tl.constexpr):
    r = tl.arange(0, 16)
    x = tl.load(a + r[:, None] * 16 + r[None, :])
    y = tl.load(b + r[:, None] * 16 + r[None, :])
    if PREC == "default":
        z = tl.dot(x, y)
    else:
        z = tl.dot(x, y, input_precision=PREC)
    tl.store(c + r[:, None] * 16 + r[None, :], z)


def _line_of(fn, text: str) -> int:
    import inspect
    lines, start = inspect.getsourcelines(fn.fn)
    return start + next(i for i, s in enumerate(lines) if text in s)


def _launch(kernel, n=10, B=4, src=None, poison=255):
    src = np.arange(n, dtype=np.uint8) if src is None else src
    out = np.full(n, poison, np.uint8)
    with findings.collect() as found:
        kit.launch(kernel, (kit.cdiv(n, B),), src, kit.OUT, n, out=out, B=B)
    return out, found


# ----------------------------------------------------------------------------- the kit and the checker

def test_a_masked_kernel_runs_on_numpy_arrays_without_findings():
    out, found = _launch(copy_masked)
    assert found == []
    assert out.tolist() == list(range(10))


def test_the_poison_stays_where_the_kernel_does_not_write():
    @kit.jit
    def first_half(src, dst, n, B: tl.constexpr):
        i = tl.arange(0, B)
        tl.store(dst + i, tl.load(src + i), mask=i < n // 2)

    out, found = _launch(first_half, n=8, B=8)
    assert found == []
    assert out.tolist() == [0, 1, 2, 3, 255, 255, 255, 255]


def test_an_unmasked_load_past_the_buffer_is_out_of_bounds_with_kernel_buffer_index_and_line():
    out, found = _launch(copy_unmasked_load, n=10, B=4)     # 3 programs of 4: lanes 10 and 11 read past src
    oob = [f for f in found if f["class"] == "out-of-bounds"]
    assert len(oob) == 1, found
    f = oob[0]
    assert f["access"] == "load" and f["array"] == "src" and f["index"] == 10, f
    assert f["kernel"] == "copy_unmasked_load" and f["program"] == [2, 0, 0], f
    assert f["line"].endswith(f":{_line_of(copy_unmasked_load, 'x = tl.load(src + i)')}"), f
    assert "2 lane(s) in 1 program(s)" in f["message"], f
    assert out.tolist() == list(range(10))          # the in-bounds lanes still ran


def test_a_store_without_its_mask_is_out_of_bounds_and_not_performed():
    out, found = _launch(copy_unmasked_store, n=10, B=4)
    (f,) = [f for f in found if f["class"] == "out-of-bounds"]
    assert f["access"] == "store" and f["array"] == "dst" and f["index"] == 10, f
    assert f["line"].endswith(f":{_line_of(copy_unmasked_store, 'tl.store(dst + i, x)')}"), f


def test_a_far_address_is_reported_instead_of_crashing_the_process():
    @kit.jit
    def far(src, dst, n, B: tl.constexpr):
        i = tl.arange(0, B)
        tl.store(dst + i, tl.load(src + i + 1000000000), mask=i < n)

    out, found = _launch(far, n=4, B=4)
    (f,) = found
    assert f["class"] == "out-of-bounds" and f["array"] == "src" and f["index"] == 1000000000, f


def test_reading_output_the_kernel_has_not_written_is_an_uninitialized_read():
    out, found = _launch(reads_its_output)
    (f,) = found
    assert f["class"] == "uninitialized-read" and f["array"] == "dst" and f["index"] == 0, f


def test_a_store_into_an_input_is_reported_and_the_input_is_untouched():
    src = np.arange(8, dtype=np.uint8)
    out, found = _launch(writes_its_input, n=8, B=8, src=src)
    (f,) = found
    assert f["class"] == "write-to-input" and f["array"] == "src", f
    assert src.tolist() == list(range(8))


def test_a_plain_triton_jit_kernel_is_interpreted_and_checked_too():
    import triton

    def plain(src, dst, n, B: tl.constexpr):
        i = tl.arange(0, B)
        tl.store(dst + i, tl.load(src + i))

    plain.__module__ = __name__
    globals()["plain"] = plain          # triton.jit reads the source by the function's module
    k = triton.jit(plain)
    out, found = _launch(k, n=4, B=8)
    assert {f["access"] for f in found} == {"load", "store"} and all(f["class"] == "out-of-bounds" for f in found)


def test_tl_dot_rounds_float32_operands_to_tf32_unless_ieee_is_asked():
    rng = np.random.default_rng(0)
    a = (1 + rng.random((16, 16))).astype(np.float32)
    b = (1 + rng.random((16, 16))).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    got = {}
    for prec in ("default", "ieee"):
        c = np.zeros((16, 16), np.float32)
        kit.launch(dot16, (1,), a, b, kit.OUT, out=c, PREC=prec)
        got[prec] = np.abs(c - exact).max() / np.abs(exact).max()
    assert got["ieee"] < 1e-6, got            # float32 accumulation of exact products
    assert got["default"] > 1e-5, got         # 10-bit operands: errors of order 2**-11


# ----------------------------------------------------------------------------- issue 40: undefined lanes,
# runs of several launches, scratch, NumPy scalars, strided views

@kit.jit
def masked_sum(src, dst, n, B: tl.constexpr, OTHER: tl.constexpr):
    i = tl.arange(0, B)
    if OTHER:
        x = tl.load(src + i, mask=i < n, other=0)
    else:
        x = tl.load(src + i, mask=i < n)          # lanes n..B-1 undefined, then summed
    tl.store(dst, tl.sum(x))


@kit.jit
def masked_copy_no_other(src, dst, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    x = tl.load(src + i, mask=i < n)              # undefined lanes, never used: correct
    tl.store(dst + i, x + 1, mask=i < n)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int16])
def test_a_masked_load_without_other_feeding_a_sum_reads_poison_and_fails(dtype):
    src = np.arange(5, dtype=dtype)
    got = {}
    for other in (True, False):
        out = np.zeros(1, dtype)
        with findings.collect() as found:
            kit.launch(masked_sum, (1,), src, kit.OUT, 5, out=out, B=8, OTHER=other)
        assert found == []
        got[other] = out[0]
    assert got[True] == 10
    if np.dtype(dtype).kind == "f":
        assert np.isnan(got[False]), got
    else:     # three lanes of the bytes 0xA5 added: never the 10 of the interpreter's zeros
        pattern = np.frombuffer(b"\xa5" * np.dtype(dtype).itemsize, dtype)[0]
        assert got[False] == np.array([10, pattern, pattern, pattern], dtype).sum(dtype=dtype), got


def test_a_masked_load_without_other_whose_masked_lanes_are_unused_passes():
    out, found = _launch(masked_copy_no_other, n=10, B=4)
    assert found == []
    assert out.tolist() == list(range(1, 11))


def test_no_builtin_triton_kernel_sums_lanes_a_masked_load_left_undefined():
    """Every masked load of the built-in kernels either passes other= or its lanes are unused;
    the built-in cases above pass with the poison on.  This pins the first half (a new kernel
    with a bare masked load must be looked at, and its masked lanes shown unused)."""
    import ast
    from helpers import ROOT
    bare = []
    for path in sorted((ROOT / "backends" / "triton").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "load" \
                    and getattr(node.func.value, "id", "") == "tl":
                kw = {k.arg for k in node.keywords}
                if "mask" in kw and "other" not in kw:
                    bare.append(f"{path.name}:{node.lineno}")
    assert bare == [], bare


@triton_jit_plain
def helper_bare_load(p, m):
    return tl.load(p, m)                          # positional mask, no other: undefined lanes


@kit.jit
def sums_through_a_helper(src, dst, n, B: tl.constexpr):
    i = tl.arange(0, B)
    tl.store(dst, tl.sum(helper_bare_load(src + i, i < n)))


@kit.jit
def bare_load_then_past_the_end(src, dst, n, B: tl.constexpr):
    i = tl.arange(0, B)
    x = tl.load(src + i,
                mask=i < n,)                      # rewritten across lines, trailing comma kept
    tl.store(dst + i, x + tl.load(src + i))       # lanes n..B-1 read past src: out-of-bounds


#: a helper reached through an attribute: the rewrite does not follow it (the kernel's globals name
#: ``HELPERS``, not the helper)
HELPERS = __import__("types").SimpleNamespace(bare_load=helper_bare_load)


@kit.jit
def sums_through_an_attribute(src, dst, n, B: tl.constexpr):
    i = tl.arange(0, B)
    tl.store(dst, tl.sum(HELPERS.bare_load(src + i, i < n)))


def _no_checker_poison(monkeypatch):
    """The memory checker's own poisoning of loads without other= switched off: what remains is
    the kit's rewrite, the only poisoning the GPU gets."""
    from refconv.tooling.triton import memcheck
    monkeypatch.setattr(memcheck, "_poison_handle", lambda ti, ptrs: None)


def test_the_kit_rewrites_a_bare_masked_load_to_pass_a_poison_other_and_keeps_every_line():
    import inspect
    from refconv.tooling.triton import _rewrite
    fn = masked_sum.fn
    assert _rewrite.sites(fn) == [_line_of(masked_sum, "x = tl.load(src + i, mask=i < n) ")]
    new = _rewrite.poisoned(fn)
    old_lines, old_first = inspect.getsourcelines(fn)
    new_lines, new_first = inspect.getsourcelines(new)
    assert new_first == old_first + 1             # from the def line: the decorator is dropped
    assert len(new_lines) == len(old_lines) - 1
    changed = [(a, b) for a, b in zip(old_lines[1:], new_lines) if a != b]
    assert [b for _, b in changed] == [
        "        x = tl.load(src + i, mask=i < n, other=_refconv_poison_of(src + i))"
        "          # lanes n..B-1 undefined, then summed\n"], changed
    assert _rewrite.poisoned(copy_masked.fn) is copy_masked.fn      # nothing to rewrite: the kernel itself


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int16])
def test_the_rewrite_alone_poisons_undefined_lanes_as_the_checker_did(monkeypatch, dtype):
    _no_checker_poison(monkeypatch)
    src = np.arange(5, dtype=dtype)
    out = np.zeros(1, dtype)
    kit.launch(masked_sum, (1,), src, kit.OUT, 5, out=out, B=8, OTHER=False)
    if np.dtype(dtype).kind == "f":
        assert np.isnan(out[0]), out
    else:
        pattern = np.frombuffer(b"\xa5" * np.dtype(dtype).itemsize, dtype)[0]
        assert out[0] == np.array([10, pattern, pattern, pattern], dtype).sum(dtype=dtype), out


def test_a_jitted_helper_s_bare_masked_load_is_rewritten_in_the_kernel_that_calls_it(monkeypatch):
    _no_checker_poison(monkeypatch)
    out = np.zeros(1, np.float32)
    with findings.collect() as found:
        kit.launch(sums_through_a_helper, (1,), np.arange(5, dtype=np.float32), kit.OUT, 5, out=out, B=8)
    assert found == [] and np.isnan(out[0]), (found, out)
    assert helper_bare_load.fn.__code__.co_filename.endswith("test_triton_backend.py")   # the helper itself untouched


def test_a_bare_masked_load_the_rewrite_cannot_see_still_reads_poison_under_the_interpreter(monkeypatch):
    from refconv.tooling.triton import _rewrite
    assert _rewrite.poisoned(sums_through_an_attribute.fn) is sums_through_an_attribute.fn
    out = np.zeros(1, np.float32)
    kit.launch(sums_through_an_attribute, (1,), np.arange(5, dtype=np.float32), kit.OUT, 5, out=out, B=8)
    assert np.isnan(out[0]), out                  # the memory checker's poison
    _no_checker_poison(monkeypatch)
    kit.launch(sums_through_an_attribute, (1,), np.arange(5, dtype=np.float32), kit.OUT, 5, out=out, B=8)
    assert out[0] == 10, out                      # the plain interpreter's zeros: the GPU would pass it


def test_a_rewritten_kernel_s_findings_name_its_own_file_and_line():
    out = np.zeros(8, np.float32)
    with findings.collect() as found:
        kit.launch(bare_load_then_past_the_end, (1,), np.arange(5, dtype=np.float32), kit.OUT, 5, out=out, B=8)
    (f,) = found
    assert f["class"] == "out-of-bounds" and f["access"] == "load", f
    assert f["line"] == f"test_triton_backend.py:{_line_of(bare_load_then_past_the_end, 'x + tl.load(src + i)')}", f
    assert np.isnan(out[5:]).all() and out[:5].tolist() == [0, 2, 4, 6, 8]


def test_every_builtin_triton_kernel_runs_as_written():
    """No built-in kernel (nor a jitted function it calls) has a masked load without other=, so
    the rewrite hands each one back unchanged: its GPU compile is the kernel as written."""
    import importlib
    from refconv.tooling.triton import _rewrite
    kernels = []
    for name in ("_kernels", "_cuconv_kernels"):
        mod = importlib.import_module(f"refconv.backends.triton.{name}")
        kernels += [k for k in vars(mod).values() if isinstance(k, kit.LazyKernel)]
    assert len(kernels) >= 8, kernels
    assert [k.fn.__name__ for k in kernels if _rewrite.poisoned(k.fn) is not k.fn] == []


def test_the_gpu_compile_of_a_rewritten_bare_masked_load_loads_nan_or_0xa5_in_its_masked_lanes(tmp_path):
    """No GPU needed: Triton compiles for an sm_90 target here, and the kernel's TTIR shows the
    load's other operand (what the masked-off lanes read on the GPU)."""
    import os
    import subprocess
    import sys
    script = tmp_path / "compile.py"
    script.write_text(
        "import triton, triton.language as tl\n"
        "from triton.backends.compiler import GPUTarget\n"
        "from triton.runtime.jit import JITFunction\n"
        "from refconv.tooling.triton import _rewrite\n"
        "def masked_sum(src, dst, n, B: tl.constexpr):\n"
        "    i = tl.arange(0, B)\n"
        "    tl.store(dst, tl.sum(tl.load(src + i, mask=i < n)))\n"
        "k = _rewrite.twin(JITFunction(masked_sum))\n"
        "for dt in ('fp32', 'fp64', 'fp16', 'i32', 'u8', 'i64'):\n"
        "    src = triton.compiler.ASTSource(fn=k, constexprs={'B': 8},\n"
        "        signature={'src': '*' + dt, 'dst': '*' + dt, 'n': 'i32', 'B': 'constexpr'})\n"
        "    ttir = triton.compile(src, target=GPUTarget('cuda', 90, 32)).asm['ttir']\n"
        "    cst = {l.split(' = ')[0].strip(): l.split('dense<')[1].split('>')[0]\n"
        "           for l in ttir.splitlines() if 'arith.constant dense' in l}\n"
        "    load = next(l for l in ttir.splitlines() if 'tt.load' in l)\n"
        "    print(dt, cst[load.split(',')[-1].split(':')[0].strip()])\n")
    env = dict(os.environ, TRITON_INTERPRET="0", TRITON_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    got = dict(line.split() for line in r.stdout.splitlines())
    assert got == {"fp32": "0x7FC00000", "fp64": "0x7FF8000000000000", "fp16": "0x7E00",
                   "i32": "-1515870811", "u8": "-91", "i64": "-6510615555426900571"}, got


@kit.jit
def zero_rows(dst, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(dst + i, tl.zeros((B,), tl.float32), mask=i < n)


@kit.jit
def add_into(src, dst, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    tl.store(dst + i, tl.load(dst + i, mask=m, other=0) + tl.load(src + i, mask=m, other=0), mask=m)


def test_two_launches_on_out_chain_and_the_second_may_read_what_the_first_wrote():
    src = np.arange(10, dtype=np.float32)
    out = np.full(10, np.nan, np.float32)
    with findings.collect() as found:
        kit.launch(zero_rows, (3,), kit.OUT, 10, out=out, B=4)
        kit.launch(add_into, (3,), src, kit.OUT, 10, out=out, B=4)
        kit.launch(add_into, (3,), src, kit.OUT, 10, out=out, B=4)
    assert found == []
    assert out.tolist() == [2.0 * x for x in range(10)]


def test_launches_on_views_of_the_same_out_share_what_was_written():
    src = np.arange(12, dtype=np.float32)
    out = np.full((3, 4), np.nan, np.float32)
    with findings.collect() as found:
        kit.launch(zero_rows, (3,), kit.OUT, 12, out=out.reshape(-1), B=4)
        kit.launch(add_into, (3,), src, kit.OUT, 12, out=out.reshape(-1), B=4)
    assert found == []
    assert out.reshape(-1).tolist() == src.tolist()


def test_accumulating_into_out_no_launch_of_the_run_wrote_is_an_uninitialized_read():
    out = np.full(10, np.nan, np.float32)
    with findings.collect() as found:
        kit.launch(zero_rows, (1,), kit.OUT, 4, out=out, B=4)        # elements 0..3 only
        kit.launch(add_into, (3,), np.arange(10, dtype=np.float32), kit.OUT, 10, out=out, B=4)
    (f,) = found
    assert f["class"] == "uninitialized-read" and f["array"] == "dst" and f["index"] == 4, f
    fresh = np.full(10, np.nan, np.float32)          # a new run's buffer starts unwritten again
    with findings.collect() as found:
        kit.launch(add_into, (3,), np.arange(10, dtype=np.float32), kit.OUT, 10, out=fresh, B=4)
    assert [f["index"] for f in found] == [0], found


@kit.jit
def halves(src, work, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(work + i, tl.load(src + i, mask=i < n, other=0) * 0.5, mask=i < n)


@kit.jit
def total(work, dst, n, B: tl.constexpr):
    i = tl.arange(0, B)
    tl.store(dst, tl.sum(tl.load(work + i, mask=i < n, other=0)))


def test_a_scratch_buffer_is_written_by_one_launch_and_read_by_the_next_without_findings():
    src = np.arange(10, dtype=np.float32)
    out = np.full(1, np.nan, np.float32)
    work = kit.scratch(10 * 4, np.float32)
    with findings.collect() as found:
        kit.launch(halves, (3,), src, work, 10, B=4)
        kit.launch(total, (1,), work, kit.OUT, 10, out=out, B=16)
    assert found == []
    assert out[0] == 22.5
    assert work.numpy().tolist() == [x / 2 for x in range(10)]


def test_reading_scratch_no_launch_stored_is_an_uninitialized_read_and_its_poison_shows():
    out = np.zeros(1, np.float32)
    work = kit.scratch(12 * 4, np.float32)
    with findings.collect() as found:
        kit.launch(halves, (3,), np.arange(10, dtype=np.float32), work, 10, B=4)
        kit.launch(total, (1,), work, kit.OUT, 12, out=out, B=16)
    (f,) = found
    assert f["class"] == "uninitialized-read" and f["array"] == "work" and f["index"] == 10, f
    assert np.isnan(out[0])


def test_scratch_refuses_a_size_that_is_not_whole_elements():
    with pytest.raises(ValueError, match="multiple of the element size 4"):
        kit.scratch(10, np.float32)


@kit.jit
def add_scalar(src, dst, k, n, B: tl.constexpr):
    i = tl.arange(0, B)
    tl.store(dst + i, tl.load(src + i, mask=i < n, other=0) + k, mask=i < n)


@pytest.mark.parametrize("scalar", [np.float32(2.5), np.float64(2.5), np.int32(3), np.int64(3), np.uint8(3),
                                    np.int8(-3), np.uint64(3), np.bool_(True)], ids=lambda x: type(x).__name__)
def test_numpy_scalars_are_accepted_as_kernel_arguments(scalar):
    out = np.zeros(4, np.float32)
    with findings.collect() as found:
        kit.launch(add_scalar, (1,), np.arange(4, dtype=np.float32), kit.OUT, scalar, np.int32(4), out=out, B=4)
    assert found == []
    assert out.tolist() == [x + float(scalar) for x in range(4)]


@kit.jit
def row_sums_strided(m, smr, smc, y, R, C, B: tl.constexpr, USE: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, B)
    p = m + r * smr + c * smc if USE else m + r * C + c
    tl.store(y + r, tl.sum(tl.load(p, mask=c < C, other=0)))


def _views():
    base = np.arange(6 * 9, dtype=np.float32).reshape(6, 9)
    return {"pitch": base[:, :5], "step": base[:, ::2], "transposed": base.T[:7], "flipped": base[::-1, 3:8],
            "contiguous": np.ascontiguousarray(base[:, :5])}


@pytest.mark.parametrize("layout", sorted(_views()))
def test_a_strided_view_is_passed_as_it_lies_and_a_kernel_using_its_strides_passes(layout):
    v = _views()[layout]
    out = np.full(v.shape[0], np.nan, np.float32)
    with findings.collect() as found:
        kit.launch(row_sums_strided, (v.shape[0],), kit.strided(v), *kit.strides(v), kit.OUT, *v.shape, out=out,
                   B=16, USE=True)
    assert found == []
    assert out.tolist() == v.sum(axis=1).tolist()


@pytest.mark.parametrize("layout", ["pitch", "step"])
def test_a_kernel_assuming_contiguous_rows_reads_the_gaps_of_a_strided_view_out_of_bounds(layout):
    v = _views()[layout]
    out = np.full(v.shape[0], np.nan, np.float32)
    with findings.collect() as found:
        kit.launch(row_sums_strided, (v.shape[0],), kit.strided(v), *kit.strides(v), kit.OUT, *v.shape, out=out,
                   B=16, USE=False)
    assert found and found[0]["class"] == "out-of-bounds" and found[0]["array"] == "m", found
    assert "strided view" in found[0]["message"] and f"element strides {kit.strides(v)}" in found[0]["message"]
    assert np.isnan(out).any()      # and the gaps hold poison


@kit.jit
def row_sums_in_a_loop(src, dst, ROWS: tl.constexpr, B: tl.constexpr):
    r = tl.arange(0, B)
    for i in range(ROWS):                       # tl.sum and tl.zeros are jitted functions
        acc = tl.zeros((B,), dtype=tl.float32) + tl.load(src + i * B + r)
        tl.store(dst + i, tl.sum(acc, axis=0))


def test_an_interpreted_launch_patches_triton_language_once_per_jitted_function(monkeypatch):
    from triton.runtime import interpreter as ti
    calls = []
    real = ti._patch_lang
    monkeypatch.setattr(ti, "_patch_lang", lambda fn: calls.append(fn.__name__) or real(fn))
    src = np.arange(24, dtype=np.float32).reshape(6, 4)
    out = np.full(6, np.nan, np.float32)
    with findings.collect() as found:
        kit.launch(row_sums_in_a_loop, (2,), src, kit.OUT, out=out, ROWS=6, B=4)
    assert found == []
    assert out.tolist() == src.sum(axis=1).tolist()
    # the kernel, tl.zeros and tl.sum once each, not once per call in each of the two programs
    assert sorted(calls) == sorted(set(calls)) and len(calls) == 3, calls
    assert ti._patch_lang.__name__ == "<lambda>"     # the launch gave the module its own back


def test_available_gives_a_reason_without_triton(monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "triton" else real(name, *a))
    why = kit.available()
    assert why and "triton is not installed" in why


def test_gpu_mode_without_a_gpu_is_a_missing_target(monkeypatch):
    from refconv.variant import MissingTarget
    monkeypatch.setattr(kit, "_cuda_devices", lambda: 0)
    kit.configure({"triton": "gpu"})
    try:
        why = kit.available()
        assert isinstance(why, MissingTarget) and "no GPU" in why
    finally:
        kit.configure({"triton": "interpret"})


def test_an_unknown_mode_names_the_accepted_ones():
    with pytest.raises(ValueError, match="auto, gpu, interpret"):
        kit.configure({"triton": "cuda"})


# ----------------------------------------------------------------------------- the built-in variants

BUILTIN_CASES = {
    "filter2d/triton/u8_tiled": ("filter2d", {"dtype": "uint8", "c": 0, "h": 7, "w": 9, "kh": 3, "kw": 3},
                                 {"boundary": "valid", "accumulator": "int", "shift": 2, "cast": "saturate"},
                                 {"image": "random.1", "weights": "random.2"}, {"block_h": 4, "block_w": 4}),
    "filter2d/triton/u8f_tiled": ("filter2d", {"dtype": "uint8", "c": 0, "h": 6, "w": 9, "kh": 2, "kw": 3},
                                  {"boundary": "zero", "shift": 1, "rounding": "nearest-even", "cast": "wrap"},
                                  {"image": "random.1", "weights": "random.2"}, {"block_h": 8, "block_w": 16}),
    "filter2d/triton/f32_tiled": ("filter2d", {"dtype": "float32", "c": 2, "h": 7, "w": 9, "kh": 3, "kw": 2},
                                  {"boundary": "replicate", "flip": True},
                                  {"image": "random.1", "weights": "random.2"}, {"block_h": 4, "block_w": 8}),
    "sobel/triton/tiled": ("sobel", {"dtype": "uint8", "channels": 3, "h": 6, "w": 7},
                           {"magnitude": "l2", "rounding": "nearest-even"}, {"image": "random.1"},
                           {"block_h": 4, "block_w": 4}),
    "matvec/triton/row_block": ("matvec", {"dtype": "float64", "rows": 7, "cols": 9}, {},
                                {"m": "random.1", "v": "random.2"}, {"block_rows": 4, "block_cols": 4}),
    "kron/triton/single_launch": ("kron", {"dtype": "int32", "m": 2, "n": 3, "p": 2, "q": 3}, {},
                                  {"a": "random.1", "b": "random.2"}, {"block_r": 4, "block_c": 4}),
    "kron/triton/streamed": ("kron", {"dtype": "uint8", "m": 2, "n": 3, "p": 2, "q": 3}, {},
                             {"a": "random.1", "b": "random.2"}, {"block_r": 2, "block_c": 4, "rows_per_block": 3}),
    "conv2d/triton/direct": ("conv2d", {"dtype": "float64", "n": 1, "c": 1, "h": 5, "w": 6, "m": 2, "r": 3, "s": 3,
                                        "groups": 1, "bias": 1}, {"stride": 2, "padding": 1},
                             {"x": "random.1", "w": "random.2", "bias": "random.3"}, {"block_pixels": 32}),
    "conv2d/triton/implicit_gemm": ("conv2d", {"dtype": "float32", "n": 2, "c": 2, "h": 5, "w": 6, "m": 3, "r": 3,
                                               "s": 2, "groups": 1, "bias": 1}, {"padding": 1, "dilation": 2},
                                    {"x": "random.1", "w": "random.2", "bias": "random.3"}, {}),
    "conv2d/triton/cuconv_split": ("conv2d", {"dtype": "float32", "n": 2, "c": 5, "h": 5, "w": 6, "m": 3, "r": 3,
                                              "s": 2, "groups": 1, "bias": 1}, {"padding": 1, "stride": 2},
                                   {"x": "random.1", "w": "random.2", "bias": "random.3"},
                                   {"block_pixels": 16, "block_c": 4}),
    "conv2d/triton/cuconv_fused": ("conv2d", {"dtype": "float64", "n": 2, "c": 5, "h": 5, "w": 6, "m": 3, "r": 2,
                                              "s": 3, "groups": 1, "bias": 1}, {"padding": 1, "dilation": 2},
                                   {"x": "random.1", "w": "random.2", "bias": "random.3"},
                                   {"block_pixels": 16, "block_c": 4}),
}


@pytest.mark.parametrize("vid", sorted(BUILTIN_CASES))
def test_each_builtin_variant_passes_one_small_case_under_the_interpreter(vid):
    from refconv import Problem, registry
    from refconv.checking import check_example
    op, dims, options, fills, params = BUILTIN_CASES[vid]
    v = registry.get(vid)
    p = Problem(op, dims, options, fills)
    r = check_example(v, p, params)
    assert r.status == "pass", (r.status, r.message)


def test_cuconv_split_with_1x1_filters_writes_the_output_in_one_launch(monkeypatch):
    from refconv import Problem, registry
    from refconv.backends.triton import _cuconv_kernels
    from refconv.checking import check_example
    launched = []
    real = kit.launch
    monkeypatch.setattr(kit, "launch", lambda k, *a, **kw: launched.append(kit.kernel_name(k)) or real(k, *a, **kw))
    p = Problem("conv2d", {"dtype": "float32", "n": 2, "c": 3, "h": 4, "w": 5, "m": 2, "r": 1, "s": 1,
                           "groups": 1, "bias": 1}, {"stride": 2},
                {"x": "random.1", "w": "random.2", "bias": "random.3"})
    r = check_example(registry.get("conv2d/triton/cuconv_split"), p, {"block_pixels": 16, "block_c": 1})
    assert r.status == "pass", (r.status, r.message)
    assert launched == [kit.kernel_name(_cuconv_kernels.cuconv_scalar_prods)]


def test_cuconv_constraints_refuse_a_huge_partial_buffer_and_draws_past_the_interpreter_budget():
    from refconv import Problem, registry
    split, fused = registry.get("conv2d/triton/cuconv_split"), registry.get("conv2d/triton/cuconv_fused")
    params = {"block_pixels": 64, "block_c": 16, "num_warps": 4}
    big = Problem("conv2d", {"dtype": "float32", "n": 1, "c": 1, "h": 4096, "w": 4096, "m": 64, "r": 3, "s": 3,
                             "groups": 1, "bias": 0}, {"padding": 1}, {"x": "zero.1", "w": "zero.2"})
    assert "partial buffer" in split.constraint(big, params)
    costly = Problem("conv2d", {"dtype": "float32", "n": 1, "c": 64, "h": 16, "w": 16, "m": 8, "r": 3, "s": 3,
                                "groups": 1, "bias": 0}, {}, {"x": "zero.1", "w": "zero.2"})
    small = Problem("conv2d", {"dtype": "float32", "n": 1, "c": 3, "h": 6, "w": 6, "m": 2, "r": 3, "s": 3,
                               "groups": 1, "bias": 0}, {}, {"x": "zero.1", "w": "zero.2"})
    for v in (split, fused):
        assert "interpreter" in v.constraint(costly, params), v.id
        assert v.constraint(small, params) is None, v.id


def test_the_cuconv_variants_are_twins_of_the_numba_cuda_and_opencl_ones_in_the_bench_report():
    from refconv import registry
    from refconv.bench import Row
    from refconv.bench.report import twins
    names = {v.name for v in registry.variants(op="conv2d", backend="triton")}
    assert {"cuconv_split", "cuconv_fused"} <= names
    rows = [Row.of_variant(v, "ok", median_s=t) for v, t in
            [("conv2d/numba_cuda/cuconv_split", 4.0), ("conv2d/opencl/cuconv_split", 2.0),
             ("conv2d/triton/cuconv_split", 1.0), ("conv2d/triton/direct", 1.0),
             ("matvec/opencl/same_name", 1.0), ("kron/triton/same_name", 2.0)]]
    assert twins(rows) == [{"name": "cuconv_split", "times": {"numba_cuda": 4.0, "opencl": 2.0, "triton": 1.0},
                            "ratio": 4.0}]


# ----------------------------------------------------------------------------- the hazard kernels

@pytest.fixture(scope="module")
def hazard_runs():
    """One seeded ci run (no shrinking) of every hazard of tests/meta/hazard_impls_triton.py and of
    every fixed twin, in this process, the interpreter selected."""
    import sys
    from helpers import ROOT
    sys.path.insert(0, str(ROOT / "tests" / "meta"))
    from hazard_impls_triton import FIXED, HAZARDS
    from refconv.runner import check_variant
    kit.configure({"triton": "interpret"})
    run = lambda v: check_variant(v, "ci", seed=0, db="none", failures_dir=None, shrink=False)  # noqa: E731
    return {name: run(v) for name, v in HAZARDS.items()}, {name: run(v) for name, v in FIXED.items()}


HAZARD_NAMES = ("triton_unmasked_load", "triton_unmasked_store", "triton_plain_cast", "triton_drops_last_block",
                "triton_tf32_dot", "triton_masked_no_other", "triton_strided_as_contiguous",
                "triton_accumulates_unzeroed", "triton_scratch_short")

#: the hazards of issue 40 (seeds 0..7 each: a wrong kernel fails quickly) and what catches them
ISSUE40 = {"triton_masked_no_other": None, "triton_strided_as_contiguous": None,
           "triton_accumulates_unzeroed": "uninitialized-read", "triton_scratch_short": "uninitialized-read"}


@pytest.mark.parametrize("name", HAZARD_NAMES)
def test_each_hazard_kernel_fails_a_ci_run_and_its_fixed_twin_passes(hazard_runs, name):
    bad, good = hazard_runs
    assert bad[name].status == "fail", (bad[name].status, bad[name].reason)
    assert good[name].status == "pass", (good[name].status, good[name].reason)


@pytest.mark.parametrize("name, access, array", [("triton_unmasked_load", "load", "img"),
                                                  ("triton_unmasked_store", "store", "out")])
def test_the_hazard_mask_mistakes_are_named_out_of_bounds(hazard_runs, name, access, array):
    r = hazard_runs[0][name]
    oob = [f for f in r.findings if f["class"] == "out-of-bounds"]
    assert oob and oob[0]["access"] == access and oob[0]["array"] == array, r.findings
    assert oob[0]["kernel"] == "tile_filter" and "hazard_impls_triton.py:" in oob[0]["line"], oob[0]


@pytest.mark.parametrize("name", ["triton_plain_cast", "triton_drops_last_block", "triton_tf32_dot",
                                  "triton_masked_no_other"])
def test_the_hazard_arithmetic_mistakes_fail_on_values_without_a_finding(hazard_runs, name):
    r = hazard_runs[0][name]
    assert not r.findings and "not accepted" in r.reason, (r.findings, r.reason)


@pytest.mark.parametrize("name", sorted(ISSUE40))
def test_each_issue40_hazard_fails_every_seed_of_a_ci_run(name, monkeypatch):
    if name == "triton_masked_no_other":    # by the kit's rewrite alone, as on the GPU
        _no_checker_poison(monkeypatch)
    import sys
    from helpers import ROOT
    sys.path.insert(0, str(ROOT / "tests" / "meta"))
    from hazard_impls_triton import HAZARDS
    from refconv.runner import check_variant
    for seed in range(8):
        r = check_variant(HAZARDS[name], "ci", seed=seed, db="none", failures_dir=None, shrink=False)
        assert r.status == "fail", (seed, r.status, r.reason)
        if ISSUE40[name]:
            assert ISSUE40[name] in {f["class"] for f in r.findings}, (seed, r.findings)


def test_the_strided_hazard_fails_on_strided_inputs_and_the_failure_replays_from_its_descriptor(hazard_runs):
    import sys
    from helpers import ROOT
    from refconv import Problem
    from refconv.checking import check_example
    sys.path.insert(0, str(ROOT / "tests" / "meta"))
    from hazard_impls_triton import FIXED, HAZARDS
    r = hazard_runs[0]["triton_strided_as_contiguous"]
    p = Problem.parse(r.failure["descriptor"])
    assert p.layouts and any(not a.flags.c_contiguous for a in p.inputs.values()), r.failure["descriptor"]
    name = "triton_strided_as_contiguous"
    assert check_example(HAZARDS[name], p, r.failure["params"]).status == "fail"
    assert check_example(FIXED[name], p, r.failure["params"]).status == "pass"


# ----------------------------------------------------------------------------- a third-party plugin

#: a Triton plugin written against the public kit only (refconv.triton): one correct kernel (a plain @triton.jit, as people write them) and the five
#: mistakes of issue 25; a strided-input kernel (issue 40) and its twin whose masked load has no other=.
PLUGIN = '''
import numpy as np
import triton
import triton.language as tl
from refconv import Backend, Range, Variant
from refconv import triton as kit
from refconv.triton import backend_fields

B = 4          # tile edge / block of the kernels below


@triton.jit
def matvec_ok(m, v, y, R, C, B: tl.constexpr, DROP_LAST: tl.constexpr):
    rows = tl.program_id(0) * B + tl.arange(0, B)
    acc = tl.zeros((B,), dtype=tl.float32)
    stop = C - C % B if DROP_LAST else C            # the bug: the last partial block dropped
    for c0 in range(0, stop, B):
        cols = c0 + tl.arange(0, B)
        a = tl.load(m + rows[:, None] * C + cols[None, :], mask=(rows[:, None] < R) & (cols[None, :] < C), other=0)
        acc += tl.sum(a * tl.load(v + cols, mask=cols < C, other=0)[None, :], axis=1)
    tl.store(y + rows, acc, mask=rows < R)


@kit.jit
def matvec_dot(m, v, y, R, C, B: tl.constexpr):
    # 16 rows per program; v broadcast over 16 columns so that tl.dot applies (default precision)
    rows = tl.program_id(0) * 16 + tl.arange(0, 16)
    j = tl.arange(0, 16)
    acc = tl.zeros((16, 16), dtype=tl.float32)
    for c0 in range(0, C, 16):
        cols = c0 + tl.arange(0, 16)
        a = tl.load(m + rows[:, None] * C + cols[None, :], mask=(rows[:, None] < R) & (cols[None, :] < C), other=0)
        x = tl.load(v + cols, mask=cols < C, other=0)
        acc = tl.dot(a, x[:, None] + tl.zeros((16, 16), dtype=tl.float32), acc)
    tl.store(y + rows, tl.sum(tl.where(j[None, :] == 0, acc, 0.0), axis=1), mask=rows < R)


@kit.jit
def box3(img, out, H, W, Ho, Wo, B: tl.constexpr, MASK_LOADS: tl.constexpr, MASK_STORE: tl.constexpr,
         PLAIN_CAST: tl.constexpr):
    # valid 3x3 correlation of a uint8 (or float32) image, B x B outputs per program
    ys = tl.program_id(1) * B + tl.arange(0, B)
    xs = tl.program_id(0) * B + tl.arange(0, B)
    m = (ys[:, None] < Ho) & (xs[None, :] < Wo)
    acc = tl.zeros((B, B), dtype=tl.float32)
    for i in range(3):
        for j in range(3):
            p = img + (ys[:, None] + i) * W + xs[None, :] + j
            if MASK_LOADS:
                x = tl.load(p, mask=m, other=0)
            else:
                x = tl.load(p)
            acc = acc + x.to(tl.float32)
    if PLAIN_CAST:
        r = acc.to(tl.uint8)                           # the bug: no saturation before the cast
    elif out.dtype.element_ty == tl.uint8:
        r = tl.minimum(tl.maximum(acc, 0.0), 255.0).to(tl.uint8)
    else:
        r = acc
    if MASK_STORE:
        tl.store(out + ys[:, None] * Wo + xs[None, :], r, mask=m)
    else:
        tl.store(out + ys[:, None] * Wo + xs[None, :], r)


def _box(name, dtype, **flags):
    def run(problem, out):
        img = np.ascontiguousarray(problem.inputs["image"])
        H, W = img.shape
        Ho, Wo = H - 2, W - 2
        return kit.launch(box3, (kit.cdiv(Wo, B), kit.cdiv(Ho, B)), img, kit.OUT, H, W, Ho, Wo, out=out,
                          what=f"filter2d/tribug/{name}", B=B, **flags)
    sup = {"dtype": (dtype,), "c": (0,), "kh": (3,), "kw": (3,), "boundary": ("valid",), "flip": (False,),
           "fill.weights": ("one",), "h": Range(3), "w": Range(3), "out_dtype": (None,)}
    if dtype == "uint8":
        sup.update(accumulator=("float32",), shift=(0,), rounding=("trunc",), cast=("saturate",))
    return Variant(op="filter2d", backend="tribug", name=name, run=run, supports=sup, available=kit.available,
                   doc="3x3 box sum, valid boundary")


def _matvec(name, kernel, **flags):
    def run(problem, out):
        m, v = (np.ascontiguousarray(problem.inputs[k]) for k in "mv")
        R, C = m.shape
        blk = 16 if kernel is matvec_dot else B
        return kit.launch(kernel, (kit.cdiv(R, blk),), m, v, kit.OUT, R, C, out=out,
                          what=f"matvec/tribug/{name}", B=B, **flags)
    return Variant(op="matvec", backend="tribug", name=name, run=run, available=kit.available,
                   supports={"dtype": ("float32",), "rows": Range(1), "cols": Range(1)},
                   doc="row-block reduction")


@triton.jit
def matvec_strided(m, smr, smc, v, sv, y, R, C, B: tl.constexpr, OTHER: tl.constexpr):
    # m and v as they lie in memory (kit.strided), addressed through their strides
    rows = tl.program_id(0) * B + tl.arange(0, B)
    acc = tl.zeros((B,), dtype=tl.float32)
    for c0 in range(0, C, B):
        cols = c0 + tl.arange(0, B)
        mk = (rows[:, None] < R) & (cols[None, :] < C)
        if OTHER:
            a = tl.load(m + rows[:, None] * smr + cols[None, :] * smc, mask=mk, other=0)
        else:
            a = tl.load(m + rows[:, None] * smr + cols[None, :] * smc, mask=mk)    # the bug: no other=
        acc += tl.sum(a * tl.load(v + cols * sv, mask=cols < C, other=0)[None, :], axis=1)
    tl.store(y + rows, acc, mask=rows < R)


def _strided(name, other):
    def run(problem, out):
        m, v = problem.inputs["m"], problem.inputs["v"]
        return kit.launch(matvec_strided, (kit.cdiv(m.shape[0], B),), kit.strided(m), *kit.strides(m),
                          kit.strided(v), *kit.strides(v), kit.OUT, *m.shape, out=out,
                          what=f"matvec/tribug/{name}", B=B, OTHER=other)
    return Variant(op="matvec", backend="tribug", name=name, run=run, available=kit.available,
                   supports={"dtype": ("float32",), "rows": Range(1, 32), "cols": Range(1, 32)},
                   layouts=("contiguous", "strided"), doc="row-block reduction on strided inputs")


def _variants():
    ok = dict(MASK_LOADS=True, MASK_STORE=True, PLAIN_CAST=False)
    return [
        _strided("strided_ok", True),
        _strided("strided_no_other", False),
        _matvec("matvec_ok", matvec_ok, DROP_LAST=False),
        _matvec("drops_last_block", matvec_ok, DROP_LAST=True),
        _matvec("tf32_dot", matvec_dot),
        _box("box_ok", "float32", **ok),
        _box("unmasked_load", "float32", **dict(ok, MASK_LOADS=False)),
        _box("unmasked_store", "float32", **dict(ok, MASK_STORE=False)),
        _box("plain_cast", "uint8", **dict(ok, PLAIN_CAST=True)),
    ]


backend = Backend(name="tribug", variants=_variants, **backend_fields())
'''


@pytest.fixture(scope="module")
def tribug(tmp_path_factory):
    env = plugin_env(tmp_path_factory.mktemp("tribug_site"), {"tribug": PLUGIN})
    env["REFCONV_TRITON"] = "interpret"
    work = tmp_path_factory.mktemp("tribug_run")
    p = refconv_cli("check", "--backend", "tribug", "--seed", "1", "--jobs", "2", "--quiet", "--no-save",
                    "--json", "r.json", env=env, cwd=work, timeout=600)
    report = json.loads((work / "r.json").read_text())
    from refconv.variant_id import VariantId
    return p, {VariantId.parse(r["variant"]).name: r for r in report["results"]}


@pytest.mark.slow
def test_the_plugins_correct_kernels_pass(tribug):
    p, res = tribug
    for name in ("matvec_ok", "box_ok", "strided_ok"):
        assert res[name]["status"] == "pass", (name, res[name], p.stdout + p.stderr)


@pytest.mark.slow
def test_the_plugins_strided_kernel_with_a_masked_load_without_other_fails_on_its_poisoned_lanes(tribug):
    p, res = tribug
    r = res["strided_no_other"]
    assert r["status"] == "fail" and "got nan" in r["reason"], r


@pytest.mark.slow
@pytest.mark.parametrize("name, access, array", [("unmasked_load", "load", "img"),
                                                  ("unmasked_store", "store", "out")])
def test_the_plugins_unmasked_accesses_are_named_out_of_bounds(tribug, name, access, array):
    p, res = tribug
    r = res[name]
    assert r["status"] == "fail", r
    oob = [f for f in r["findings"] if f["class"] == "out-of-bounds"]
    assert oob and oob[0]["access"] == access and oob[0]["array"] == array and oob[0]["kernel"] == "box3", r
    assert "rcplug_tribug.py:" in oob[0]["line"], oob[0]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["plain_cast", "drops_last_block", "tf32_dot"])
def test_the_plugins_wrong_arithmetic_fails_the_check(tribug, name):
    p, res = tribug
    r = res[name]
    assert r["status"] == "fail" and not r.get("findings"), r
    assert "not accepted" in r["reason"], r
