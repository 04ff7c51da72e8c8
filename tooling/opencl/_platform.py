"""OpenCL platform setup for refconv's OpenCL tooling: which targets are installed, which one the
``--opencl`` option selected, and one context + in-order queue per target.

Targets: ``pocl`` (Portable Computing Language, CPU), ``oclgrind`` (the Oclgrind simulator, which
checks every memory access, data races and barrier divergence) and ``nvidia`` (NVIDIA's OpenCL
driver).  ``auto`` picks NVIDIA when present, else PoCL.

So that one process sees every installed platform, the first platform query points
``OCL_ICD_VENDORS`` at a private directory holding the system's ``.icd`` files plus Oclgrind's
and NVIDIA's ICD libraries where they are installed but not registered (an ``OCL_ICD_VENDORS``
already set by the user is kept as is).  Oclgrind's checks are switched on through its
environment variables before any platform is created (``OCLGRIND_DATA_RACES=1``,
``OCLGRIND_CHECK_API=1``; a value the user set wins).  pyopencl's and PoCL's caches get a folder
they can write: a read-only ``HOME`` moves them to a private folder in the temporary directory (or
turns them off), said in one line on stderr (:func:`_setup_cache`).

The selected target is process-wide state: refconv configures it in every worker through the
backends' ``configure`` (the built-in ``opencl`` backend's, and a plugin's that uses
:data:`refconv.opencl.OPTION` / :func:`refconv.opencl.configure`), so the built-in variants and a
plugin's kernels always run on the same target.
"""
from __future__ import annotations

import contextlib
import glob
import os
import stat
import sys
import tempfile
import threading

from ._oclgrind import OCLGRIND_ENV, quiet

#: PoCL's settings unless the user set them: one generic work-group function per kernel instead of
#: one compiled for every local size a check draws (``POCL_WORK_GROUP_SPECIALIZATION=0``).  The
#: draws vary the local size from example to example, so PoCL spent most of a first check
#: compiling; the generic function computes the same, a little slower per item, which the small
#: problems of a check never feel (the measurements: lab/README.md lists the runs).
POCL_ENV = {"POCL_WORK_GROUP_SPECIALIZATION": "0"}

TARGETS = ("pocl", "oclgrind", "nvidia")
CHOICES = ("auto",) + TARGETS

_OCLGRIND_LIBS = ("/usr/lib/oclgrind/liboclgrind-rt-icd.so",
                  "/usr/lib/x86_64-linux-gnu/liboclgrind-rt-icd.so",
                  "/usr/local/lib/liboclgrind-rt-icd.so")
_NVIDIA_LIBS = ("/usr/local/nvidia/lib64/libnvidia-opencl.so.1",
                "/usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1")

lock = threading.RLock()
_state = {"choice": os.environ.get("REFCONV_OPENCL", "auto") or "auto", "icd_done": False,
          "platforms": None, "error": None}
_contexts: dict = {}


class OpenCLUnavailable(RuntimeError):
    """The asked-for OpenCL target is not installed here (the message names what is)."""


def _writable(d: str) -> str | None:
    """Why files cannot be created in directory ``d`` (created when missing), or None."""
    try:
        os.makedirs(d, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=d, prefix=".refconv-probe-")
        os.close(fd)
        os.unlink(name)
        return None
    except OSError as e:
        return e.strerror or str(e)


def _cache_base() -> str:
    """The folder under which pyopencl (its compiler and invoker caches) and PoCL keep their
    caches: ``XDG_CACHE_HOME``, else ``~/.cache``."""
    return os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")


def _private_cache() -> str | None:
    """A cache folder only this user can write: ``refconv-cache-<uid>`` in the temporary directory
    (kept between runs) when it is this user's own directory and nobody else may write in it (a
    cache of compiled programs must not be another user's), else a fresh one; None when the
    temporary directory cannot be written either."""
    d = os.path.join(tempfile.gettempdir(), f"refconv-cache-{os.getuid()}")
    try:
        os.makedirs(d, mode=0o700, exist_ok=True)
        st = os.lstat(d)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022 and _writable(d) is None:
            return d
    except OSError:
        pass
    try:
        return tempfile.mkdtemp(prefix="refconv-cache-")
    except OSError:
        return None


