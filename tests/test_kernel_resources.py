"""Every launch a numba_cuda variant can draw fits the device, proven on the host without
compiling: the compile check's workers trace every combination of every variant's launch
parameters, for every dtype (``REFCONV_COMPILE_PARAMS=all``), and compute each kernel's static
shared memory from its source (``host_smem``).  Each launch must fit a GPU's limits (48 KiB of
shared memory without opt-in, 1024 threads, 64K registers a block where the kernel declares
``max_registers``), and what the variant's ``constraint`` declared must cover it.  A sample is
compiled to hold the host's figure to the compiler's (the PTX's static shared declarations)."""
from __future__ import annotations

import dataclasses
import importlib
import functools
from collections import defaultdict

import pytest

pytest.importorskip("numba_cuda")

from refconv import Param, Problem, registry  # noqa: E402
cc = importlib.import_module("refconv.tooling.cuda.compile_check")  # the package (refconv.cuda.compile_check is a function)

MAX_SHARED, MAX_THREADS, MAX_REGS = 49152, 1024, 65536


def _cuda_variants():
    return [v for v in registry.variants() if v.backend == "numba_cuda"]


@pytest.fixture(scope="module")
def traced():
    records, findings = cc.trace(_cuda_variants(), {"compile_params": "all"})
    return records, findings


def _threads(rec) -> int:
    n = 1
    for d in rec["blockdim"]:
        n *= d
    return n


def test_every_parameter_combination_of_every_variant_is_traced(traced):
    records, findings = traced
    assert {vid: fs for vid, fs in findings.items() if fs} == {}
    by_variant = defaultdict(set)
    for r in records:
        by_variant[r["variant"]].add(repr(sorted(r["specialisation"]["params"].items())))
    for v in _cuda_variants():
        drawn = {repr(sorted(p.items())) for p, _ in cc.specialisations(v, "all")}
        assert by_variant[v.id] == drawn, v.id


def test_every_drawable_launch_fits_the_device_without_compiling(traced):
    records, _ = traced
    bad = []
    for r in records:
        if r["blockdim"] is None:                   # an eager cuda.jit("sig"): launched elsewhere
            continue
        if not isinstance(r["host_smem"], int):
            bad.append((r["variant"], r["kernel"], f"shared memory not computable: {r['host_smem']}"))
            continue
        t, smem = _threads(r), r["host_smem"] + r["sharedmem"]
        if t > MAX_THREADS or smem > MAX_SHARED or (r["max_registers"] or 0) * t > MAX_REGS:
            bad.append((r["variant"], r["kernel"], r["specialisation"], t, smem, r["max_registers"]))
    assert bad == []


def test_each_variants_constraint_declares_what_its_launches_use(traced, monkeypatch):
    """The shared memory a constraint hands ``refconv.cuda.fits`` covers each launch's need, and
    each launch's block is a block it declared: a constraint that under-declares would draw a
    launch the GPU refuses."""
    from refconv.tooling.cuda import _common
    declared: list = []
    real = _common.fits

    def spy(problem, **kw):
        declared.append(kw)
        return real(problem, **kw)

    monkeypatch.setattr(_common, "fits", spy)
    variants = {v.id: v for v in _cuda_variants()}
    records, _ = traced
    groups = defaultdict(list)
    for r in records:
        if r["blockdim"] is not None:
            groups[(r["variant"], repr(r["specialisation"]))].append(r)
    bad = []
    for (vid, _), rs in groups.items():
        spec = rs[0]["specialisation"]
        declared.clear()
        assert variants[vid].constraint(Problem.parse(spec["problem"]), spec["params"]) is None
        if not declared:
            bad.append((vid, spec, "the constraint declares nothing to refconv.cuda.fits"))
            continue
        shared = max(d.get("shared", 0) for d in declared)
        threads = {d["threads"] for d in declared}
        for r in rs:
            if r["host_smem"] + r["sharedmem"] > shared or _threads(r) not in threads:
                bad.append((vid, f"{r['kernel']} {spec['params']}: needs {r['host_smem'] + r['sharedmem']} B shared, "
                                 f"{_threads(r)} threads; declared {shared} B, threads {sorted(threads)}"))
    assert dict(bad) == {}


