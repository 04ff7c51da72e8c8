"""The OpenCL runtime behind refconv's ``opencl`` backend: target (platform) selection, one
context + in-order queue per target, a build cache keyed on (context, source, options), buffer
helpers that honour the checker's poisoned output buffer, and Oclgrind diagnostics.

Targets: ``pocl`` (Portable Computing Language, CPU), ``oclgrind`` (the Oclgrind simulator, which
checks every memory access, data races and barrier divergence) and ``nvidia`` (NVIDIA's OpenCL
driver).  ``auto`` picks NVIDIA when present, else PoCL.

So that one process sees every installed platform, the first platform query points
``OCL_ICD_VENDORS`` at a private directory holding the system's ``.icd`` files plus Oclgrind's
and NVIDIA's ICD libraries where they are installed but not registered (an ``OCL_ICD_VENDORS``
already set by the user is kept as is).  Oclgrind's checks are switched on through its
environment variables before any platform is created (``OCLGRIND_DATA_RACES=1``,
``OCLGRIND_CHECK_API=1``; a value the user set wins).

On the Oclgrind target every launch runs inside :func:`checked`, which redirects file
descriptor 2 (Oclgrind reports from C code) to a temporary file, parses each diagnostic into
(class, kernel, work-item, source line, message), reports it with
:func:`refconv.findings.report` and echoes it to the real stderr.
"""
from __future__ import annotations

import contextlib
import glob
import importlib.resources
import os
import re
import sys
import tempfile
import threading
import warnings

import numpy as np

TARGETS = ("pocl", "oclgrind", "nvidia")
CHOICES = ("auto",) + TARGETS

_OCLGRIND_LIBS = ("/usr/lib/oclgrind/liboclgrind-rt-icd.so",
                  "/usr/lib/x86_64-linux-gnu/liboclgrind-rt-icd.so",
                  "/usr/local/lib/liboclgrind-rt-icd.so")
_NVIDIA_LIBS = ("/usr/local/nvidia/lib64/libnvidia-opencl.so.1",
                "/usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1")
OCLGRIND_ENV = {"OCLGRIND_DATA_RACES": "1", "OCLGRIND_CHECK_API": "1"}

_lock = threading.RLock()
_state = {"choice": os.environ.get("REFCONV_OPENCL", "auto") or "auto", "icd_done": False,
          "platforms": None, "error": None}
_contexts: dict = {}
_programs: dict = {}


class OpenCLUnavailable(RuntimeError):
    """The asked-for OpenCL target is not installed here (the message names what is)."""


class OpenCLBuildError(RuntimeError):
    """A program failed to build; the message carries the build log."""


# ----------------------------------------------------------------------------- platforms

def _setup_icd() -> None:
    """Make every installed OpenCL implementation visible and switch Oclgrind's checks on; runs
    once, before the first platform query."""
    if _state["icd_done"]:
        return
    _state["icd_done"] = True
    for k, v in OCLGRIND_ENV.items():
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
        extra += [("oclgrind.icd", p) for p in _OCLGRIND_LIBS[:1] + _OCLGRIND_LIBS[1:] if os.path.exists(p)][:1]
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
    with _lock:
        if _state["platforms"] is None:
            _setup_icd()
            found = {}
            try:
                import pyopencl as cl
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
    choice = (options or {}).get("opencl") or os.environ.get("REFCONV_OPENCL") or "auto"
    if choice not in CHOICES:
        raise ValueError(f"--opencl {choice!r} not accepted; accepted: {CHOICES}")
    _state["choice"] = choice


