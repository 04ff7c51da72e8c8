"""The shipped kernels' generated source, readable without running anything: ``docs/kernels/`` holds
what the filter2d and sobel best generators emit for their presets' builds (numba-cuda: the Python
source that ``cuda.jit`` compiles; OpenCL: the program text and each build's options), and this test
regenerates it and compares.  It also holds the generators to one build description a kernel: no function in
``backends/`` takes more than 8 parameters.

Regenerate ``docs/kernels/`` after a deliberate change to a generator:
``.venv/bin/python tests/test_kernel_sources.py``."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "docs" / "kernels"
PRESET = "filter2d-u8-3x3-3072"
SOBEL_PRESET = "sobel-4096x3072"
#: the ops whose best kernels docs/kernels/ holds (a file there is named after its op)
OPS = ("filter2d", "sobel")
REGENERATE = ".venv/bin/python tests/test_kernel_sources.py"


def shipped_sources() -> dict:
    """``{file name: text}`` of docs/kernels/: each shipped filter2d and sobel best design specialised
    for its preset problem (the build a GPU runs for it)."""
    from refconv.backends.numba_cuda import filter2d_best as nb
    from refconv.backends.opencl import filter2d_best as ob
    from refconv.bench import presets
    problem = presets.PRESETS[PRESET].problem()
    out = {}
    for design in nb.SHIPPED:
        build, _ = nb.specialise(design, problem)
        out[f"filter2d_numba_cuda_best_R{design.rows}.py"] = (
            f"# filter2d/numba_cuda/best_R{design.rows} on the {PRESET} preset: refconv.backends.numba_cuda."
            f"filter2d_best.source({build!r}), as cuda.jit compiles it on a GPU.  Generated: {REGENERATE}\n"
            + nb.source(build))
    out["filter2d_opencl_best.cl"] = ob.SRC
    for design in ob.SHIPPED:
        build = ob.specialise(design, problem)
        out[f"filter2d_opencl_best_R{design.rows}.options"] = (
            f"# filter2d/opencl/best_R{design.rows} on the {PRESET} preset: the build options of "
            f"filter2d_opencl_best.cl for {build!r} on NVIDIA's OpenCL (elsewhere without -DUSE_PTX).  "
            f"Generated: {REGENERATE}\n" + "\n".join(ob.options(build, True)) + "\n")
    out.update(_sobel_sources())
    return out


def _sobel_sources() -> dict:
    from refconv.backends.numba_cuda import sobel_best as nb
    from refconv.backends.opencl import sobel_best as ob
    from refconv.bench import presets
    problem = presets.PRESETS[SOBEL_PRESET].problem()
    out = {}
    for design in nb.SHIPPED:
        build = nb.specialise(design, problem)
        out[f"sobel_numba_cuda_best_R{design.rows}.py"] = (
            f"# sobel/numba_cuda/best_R{design.rows} on the {SOBEL_PRESET} preset: refconv.backends.numba_cuda."
            f"sobel_best.source({build!r}), as cuda.jit compiles it on a GPU.  Generated: {REGENERATE}\n"
            + nb.source(build))
    out["sobel_opencl_best.cl"] = ob.SRC
    for design in ob.SHIPPED:
        build = ob.specialise(design, problem)
        out[f"sobel_opencl_best_R{design.rows}.options"] = (
            f"# sobel/opencl/best_R{design.rows} on the {SOBEL_PRESET} preset: the build options of "
            f"sobel_opencl_best.cl for {build!r} on NVIDIA's OpenCL (elsewhere without -DUSE_PTX).  "
            f"Generated: {REGENERATE}\n" + "\n".join(ob.options(build, True)) + "\n")
    return out


def test_docs_kernels_hold_the_generated_source_of_every_shipped_build():
    want = shipped_sources()
    stale = sorted(n for n, text in want.items()
                   if not (KERNELS / n).is_file() or (KERNELS / n).read_text() != text)
    extra = sorted(p.name for op in OPS for p in KERNELS.glob(f"{op}_*") if p.name not in want)
    assert not stale and not extra, (
        f"docs/kernels/ does not match the generators: out of date {stale}, not generated {extra}; "
        f"if the change is deliberate, regenerate with `{REGENERATE}` and commit docs/kernels/")


def _is_kernel(node) -> bool:
    """Whether a function is a compiled kernel (``@cuda.jit``, ``@numba.njit``, Triton's ``@jit``): its
    parameters are the kernel's arguments, scalars and arrays a launch passes one by one."""
    for d in getattr(node, "decorator_list", ()):
        f = d.func if isinstance(d, ast.Call) else d
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        if name in ("jit", "njit"):
            return True
    return False


def functions_over(source: str, limit: int = 8) -> list:
    """``(line, name, count)`` of every host function (kernels aside) in Python ``source`` taking more
    than ``limit`` parameters."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and not _is_kernel(node):
            a = node.args
            n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
            if n > limit:
                found.append((node.lineno, getattr(node, "name", "lambda"), n))
    return found


def test_no_host_function_in_backends_takes_more_than_8_parameters():
    """A kernel generator takes one build description, not a parameter a knob; compiled kernels
    (whose parameters are their launch arguments) aside."""
    over = [f"{p.relative_to(ROOT)}:{line} {name} ({n})" for p in sorted((ROOT / "backends").rglob("*.py"))
            for line, name, n in functions_over(p.read_text())]
    assert over == [], over


def test_the_parameter_count_sees_a_long_signature_and_spares_kernels():
    src = ("def host(a, b, c, d, e, f, g, h, *, i):\n    pass\n"
           "@cuda.jit\ndef kern(a, b, c, d, e, f, g, h, i):\n    pass\n"
           "@numba.njit(cache=False)\ndef cpu(a, b, c, d, e, f, g, h, i):\n    pass\n")
    assert functions_over(src) == [(1, "host", 9)]


if __name__ == "__main__":
    KERNELS.mkdir(parents=True, exist_ok=True)
    for name, text in shipped_sources().items():
        (KERNELS / name).write_text(text)
        print(f"wrote {KERNELS / name} ({text.count(chr(10))} lines)", file=sys.stderr)