def _setup_cache() -> None:
    """Give pyopencl and PoCL a cache they can write, before pyopencl is imported.  With ``HOME``
    read-only (and no writable ``XDG_CACHE_HOME``) pyopencl's compiler cache fails, and pyopencl
    then raises ``KeyError: 'PYOPENCL_CACHE_FAILURE_FATAL'`` for every build (it reads that
    variable without a default), and PoCL may not start at all.  So when the cache folder cannot
    be written, ``XDG_CACHE_HOME`` is pointed at a private folder in the temporary directory
    (inherited by the workers, which then need no change), or, when there is none, the caches are
    turned off (``PYOPENCL_NO_CACHE``, ``POCL_KERNEL_CACHE=0``); either is said in one line on
    stderr.  ``PYOPENCL_CACHE_FAILURE_FATAL`` is given its default (empty: a cache failure is a
    warning and the program is built from source), unless the user set it."""
    os.environ.setdefault("PYOPENCL_CACHE_FAILURE_FATAL", "")
    if os.environ.get("PYOPENCL_NO_CACHE", "").lower() in ("1", "true", "yes", "on"):
        return
    base = _cache_base()
    why = _writable(base)
    if why is None:
        return
    private = _private_cache()
    if private is not None:
        os.environ["XDG_CACHE_HOME"] = private
        now = f"OpenCL caches (pyopencl, PoCL) go to {private} (XDG_CACHE_HOME; set it to choose)"
    else:
        os.environ["PYOPENCL_NO_CACHE"] = "1"
        os.environ.setdefault("POCL_KERNEL_CACHE", "0")
        now = "OpenCL caches (pyopencl, PoCL) are off (no writable temporary directory either)"
    print(f"refconv: cache folder {base} cannot be written ({why}): {now}", file=sys.stderr, flush=True)


def _stable_include_path(cl) -> None:
    """pyopencl adds ``-I <its own headers' folder>`` to every build, a path inside the virtual
    environment, and PoCL's and pyopencl's binary caches key on the options: a fresh clone or a
    new venv found every kernel uncached and PoCL compiled them all again.  This points that
    option at a link in the cache folder (``refconv/pyopencl-include``, to the same headers), the
    same path for every installation of the user; if the link cannot be made, the option is left
    as pyopencl has it."""
    opts = getattr(cl, "_DEFAULT_INCLUDE_OPTIONS", None)
    if not (isinstance(opts, list) and len(opts) == 2 and opts[0] == "-I"):
        return
    real = opts[1]
    link = os.path.join(_cache_base(), "refconv", "pyopencl-include")
    try:
        if os.path.realpath(link) != os.path.realpath(real):
            os.makedirs(os.path.dirname(link), exist_ok=True)
            tmp = f"{link}.{os.getpid()}"
            os.symlink(real, tmp)
            os.replace(tmp, link)      # atomic: concurrent workers see one link or the other
        opts[1] = link
    except OSError:
        pass


def _setup_icd() -> None:
    """Make every installed OpenCL implementation visible, switch Oclgrind's checks on and give
    the caches a writable folder (:func:`_setup_cache`); runs once, before the first platform
    query."""
    if _state["icd_done"]:
        return
    _state["icd_done"] = True
    _setup_cache()
    for k, v in {**OCLGRIND_ENV, **POCL_ENV}.items():
        os.environ.setdefault(k, v)
    if os.environ.get("OCL_ICD_VENDORS"):
        return
    icds = sorted(glob.glob("/etc/OpenCL/vendors/*.icd"))
    listed = ""
    for f in icds:
        try:
            listed += open(f).read()
        except OSError:
            pass
    extra = []
    if "oclgrind" not in listed.lower():
        extra += [("oclgrind.icd", p) for p in _OCLGRIND_LIBS if os.path.exists(p)][:1]
    if "nvidia" not in listed.lower():
        extra += [("nvidia.icd", p) for p in _NVIDIA_LIBS if os.path.exists(p)][:1]
    if not extra:
        return
    d = tempfile.mkdtemp(prefix="refconv-ocl-icd-")
    for f in icds:
        with open(os.path.join(d, os.path.basename(f)), "w") as fh:
            fh.write(open(f).read())
    for name, lib in extra:
        with open(os.path.join(d, name), "w") as fh:
            fh.write(lib + "\n")
    os.environ["OCL_ICD_VENDORS"] = d


def classify(platform) -> str | None:
    """The refconv target name of a ``pyopencl.Platform`` (None for one refconv does not know)."""
    n = (platform.name + " " + platform.vendor).lower()
    if "oclgrind" in n:
        return "oclgrind"
    if "portable computing language" in n or "pocl" in n:
        return "pocl"
    if "nvidia" in n:
        return "nvidia"
    return None


def platforms() -> dict:
    """``{target: (platform, device)}`` for the targets installed here (first device each)."""
    with lock:
        if _state["platforms"] is None:
            _setup_icd()
            found = {}
            try:
                import pyopencl as cl
                _stable_include_path(cl)
                for p in cl.get_platforms():
                    t = classify(p)
                    if t and t not in found:
                        devs = p.get_devices()
                        if devs:
                            found[t] = (p, devs[0])
            except Exception as e:  # no ICD loader, no platform at all ...
                _state["error"] = f"{type(e).__name__}: {e}"
            _state["platforms"] = found
        return _state["platforms"]