def target() -> str:
    """The target in use: the configured choice, with ``auto`` resolved; raises
    :class:`OpenCLUnavailable` naming the installed targets when it is missing."""
    choice = _state["choice"]
    found = platforms()
    if choice == "auto":
        for t in ("nvidia", "pocl", "oclgrind"):
            if t in found:
                return t
        raise OpenCLUnavailable("no OpenCL platform found (auto looks for nvidia, pocl, oclgrind)"
                                + (f"; {_state['error']}" if _state["error"] else ""))
    if choice not in found:
        have = ", ".join(f"{t} ({d.name})" for t, (p, d) in found.items()) or "none"
        raise OpenCLUnavailable(f"OpenCL target {choice!r} is not installed here; installed: {have}")
    return choice


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
    return platforms()[t or target()][1]


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


def has_fp64(dev) -> bool:
    return "cl_khr_fp64" in dev.extensions or bool(getattr(dev, "double_fp_config", 0))


def has_subgroups(dev) -> bool:
    return "cl_khr_subgroups" in dev.extensions or "cl_intel_subgroups" in dev.extensions


# ----------------------------------------------------------------------------- context / build

class _Captured:
    text = ""


@contextlib.contextmanager
def _captured_stderr():
    """Redirect file descriptor 2 (where Oclgrind, a C library, writes) to a temporary file for
    the block; the captured text is in the yielded object's ``text`` afterwards, even if the
    block raised."""
    try:
        sys.stderr.flush()
    except Exception:
        pass
    cap = _Captured()
    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(2)
        os.dup2(tmp.fileno(), 2)
        try:
            yield cap
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            cap.text = tmp.read().decode("utf-8", "replace")


@contextlib.contextmanager
def _quiet(t: str):
    """On Oclgrind, host-side calls (context creation, builds, info queries) make its API checker
    print pyopencl's probes of parameters it does not know: drop those, echo anything else."""
    if t != "oclgrind":
        yield
        return
    cap = None
    try:
        with _captured_stderr() as cap:
            yield
    finally:
        text = cap.text if cap is not None else ""
        keep = [b for b in re.split(r"\n\s*\n", text) if b.strip() and not _BENIGN.search(b)]
        if keep:
            _echo("\n\n".join(keep) + "\n")


class Env:
    """What a launch needs for one target: context, queue, device, target name."""

    def __init__(self, t):
        import pyopencl as cl
        self.target = t
        self.platform, self.device = platforms()[t]
        with _quiet(t):
            self.ctx = cl.Context([self.device])
            try:  # profiling events give `refconv bench` the kernel times (see timed())
                self.queue = cl.CommandQueue(self.ctx, self.device,
                                             properties=cl.command_queue_properties.PROFILING_ENABLE)
            except cl.Error:
                self.queue = cl.CommandQueue(self.ctx, self.device)

    def program(self, source: str, options: tuple = ()):
        return build(self, source, options)


def env() -> Env:
    t = target()
    with _lock:
        if t not in _contexts:
            _contexts[t] = Env(t)
        return _contexts[t]


def source_text(name: str) -> str:
    return importlib.resources.files(__package__).joinpath(name).read_text()


def build(e: Env, source: str, options: tuple = ()):
    """The program built from the package's ``source`` (a ``.cl`` file name) with ``options``
    (``-D`` defines ...), built once per (context, source, options)."""
    import pyopencl as cl
    key = (id(e.ctx), source, tuple(options))
    with _lock:
        prg = _programs.get(key)
        if prg is None:
            opts = list(options)
            try:
                with warnings.catch_warnings(), _quiet(e.target):
                    warnings.simplefilter("ignore")
                    prg = cl.Program(e.ctx, source_text(source)).build(options=opts)
            except cl.Error as err:
                raise OpenCLBuildError(
                    f"OpenCL build of {source} with options {' '.join(opts) or '(none)'} failed on "
                    f"{e.target} ({e.device.name.strip()}):\n{err}") from err
            _programs[key] = prg
        return prg


_kernels: dict = {}