def test_conv2d_best_tiles_declare_the_kernels_shared_memory():
    """The GEMM tile's shared memory is one formula for both twins; every tile and dtype either
    fits 48 KiB or is refused by the constraint on a 48 KiB device."""
    from refconv.backends import conv2d_gemm as G
    v = registry.get("conv2d/numba_cuda/best")
    p = Problem("conv2d", {"dtype": "float64", "n": 1, "c": 8, "h": 6, "w": 6, "m": 8, "r": 3, "s": 3,
                           "groups": 1, "bias": 0}, {})
    for t in G.TILES.values():
        for isz, dtype in ((4, "float32"), (8, "float64")):
            q = Problem("conv2d", {**p.dims, "dtype": dtype}, {})
            refused = v.constraint(q, {"tile": t.name, "split": 1, "path": "gather", "reduce": "auto"})
            assert (t.shared_bytes(isz) <= MAX_SHARED) == (refused is None or "shared" not in refused), (t.name, dtype)
    assert G.TILES["64x32k32"].shared_bytes(8) == MAX_SHARED       # the tile: exactly 48 KiB


def _only(v, dtype=None, **values):
    """``v`` with each named launch parameter (and ``dtype``) narrowed to one value (the sweep
    then compiles that)."""
    params = tuple(Param(p.name, (values[p.name],), values[p.name]) if p.name in values else p for p in v.params)
    supports = {**v.supports, "dtype": (dtype,)} if dtype else v.supports
    return dataclasses.replace(v, params=params, supports=supports)


@pytest.fixture(scope="module")
def compiled_sample():
    """A few shared-memory kernels compiled for sm_90: the issue's conv2d tile (float64, 48 KiB),
    a reduction's buffer, a tile with halo."""
    best = registry.get("conv2d/numba_cuda/best")
    sample = [_only(best, "float64", tile="64x32k32", split=8, path="gather", reduce="fused"),
              _only(best, "float32", tile="16x16", split=2, path="auto", reduce="kernel"),
              _only(registry.get("matvec/numba_cuda/block_per_row"), threads=512),
              _only(registry.get("sobel/numba_cuda/smem_if"), bx=16, by=8),
              _only(registry.get("filter2d/numba_cuda/tiled_halo"), o_tile=8)]
    return cc.preflight(sample, {"compile_params": "all", "cc": "sm_90"})


def test_the_host_shared_memory_is_the_compilers(compiled_sample):
    infos = [f for fs in compiled_sample.values() for f in fs if f["class"] == "compile-info"]
    errors = [f for fs in compiled_sample.values() for f in fs if f["class"] != "compile-info"]
    assert errors == []
    assert {f["variant"] for f in infos} == set(compiled_sample)
    assert any(f["host_smem"] == MAX_SHARED for f in infos)          # the float64 64x32k32 tile compiled
    for f in infos:
        assert f["host_smem"] == f["smem_ptx"], (f["variant"], f["kernel"], f["specialisation"])
        if "smem" in f and f["smem_ptx"]:
            assert f["smem"] >= f["smem_ptx"]                         # the assembler adds the driver's reserve


# ----------------------------------------------------------------------------- OpenCL

_CL_SIZES = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "half": 2, "int": 4, "uint": 4, "float": 4,
             "long": 8, "ulong": 8, "double": 8}


def _macros(options) -> dict:
    out = {}
    for o in options:
        if o.startswith("-D"):
            name, _, val = o[2:].partition("=")
            out[name] = val or "1"
    return out


def _kernel_body(source: str, name: str) -> str:
    import re
    m = re.search(r"__kernel\b[^;{]*?\b" + re.escape(name) + r"\s*\(", source)
    assert m, name
    i = source.index("{", m.end())
    depth = 0
    for j in range(i, len(source)):
        depth += {"{": 1, "}": -1}.get(source[j], 0)
        if depth == 0:
            return source[i:j + 1]
    raise AssertionError(f"unbalanced braces in {name}")


@functools.lru_cache(maxsize=None)
def static_local_bytes(source: str, name: str, options: tuple) -> int:
    """The ``__local`` arrays declared in kernel ``name``'s body, sized with the build's ``-D`` values."""
    import re
    mac = _macros(options)
    total = 0
    for ty, dims in re.findall(r"__local\s+(\w+)\s+\w+((?:\s*\[[^\]]+\])+)\s*;", _kernel_body(source, name)):
        ty = mac.get(ty, ty)
        n = 1
        for d in re.findall(r"\[([^\]]+)\]", dims):
            expr = re.sub(r"\b[A-Za-z_]\w*\b", lambda w: mac.get(w.group(0), w.group(0)), d).replace("/", "//")
            n *= int(eval(expr, {}))
        total += n * _CL_SIZES[ty]
    return total


