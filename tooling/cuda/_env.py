"""Where the numba_cuda backend runs: a real GPU or numba-cuda's simulator.

``NUMBA_ENABLE_CUDASIM`` is read once, when ``numba.cuda`` is first imported, so the choice is
made here *before* that import: :func:`configure` records the user's choice (``auto`` / ``gpu`` /
``sim``, plus ``sanitize``), :func:`cuda` imports ``numba.cuda`` lazily with the environment set
accordingly.

``sanitize`` (``--sanitize`` / ``--no-sanitize``, env ``REFCONV_SANITIZE``) is ``"auto"`` unless
given: the simulator sanitizer is armed for every simulated launch (``"auto"`` and ``True``), never
with ``False``; on a GPU, ``True`` also means "run the kernels under NVIDIA compute-sanitizer"
(:mod:`refconv.tooling.cuda.gpu_sanitizer`), ``"auto"`` a plain GPU run.  GPU detection never imports ``numba.cuda``: it loads the
driver (``libcuda.so.1``) with ctypes and asks ``cuInit`` / ``cuDeviceGetCount``.
"""
from __future__ import annotations

import ctypes
import functools
import os
import sys

import numpy as np

_state = {"cuda": "auto", "sanitize": False, "gpu_sanitize": False, "reason": None}

#: the values of the ``sanitize`` option: given (``True``/``False``) or not (``"auto"``)
SANITIZE_CHOICES = (True, False, "auto")

CHOICES = ("auto", "gpu", "sim")