def kernel(e: Env, source: str, name: str, options: tuple = ()):
    """The kernel ``name`` of :func:`build`'s program, retrieved once and reused."""
    key = (id(e.ctx), source, tuple(options), name)
    with _lock:
        k = _kernels.get(key)
        if k is None:
            import pyopencl as cl
            prg = build(e, source, options)
            with _quiet(e.target):
                k = _kernels[key] = cl.Kernel(prg, name)
        return k


def kernel_wg_limit(e: Env, kernel) -> int:
    import pyopencl as cl
    with _quiet(e.target):
        return int(kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, e.device))


def check_local(e: Env, local: tuple, local_bytes: int = 0, kernel=None) -> str | None:
    """Why a work-group shape / local-memory size is beyond the device (None if fine)."""
    d = e.device
    total = int(np.prod(local))
    limit = d.max_work_group_size if kernel is None else min(d.max_work_group_size, kernel_wg_limit(e, kernel))
    if total > limit:
        return f"work-group {'x'.join(map(str, local))} = {total} items > {limit} allowed on {e.target}"
    for i, (n, m) in enumerate(zip(local, d.max_work_item_sizes)):
        if n > m:
            return f"work-group dimension {i} = {n} > {m} allowed on {e.target}"
    if local_bytes > d.local_mem_size:
        return f"{local_bytes} bytes of local memory > {d.local_mem_size} on {e.target}"
    return None


def fits_memory(e: Env, problem, out_bytes: int) -> str | None:
    """Why the problem's buffers (each input, and ``out_bytes`` of output / scratch) do not fit
    the device: one larger than ``max_mem_alloc_size``, or all together above 90% of
    ``global_mem_size`` (None if they fit)."""
    from refconv.problem import OPDEFS
    d = e.device
    od = OPDEFS[problem.op]
    sizes = [int(np.prod(shape, dtype=np.int64)) * od.input_dtype(name, problem.dims).itemsize
             for name, shape in problem.input_shapes().items()] + [int(out_bytes)]
    big = max(sizes)
    if big > d.max_mem_alloc_size:
        return f"a {big / 2**30:.2f} GiB buffer > max_mem_alloc_size {d.max_mem_alloc_size / 2**30:.2f} GiB on {e.target}"
    if sum(sizes) > 0.9 * d.global_mem_size:
        return f"{sum(sizes) / 2**30:.2f} GiB of buffers > 90% of {d.global_mem_size / 2**30:.2f} GiB on {e.target}"
    return None


# ----------------------------------------------------------------------------- buffers