def configure(options) -> None:
    """Select the target from the backend options (``{"opencl": "pocl"}``; the ``REFCONV_OPENCL``
    environment variable, else ``auto``, when absent)."""
    choice = (options or {}).get("opencl") or os.environ.get("REFCONV_OPENCL") or "auto"
    if choice not in CHOICES:
        raise ValueError(f"--opencl {choice!r} not accepted; accepted: {CHOICES}")
    _state["choice"] = choice


def choice() -> str:
    """The configured choice, ``auto`` unresolved."""
    return _state["choice"]


@contextlib.contextmanager
def using(t: str):
    """Select target ``t`` for the ``with`` block, then restore the previous choice (for tests
    and scripts; refconv itself selects through :func:`configure`)."""
    old = _state["choice"]
    configure({"opencl": t})
    try:
        yield
    finally:
        _state["choice"] = old


def target() -> str:
    """The target in use: the configured choice, with ``auto`` resolved; raises
    :class:`OpenCLUnavailable` naming the installed targets when it is missing."""
    ch = _state["choice"]
    found = platforms()
    if ch == "auto":
        for t in ("nvidia", "pocl", "oclgrind"):
            if t in found:
                return t
        raise OpenCLUnavailable("no OpenCL platform found (auto looks for nvidia, pocl, oclgrind)"
                                + (f"; {_state['error']}" if _state["error"] else ""))
    if ch not in found:
        have = ", ".join(f"{t} ({d.name})" for t, (p, d) in found.items()) or "none"
        raise OpenCLUnavailable(f"OpenCL target {ch!r} is not installed here; installed: {have}")
    return ch


def available() -> str | None:
    """None when the target can be used; the reason otherwise, as a :class:`refconv.MissingTarget`
    when the user named the target (``--opencl nvidia``): ``refconv check`` then exits 2."""
    try:
        target()
        return None
    except OpenCLUnavailable as e:
        if _state["choice"] != "auto":
            from refconv import MissingTarget
            return MissingTarget(str(e))
        return str(e)


def device(t: str | None = None):
    """The ``pyopencl.Device`` of target ``t`` (default: the one in use)."""
    return platforms()[t or target()][1]


def has_fp64(dev=None) -> bool:
    dev = dev if dev is not None else device()
    return "cl_khr_fp64" in dev.extensions or bool(getattr(dev, "double_fp_config", 0))


def has_subgroups(dev=None) -> bool:
    dev = dev if dev is not None else device()
    return "cl_khr_subgroups" in dev.extensions or "cl_intel_subgroups" in dev.extensions


def describe() -> str:
    found = platforms()
    avail = ", ".join(found) or "none"
    try:
        t = target()
    except OpenCLUnavailable as e:
        return f"{e}; available: {avail}"
    p, d = found[t]
    fp64 = "fp64" if has_fp64(d) else "no fp64"
    line = f"target {t} ({d.name.strip()}, {d.version.strip()}, {fp64}); available: {avail}"
    if t == "oclgrind":
        line += "; Oclgrind simulates every work-item: use the ci profile"
    return line


def target_info():
    """The :class:`refconv.Target` in use: Oclgrind is a simulator; limits from the device."""
    from refconv.variant import Target
    t = target()
    d = device(t)
    return Target(name=f"{t} ({d.name.strip()})", simulated=(t == "oclgrind"), limits={
        "max_work_group_size": int(d.max_work_group_size), "local_mem_bytes": int(d.local_mem_size),
        "max_const_bytes": int(d.max_constant_buffer_size), "max_alloc_bytes": int(d.max_mem_alloc_size),
        "mem_bytes": int(d.global_mem_size)})


class Env:
    """What a launch needs on one target: ``target`` (name), ``platform``, ``device``, ``ctx`` and
    an in-order ``queue`` (with profiling enabled where the device allows, for ``refconv bench``)."""

    def __init__(self, t):
        import pyopencl as cl
        self.target = t
        self.platform, self.device = platforms()[t]
        with quiet(t):
            self.ctx = cl.Context([self.device])
            try:
                self.queue = cl.CommandQueue(self.ctx, self.device,
                                             properties=cl.command_queue_properties.PROFILING_ENABLE)
            except cl.Error:
                self.queue = cl.CommandQueue(self.ctx, self.device)


def env() -> Env:
    """The context and queue of the selected target, created once per target and process."""
    t = target()
    with lock:
        if t not in _contexts:
            _contexts[t] = Env(t)
        return _contexts[t]