@functools.lru_cache(maxsize=None)
def detect_gpu() -> tuple:
    """``(True, name)`` when the CUDA driver reports a device, else ``(False, reason)``."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return False, f"no CUDA driver (libcuda.so.1: {e})"
    try:
        rc = lib.cuInit(0)
        if rc != 0:
            return False, f"cuInit failed (CUresult {rc})"
        n = ctypes.c_int(0)
        rc = lib.cuDeviceGetCount(ctypes.byref(n))
        if rc != 0 or n.value < 1:
            return False, f"no CUDA device (cuDeviceGetCount: CUresult {rc}, count {n.value})"
        dev = ctypes.c_int(0)
        lib.cuDeviceGet(ctypes.byref(dev), 0)
        buf = ctypes.create_string_buffer(256)
        lib.cuDeviceGetName(buf, 256, dev)
        return True, buf.value.decode(errors="replace") or "CUDA device 0"
    except Exception as e:  # pragma: no cover - exotic driver failures
        return False, f"CUDA driver query failed: {type(e).__name__}: {e}"


def configure(options) -> None:
    """The backend's ``configure``: ``options["cuda"]`` (``--cuda``, else ``REFCONV_CUDA``, else
    ``auto``) and ``options["sanitize"]`` (``--sanitize`` / ``--no-sanitize``, else ``auto``)."""
    options = options or {}
    sanitize = options.get("sanitize")
    set_mode(options.get("cuda") or os.environ.get("REFCONV_CUDA") or "auto",
             sanitize="auto" if sanitize is None else sanitize)


def set_mode(choice: str = "auto", *, sanitize="auto") -> None:
    """Fix where numba-cuda kernels run in this process, for every module that uses ``numba.cuda``:
    ``choice`` is ``auto`` (the GPU if the driver reports one, else the simulator), ``gpu`` or
    ``sim``.  ``sanitize``: ``"auto"`` (the default) arms the simulator sanitizer when the kernels
    run on the simulator; ``True`` does the same, and on a GPU runs them under NVIDIA
    compute-sanitizer; ``False`` runs plain.

    ``NUMBA_ENABLE_CUDASIM`` is set (and numba's config reloaded) *now*, so that a plugin that
    imports ``numba.cuda`` itself later -- in its ``variants()`` or ``run`` -- gets the same mode as
    the built-in backend; under the simulator, refconv's event-driven block scheduler and the
    sanitizer are armed for the first simulated launch.  Once ``numba.cuda`` is imported the mode
    cannot change; a different choice is then reported by :func:`reason`."""
    if choice not in CHOICES:
        raise ValueError(f"CUDA mode {choice!r}: expected one of {', '.join(CHOICES)}")
    from .sim_scheduler import scheduler
    scheduler()   # UsageError for a REFCONV_SIM_SCHEDULER not accepted, before any work
    if sanitize not in SANITIZE_CHOICES:
        raise ValueError(f"sanitize {sanitize!r}: expected True, False or 'auto'")
    _state["cuda"], _state["reason"] = choice, None
    _state["sanitize"] = _state["gpu_sanitize"] = False
    _apply()
    on_sim = _wanted() == "sim"
    try:
        from . import sanitizer
    except ImportError:  # pragma: no cover - shipped with the backend
        if sanitize is True:
            _state["reason"] = "sanitizer not installed"
        return
    if sanitize is False:
        sanitizer.disarm()
        sanitizer.disable()
        return
    if on_sim:
        _state["sanitize"] = True
        sanitizer.arm()
    else:
        sanitizer.disarm()
        _state["gpu_sanitize"] = sanitize is True


def _apply() -> None:
    """Put the wanted mode in the environment (inherited by worker processes) and numba's config,
    unless ``numba.cuda`` is already imported (then :func:`reason` reports any conflict)."""
    want = _wanted()
    if "numba.cuda" not in sys.modules:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1" if want == "sim" else "0"
        # numba-cuda reads the flag from numba's config, which was loaded from the environment
        # when numba was first imported -- maybe by another backend (numba_cpu) in this process
        cfg = sys.modules.get("numba.core.config")
        if cfg is not None and hasattr(cfg, "reload_config"):
            cfg.reload_config()
    if want == "sim":
        from .sim_scheduler import arm
        arm()


def sanitizing() -> bool:
    """True when every simulated launch is instrumented by the simulator sanitizer (under the
    simulator, unless ``--no-sanitize``)."""
    if not _state["sanitize"]:
        return False
    try:
        from .sanitizer import armed, is_enabled
    except ImportError:  # pragma: no cover
        return False
    return armed() or is_enabled()


def gpu_sanitizing() -> bool:
    """True when ``--sanitize`` asked for NVIDIA compute-sanitizer around the GPU kernels."""
    return _state["gpu_sanitize"]


def mode() -> str:
    """``"gpu"`` or ``"sim"`` (what :func:`cuda` imports / imported)."""
    if "numba.cuda" in sys.modules:
        return "sim" if _loaded_sim() else "gpu"
    return _wanted()


def _wanted() -> str:
    choice = _state["cuda"]
    if choice in ("gpu", "sim"):
        return choice
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "") not in ("", "0"):
        return "sim"
    return "gpu" if detect_gpu()[0] else "sim"


def _loaded_sim() -> bool:
    from numba.cuda.core import config
    return bool(config.ENABLE_CUDASIM)


def reason() -> str | None:
    """Why the backend cannot run as configured, or None.

    A :class:`refconv.MissingTarget` (``refconv check`` exits 2) when the user's own choice cannot
    be honoured: ``--cuda gpu`` (or ``REFCONV_CUDA=gpu``) without a GPU, or ``numba.cuda``
    already imported in the other mode.  The CUDA mode is
    process-wide and fixed by the first ``import numba.cuda``; when another module (typically a
    plugin importing ``numba.cuda`` at import time, before this backend was configured) made
    that import, no numba_cuda variant can run as asked, and skipping them as "unavailable" would
    turn a run that checked nothing green."""
    from refconv import MissingTarget
    if _state["reason"]:
        return MissingTarget(_state["reason"])
    want = _wanted()
    if want == "gpu" and not detect_gpu()[0]:
        return MissingTarget(f"--cuda gpu asked for, but {detect_gpu()[1]}")
    if _state["gpu_sanitize"]:
        from .gpu_sanitizer import missing
        why = missing()
        if why:
            return MissingTarget(why)
    if "numba.cuda" in sys.modules:
        got = "sim" if _loaded_sim() else "gpu"
        if got != want:
            names = {"sim": "simulator", "gpu": "GPU"}
            return MissingTarget(
                f"numba.cuda was already imported in {names[got]} mode by another module (a plugin "
                f"importing numba.cuda at import time?) before the numba_cuda backend was configured "
                f"for the {names[want]}; the CUDA mode is process-wide and fixed by the first import: "
                f"set NUMBA_ENABLE_CUDASIM={'1' if want == 'sim' else '0'} in the environment before "
                f"starting, or make that module import numba.cuda lazily")
    try:
        import numba_cuda  # noqa: F401
    except ImportError as e:
        return f"numba-cuda not installed ({e})"
    return None


@functools.lru_cache(maxsize=None)
def _import_cuda():
    want = _wanted()
    if "numba.cuda" not in sys.modules:
        _apply()
    if not hasattr(np, "row_stack"):  # numpy 2.5 removed it; numba-cuda 0.30 still overloads it
        np.row_stack = np.vstack
    from numba import cuda
    if want == "sim":
        from .sim_scheduler import install
        install()
    return cuda


def cuda():
    """The ``numba.cuda`` module, imported in the configured mode."""
    return _import_cuda()


def is_sim() -> bool:
    return mode() == "sim"


def describe() -> str:
    try:
        import numba_cuda
        ver = numba_cuda.__version__
    except Exception:
        ver = "?"
    why = reason()
    if why:
        return f"unavailable: {why}"
    if mode() == "sim":
        extra = " + sanitizer" if _state["sanitize"] else ""
        return f"CUDA simulator (numba-cuda {ver}){extra}"
    ok, name = detect_gpu()
    extra = " + compute-sanitizer" if _state["gpu_sanitize"] else ""
    return f"{name} (numba-cuda {ver}){extra}"


def sm_count() -> int:
    """Multiprocessors of device 0 (a small number under the simulator)."""
    if is_sim():
        return 2
    try:
        return int(cuda().get_current_device().MULTIPROCESSOR_COUNT)
    except Exception:
        return 16


# ----------------------------------------------------------------------------- exact float helpers
#
# NVVM contracts a*b+c into fma.rn.f32 by default (its -fma=1), and numba-cuda only turns that off
# never (fastmath=False does not pass -fma=0).  The specs forbid FMA where they say "a rounded
# product, then a rounded sum", so kernels that must match bit for bit call these helpers: on the
# GPU they are libdevice's __nv_fmul_rn / __nv_fadd_rn (mul.rn / add.rn, which ptxas never fuses);
# under the simulator, the same IEEE float32 operations in NumPy.

def float_ops():
    """``(fmul32, fadd32, f2i_rz, fmul64, fadd64)`` device-callable helpers for the current mode."""
    return _float_ops(mode())


@functools.lru_cache(maxsize=None)
def _float_ops(m):
    if m == "gpu":
        from numba.cuda import libdevice
        return (libdevice.fmul_rn, libdevice.fadd_rn, libdevice.float2int_rz,
                libdevice.dmul_rn, libdevice.dadd_rn)
    f32, f64 = np.float32, np.float64
    # float32 operands: the double product / sum rounded once to float32 is the float32 operation's
    # result (53 >= 2*24 + 2: rounding twice is innocuous for + and *, Figueroa 1995), computed on
    # Python floats, without NumPy's scalar math and its errstate; a result at or past the float32
    # overflow threshold (2**128 - 2**103), a NaN and any other operand type take NumPy's way
    over = 2.0 ** 128 - 2.0 ** 103

    def fmul32(a, b):
        if type(a) is f32 and type(b) is f32:
            p = float(a) * float(b)
            if -over < p < over:
                return f32(p)
        with np.errstate(all="ignore"):
            return f32(f32(a) * f32(b))

    def fadd32(a, b):
        if type(a) is f32 and type(b) is f32:
            p = float(a) + float(b)
            if -over < p < over:
                return f32(p)
        with np.errstate(all="ignore"):
            return f32(f32(a) + f32(b))

    def f2i_rz(v):  # cvt.rzi.s32.f32: truncate, saturate, NaN -> 0
        v = float(v)
        if v != v:
            return np.int32(0)
        if v >= 2147483647.0:
            return np.int32(2147483647)
        if v <= -2147483648.0:
            return np.int32(-2147483648)
        return np.int32(int(v))

    def fmul64(a, b):  # IEEE double on Python floats: the same bits, no errstate
        return f64(float(a) * float(b))

    def fadd64(a, b):
        return f64(float(a) + float(b))

    return fmul32, fadd32, f2i_rz, fmul64, fadd64


# ----------------------------------------------------------------------------- device limits

#: what the simulator reports as its device (numba-cuda's simulator enforces none of these; they
#: are the CUDA limits of every current NVIDIA GPU, so a case drawn under the simulator is one a
#: GPU accepts too)
SIM_LIMITS = {"max_threads_per_block": 1024, "max_shared_bytes": 48 * 1024, "max_const_bytes": 64 * 1024,
              "max_grid": (2**31 - 1, 65535, 65535), "mem_bytes": None}


@functools.lru_cache(maxsize=None)
def _limits(m: str) -> dict:
    if m == "sim":
        lim = dict(SIM_LIMITS)
        try:
            lim["mem_bytes"] = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError):  # pragma: no cover
            lim["mem_bytes"] = 8 << 30
        return lim
    c = cuda()
    dev = c.get_current_device()
    free, total = c.current_context().get_memory_info()
    return {"max_threads_per_block": int(dev.MAX_THREADS_PER_BLOCK),
            "max_shared_bytes": int(dev.MAX_SHARED_MEMORY_PER_BLOCK),
            "max_const_bytes": int(dev.TOTAL_CONSTANT_MEMORY),
            "max_grid": (int(dev.MAX_GRID_DIM_X), int(dev.MAX_GRID_DIM_Y), int(dev.MAX_GRID_DIM_Z)),
            "mem_bytes": int(total)}


def target():
    """The :class:`refconv.Target` in use: the GPU, or the simulator (``simulated=True``)."""
    from refconv.variant import Target
    m = mode()
    name = "CUDA simulator" if m == "sim" else detect_gpu()[1]
    return Target(name=name, simulated=(m == "sim"), limits=limits())


def limits() -> dict:
    """The limits of the device the kernels run on now (the GPU's, or :data:`SIM_LIMITS`)."""
    return _limits(mode())