def roundup(n: int, m: int) -> int:
    return max(m, (n + m - 1) // m * m)


def in_buf(e: Env, a):
    import pyopencl as cl
    a = np.ascontiguousarray(a)
    if a.nbytes == 0:
        a = np.zeros(1, a.dtype)
    return cl.Buffer(e.ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)


def scratch(e: Env, nbytes: int):
    import pyopencl as cl
    return cl.Buffer(e.ctx, cl.mem_flags.READ_WRITE, size=max(4, int(nbytes)))


@contextlib.contextmanager
def out_buf(e: Env, out: np.ndarray):
    """A device buffer initialised FROM the caller's (poisoned) output array; on exit the
    device contents are read back into ``out`` (through a contiguous copy if ``out`` is not
    C-contiguous), so elements the kernel does not write keep their poison."""
    import pyopencl as cl
    host = out if out.flags.c_contiguous else np.ascontiguousarray(out)
    buf = cl.Buffer(e.ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    yield buf
    cl.enqueue_copy(e.queue, host, buf).wait()
    if host is not out:
        out[...] = host


# ----------------------------------------------------------------------------- Oclgrind

_HEAD = [
    (re.compile(r"^(Read-write|Write-write|Read-read)? ?data race", re.I), "data-race"),
    (re.compile(r"^Invalid read", re.I), "invalid-read"),
    (re.compile(r"^Invalid write", re.I), "invalid-write"),
    (re.compile(r"divergence", re.I), "barrier-divergence"),
    (re.compile(r"uninitiali[sz]ed", re.I), "uninitialized"),
    (re.compile(r"^OpenCL runtime error", re.I), "api-error"),
    (re.compile(r"Oclgrind - OpenCL runtime error", re.I), "api-error"),
    (re.compile(r"unsupported instruction|unreachable|fatal|abort|segmentation|unhandled", re.I), "checker-crash"),
    (re.compile(r"^Invalid|illegal|out of bounds|out-of-bounds", re.I), "invalid-access"),
]
_ENTITY = re.compile(r"(?:Entity|First entity|Work-item|Kernel):?\s*(.*)", re.I)
_GLOBAL = re.compile(r"Global\(([^)]*)\)")
_LOCAL = re.compile(r"Local\(([^)]*)\)")
_GROUP = re.compile(r"(?:Group|Work-group:\s*)\(([^)]*)\)")
_LINE = re.compile(r"At line (\d+)(?: \(column \d+\))? of ([^:\s]+)")
# host-side probes (pyopencl asking a clGet*Info parameter Oclgrind does not know): not a
# kernel's fault, not a finding.
_BENIGN = re.compile(r"Function:\s*clGet\w*Info\s+Error:\s*CL_INVALID_VALUE\s+For argument 'param_name'", re.S)
_KERNEL = re.compile(r"Kernel:\s*(\S+)")


def parse_oclgrind(text: str) -> list[dict]:
    """Split Oclgrind's stderr into diagnostics: a diagnostic starts at an unindented line and
    continues over the indented lines after it.  Unknown unindented non-empty text is kept as
    class ``oclgrind``."""
    blocks, cur = [], None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            cur = [line]
            blocks.append(cur)
        elif cur is not None:
            cur.append(line)
        else:
            cur = [line]
            blocks.append(cur)
    out = []
    for b in blocks:
        head = b[0].strip()
        body = "\n".join(b)
        if _BENIGN.search(body):
            continue
        cls = None
        for rx, c in _HEAD:
            if rx.search(head):
                cls = c
                break
        if cls is None:
            # Oclgrind banners or our own noise: keep anything that looks like an error
            if re.search(r"error|warning|invalid|race|diverge", body, re.I):
                cls = "oclgrind"
            else:
                continue
        where = {}
        m = _KERNEL.search(body)
        if m:
            where["kernel"] = m.group(1)
        for key, rx in (("work_item", _GLOBAL), ("local_item", _LOCAL), ("work_group", _GROUP)):
            g = rx.search(body)
            if g:
                where[key] = tuple(int(x) for x in g.group(1).split(",") if x.strip())
        lines = [int(x.group(1)) for x in _LINE.finditer(body)]
        if lines:
            where["line"] = lines[0]
            if len(lines) > 1:
                where["lines"] = tuple(lines)
        out.append({"class": cls, "message": head, "detail": body, **where})
    return out


def _echo(s: str) -> None:
    try:
        sys.stderr.write(s)
        sys.stderr.flush()
    except Exception:
        pass


@contextlib.contextmanager
def checked(e: Env, what: str, source: str = ""):
    """Run launches (and their ``finish``) inside; on Oclgrind, capture fd 2, turn each
    diagnostic into a finding (``refconv.findings.report``) and echo it.  An exception raised
    by the block on Oclgrind is also reported (class ``checker-crash``) before it propagates."""
    if e.target != "oclgrind":
        yield
        return
    from refconv import findings
    exc = None
    with _captured_stderr() as cap:
        try:
            yield
            e.queue.finish()
        except BaseException as x:  # reported below, then re-raised
            exc = x
    text = cap.text
    diags = parse_oclgrind(text)
    # one finding per (class, kernel, source lines): a race on every work-item is one bug
    seen: dict = {}
    for d in diags:
        key = (d["class"], d.get("kernel"), tuple(sorted(set(d.get("lines", (d.get("line"),))), key=str)))
        if key in seen:
            seen[key]["count"] += 1
            continue
        where = {k: d[k] for k in ("kernel", "work_item", "local_item", "work_group", "line", "lines")
                 if k in d}
        if source:
            where["source"] = source
        seen[key] = {"class": d["class"], "message": f"{what}: {d['message']}", "detail": d["detail"],
                     "count": 1, **where}
    for f in seen.values():
        cls, msg = f.pop("class"), f.pop("message")
        if f["count"] > 1:
            msg += f" (and {f['count'] - 1} more like it)"
        findings.report(cls, msg, **f)
    if seen:
        shown = "\n\n".join(f["detail"] for f in seen.values())
        _echo(f"[refconv opencl/oclgrind] {what}: {len(diags)} diagnostic(s), {len(seen)} distinct:\n{shown}\n")
    if exc is not None:
        findings.report("checker-crash", f"{what}: {type(exc).__name__}: {exc}")
        raise exc


# ----------------------------------------------------------------------------- bench timing

def _profiled(ev) -> float:
    """Seconds between an event's start and end (the queue has PROFILING_ENABLE)."""
    ev.wait()
    return (ev.profile.end - ev.profile.start) * 1e-9


_scratch: dict = {}


def _flushes() -> bool:
    """Whether the target has an L2 worth flushing before a timed launch: the GPU target only."""
    return target() == "nvidia"


def flush(queue) -> None:
    """On the nvidia target, overwrite ``refconv.timing.flush_bytes()`` bytes of device memory
    (a buffer-to-buffer copy on the in-order ``queue``) so that the next kernel finds a cold L2.
    CPU targets (PoCL) and Oclgrind are not flushed.  Profiling events time the kernel itself,
    so the host's launch overhead is never in them."""
    import pyopencl as cl
    from refconv import timing
    n = timing.flush_bytes()
    if n <= 0 or not _flushes():
        return
    e = env()
    key = (id(e.ctx), n)
    if key not in _scratch:
        _scratch.clear()
        _scratch[key] = (scratch(e, n), scratch(e, n))
    src, dst = _scratch[key]
    cl.enqueue_copy(queue, dst, src, byte_count=n)


def timed(kernel):
    """``timed(k)(queue, global, local, *args)`` launches ``k`` like ``k(queue, ...)``; inside
    ``refconv.timing.collect`` the launch follows a :func:`flush` and its profiling interval is
    recorded (flagged as simulated on Oclgrind, whose times mean nothing)."""
    from refconv import timing
    if not timing.active():
        return kernel

    def launch(queue, *args, **kwargs):
        flush(queue)
        ev = kernel(queue, *args, **kwargs)
        timing.record(lambda: _profiled(ev), getattr(kernel, "function_name", "kernel"),
                      simulated=target() == "oclgrind")
        return ev
    return launch


def bench_copy(nbytes: int):
    """``BenchHooks.copy`` for OpenCL: one buffer-to-buffer copy of ``nbytes`` bytes on the
    device, timed by its profiling event (buffers allocated here, outside the timed copy)."""
    import pyopencl as cl
    from refconv import timing
    e = env()
    src = in_buf(e, np.ones(max(1, int(nbytes)), np.uint8))
    dst = scratch(e, max(1, int(nbytes)))

    def run():
        ev = cl.enqueue_copy(e.queue, dst, src, byte_count=max(1, int(nbytes)))
        timing.record(lambda: _profiled(ev), "device copy", simulated=e.target == "oclgrind")
    return run


def bench_simulated() -> str | None:
    """``BenchHooks.simulated``: why OpenCL times mean nothing here (None on a real device).
    PoCL runs on the host CPU: its times are real CPU times, not a GPU's."""
    try:
        t = target()
    except OpenCLUnavailable:
        return None
    if t == "oclgrind":
        return "opencl runs on Oclgrind here, a simulator: its kernel times mean nothing"
    return None
