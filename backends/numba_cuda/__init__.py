"""refconv.backends.numba_cuda: the seed papers' CUDA kernels written with numba-cuda.

The same kernels run on a real GPU or under numba-cuda's simulator (``--cuda auto|gpu|sim``,
env ``REFCONV_CUDA``; ``auto`` picks the GPU when the driver reports one).  ``numba.cuda`` is
imported lazily, after :func:`configure`, because ``NUMBA_ENABLE_CUDASIM`` must be set before its
first import.  The mode, the poisoned device transfer, the simulator scheduler, the sanitizer and
the compile check live in :mod:`refconv.tooling.cuda`, published for third-party numba-cuda
plugins as :mod:`refconv.cuda` (the same functions).  Each variant module exposes ``variants() -> list[Variant]``.  See
docs/backends.md, section numba_cuda.
"""
from __future__ import annotations

from refconv import Backend, BackendOption

from refconv.timing import BenchHooks

from refconv.tooling.cuda import _common, _env
from refconv.tooling.cuda.preflight import preflight


def available():
    return _env.reason()


def _variants():
    import importlib
    out = []
    for mod in _MODULES:
        out += importlib.import_module(f"{__name__}.{mod}").variants()
    return out


_MODULES = ("filter2d_paper", "filter2d_pmpp", "filter2d_best", "sobel", "sobel_best", "matvec", "kron", "conv2d", "conv2d_best")


def configure(options):
    _env.configure(options)


OPTIONS = (
    BackendOption(flag="--cuda", dest="cuda", env="REFCONV_CUDA", choices=("auto", "gpu", "sim"),
                  default="auto",
                  help="where numba_cuda kernels run: auto (the GPU if the CUDA driver reports "
                       "one, else the simulator), gpu, or sim (numba-cuda's CUDA simulator)"),
    BackendOption(flag="--sanitize", dest="sanitize", is_flag=True, env="REFCONV_SANITIZE", default="auto",
                  help="hazard checks (shared races, out-of-bounds, barrier divergence, uninitialised "
                       "reads): under the simulator refconv's sanitizer instruments every launch, on by "
                       "default (--no-sanitize turns it off); on a GPU, --sanitize runs the kernels "
                       "under NVIDIA compute-sanitizer and each variant's cases once more under the "
                       "simulator sanitizer"),
    BackendOption(flag="--compile", dest="compile", is_flag=True,
                  help="compile every numba_cuda variant (and every numba-cuda plugin's whose "
                       "preflight is refconv.cuda.preflight) for the real target (NVVM/ptxas) "
                       "before checking, reporting compile errors as findings"),
)

backend = Backend(name="numba_cuda", variants=_variants, available=available, options=OPTIONS,
                  configure=configure, preflight=preflight, describe=_env.describe, target=_env.target,
                  bench=BenchHooks(copy=_common.bench_copy, launch=_common.bench_launch,
                                   simulated=_common.bench_simulated),
                  env_prefixes=("NUMBA_",), versions=("numba", "numba_cuda"),
                  real_target="--cuda gpu, on a machine with a CUDA GPU")