class _FakeKernel:
    def __init__(self, source, name, options):
        self.source, self.function_name, self.options = source, name, tuple(options)


@pytest.fixture
def opencl_on_a_48k_device(monkeypatch):
    """refconv.opencl with nothing built or run: kernels are their source, name and options, every
    launch is recorded (work-group, local memory arguments), the device is a GPU's (1024 work-items,
    48 KiB of local memory); ``declared`` gets each ``check_local`` call of a constraint."""
    import contextlib
    import types

    import numpy as np
    pytest.importorskip("pyopencl")
    import pyopencl as cl

    from refconv import opencl as oc
    from refconv.tooling import opencl as kit
    launches, declared = [], []
    dev = types.SimpleNamespace(max_compute_units=132, image_support=True, local_mem_size=MAX_SHARED,
                                max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64))
    env = types.SimpleNamespace(queue=None, ctx=None, device=dev, target="nvidia")

    def record(k, lsize, args):
        launches.append({"kernel": k, "local": tuple(lsize or (1,)),
                         "dynamic": sum(a.size for a in args if isinstance(a, cl.LocalMemory))})

    def launch(k, gsize, lsize, *args, out=None, what=None):
        record(k, lsize, args)
        return out

    def check_local(local, local_bytes=0, kernel=None):
        declared.append({"local": tuple(local), "bytes": local_bytes})
        if int(np.prod(local)) > dev.max_work_group_size:
            return f"work-group {local} > {dev.max_work_group_size}"
        if local_bytes > dev.local_mem_size:
            return f"{local_bytes} bytes of local memory > {dev.local_mem_size}"
        return None

    fakes = {"kernel": lambda source, name, options=(), sname="<source>": _FakeKernel(source, name, options),
             "launch": launch, "timed": lambda k: (lambda q, g, l, *a: record(k, l, a)),
             "to_device": lambda a: object(), "scratch": lambda n: object(),
             "output": lambda out: contextlib.nullcontext(object()), "env": lambda: env, "device": lambda: dev,
             "target": lambda: "nvidia", "has_subgroups": lambda: True, "require_fp64": lambda: None,
             "diagnosed": lambda *a, **k: contextlib.nullcontext(), "check_local": check_local,
             "fits_memory": lambda problem, nbytes: None}
    for name, f in fakes.items():
        for mod in (oc, kit):              # backends import the facade or the kit itself
            monkeypatch.setattr(mod, name, f)
    monkeypatch.setattr(cl, "enqueue_copy", lambda *a, **k: types.SimpleNamespace(wait=lambda: None))
    monkeypatch.setattr(cl, "enqueue_fill_buffer", lambda *a, **k: types.SimpleNamespace(wait=lambda: None))
    monkeypatch.setattr(cl, "create_image", lambda *a, **k: object())
    return launches, declared


def test_every_drawable_opencl_launch_fits_a_48k_device_without_building(opencl_on_a_48k_device):
    """Every combination of every OpenCL variant's launch parameters, every dtype, that its
    constraint accepts on a device of 1024 work-items and 48 KiB of local memory (an NVIDIA GPU's):
    each launch's work-group and local memory (its ``__local`` arrays, sized from the source and
    the build's ``-D`` values, plus its ``LocalMemory`` arguments) fit, and are what the
    constraint declared."""
    import numpy as np

    from refconv.compile_specs import output_layout, specialisations
    from refconv.sink import RowSink
    from refconv.variant import run_variant
    launches, declared = opencl_on_a_48k_device
    bad, n = [], 0
    variants = [v for v in registry.variants() if v.backend == "opencl"]
    assert variants
    for v in variants:
        for params, desc in specialisations(v, "all"):
            p = Problem.parse(desc)
            declared.clear()
            assert v.constraint is None or v.constraint(p, params) is None
            decl = list(declared)
            launches.clear()
            shape, dtype = output_layout(p, v.writes)
            out = RowSink(shape, dtype, lambda r0, block: None) if v.output == "rows" else np.zeros(shape, dtype)
            run_variant(v, p, out, params)
            assert launches, (v.id, params)
            for ln in launches:
                n += 1
                k = ln["kernel"]
                need = static_local_bytes(k.source, k.function_name, k.options) + ln["dynamic"]
                items = int(np.prod(ln["local"]))
                covered = need == 0 or any(d["bytes"] >= need and int(np.prod(d["local"])) == items for d in decl)
                if items > 1024 or need > MAX_SHARED or not covered:
                    bad.append((v.id, params, k.function_name, items, need, decl))
    assert bad == [] and n > 100
