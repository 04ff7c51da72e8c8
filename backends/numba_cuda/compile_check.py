"""GPU-less compile check of the numba_cuda variants (``refconv check --compile``).

The CUDA simulator runs kernels as Python, so it accepts code the real compiler rejects (e.g. a
``cuda.shared.array((T + 9, T + 9), float32)`` shape computed from a module global).  This module
compiles every kernel a variant launches, for each launch-parameter specialisation the checker
draws from, to PTX for a named compute capability (default ``sm_90``; ``options["cc"]`` or
``REFCONV_CC``), with no GPU:

1. :func:`preflight` (in the checking process, which may run the simulator) lists, per variant,
   the specialisations: its default ``Param`` values plus combinations that cover every value of
   every ``Param`` (``options["compile_params"]="all"`` / ``REFCONV_COMPILE_PARAMS=all``: the whole
   product) x every supported dtype, on one tiny problem, plus each value of each small option
   domain one at a time (defaults elsewhere), and drops those its ``constraint`` rejects.
2. It starts worker subprocesses with ``NUMBA_ENABLE_CUDASIM=0`` (the simulator replaces
   ``numba.cuda`` wholesale in a process where it is on).  A worker imports the real
   ``numba.cuda`` first, then swaps in host-memory stand-ins for the device-memory API
   (``to_device``, ``device_array*``, ``synchronize``, streams, ``get_current_device``) and a
   launch that records the kernel and its argument types instead of running it.  It runs each
   variant's ``run(problem, **params)`` unchanged: every launch compiles ``py_func`` (closure
   constants included, as the real dispatcher would) with ``numba.cuda.compile_ptx`` for the
   inferred signature, then ``ptxas -v`` (when found) for registers / shared memory / spills.
3. Findings per variant: ``compile-error`` (typing / lowering / NVVM / ptxas errors),
   ``launch-error`` (block > 1024 threads, registers x threads > 64K, shared memory > 48 KiB
   without opt-in), ``compile-check-failed`` (the check itself could not run this variant: never
   read as a pass), and ``compile-info`` (one per kernel: registers, smem, spills; not a failure).

Needs NVVM (``pip install "numba-cuda[cu13]==0.30.4"``, the ``cuda`` extra); ``ptxas`` is optional.
"""
from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

DEFAULT_CC = "sm_90"

# ----------------------------------------------------------------------------- helpers


def parse_cc(cc) -> tuple:
    """``"sm_90"``, ``"90"``, ``"9.0"``, ``(9, 0)`` -> ``(9, 0)``."""
    if isinstance(cc, (tuple, list)):
        return int(cc[0]), int(cc[1])
    s = str(cc).strip().lower().removeprefix("sm_").removeprefix("compute_").rstrip("a")
    if "." in s:
        a, b = s.split(".", 1)
        return int(a), int(b)
    if not s.isdigit() or len(s) < 2:
        raise ValueError(f"compute capability {cc!r}: expected e.g. sm_90, 90 or 9.0")
    return int(s[:-1]), int(s[-1])


def find_ptxas() -> str | None:
    p = os.environ.get("REFCONV_PTXAS") or shutil.which("ptxas")
    if p:
        return p
    cands = []
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            cands.append(os.path.join(root, "bin", "ptxas"))
    import glob
    cands += sorted(glob.glob("/usr/local/cuda-*/bin/ptxas"), reverse=True)
    for c in cands:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


_PREFERRED = {"h": 8, "w": 8, "kh": 3, "kw": 3, "rows": 8, "cols": 8, "m": 2, "n": 2, "p": 3, "q": 3,
              "c": 2, "r": 3, "s": 3}


#: where an unbounded domain is cut for the compile check (a dilation of 16 leaves no output)
_UNBOUNDED_CAP = {"stride": 2, "padding": 2, "dilation": 2}


def _candidates(dim, dom):
    from refconv.variant import Range
    if isinstance(dom, Range):
        pref = _PREFERRED.get(dim, dom.lo)
        dom = dom.cap(max(dom.lo, _UNBOUNDED_CAP.get(dim, 16)))   # unbounded: compile for small ones
        vals = [min(max(pref, dom.lo), dom.hi), dom.lo, dom.hi]
    else:
        vals = list(dom)
    out = []
    for v in vals:
        if v not in out:
            out.append(v)
    return out


def specialisations(variant, mode: str = "cover", max_param_combos: int = 256) -> list:
    """``[(params, problem_descriptor)]`` for ``variant`` (see the module docstring).  ``mode``
    ``"all"``: every combination of the launch parameters' values; ``"cover"`` (default): the
    defaults plus enough combinations that every value of every parameter is compiled once."""
    from refconv.problem import OPDEFS, Problem

    od = OPDEFS[variant.op]
    sup = variant.supports
    params = list(variant.params)
    default_params = variant.default_params()
    names = [p.name for p in params]
    if mode == "all":
        combos = [dict(zip(names, vals))
                  for vals in itertools.product(*[p.values for p in params])][:max_param_combos] or [{}]
    else:
        # "cover": the defaults, then a diagonal that gives every value of every parameter once
        combos = [default_params]
        width = max((len(p.values) for p in params), default=0)
        for i in range(width):
            c = {p.name: p.values[i % len(p.values)] for p in params}
            if c not in combos:
                combos.append(c)

    def dom(k, default):
        return sup.get(k, default)

    dims0 = {k: _candidates(k, dom(k, d)) for k, d in od.dims.items()}
    opts0 = {k: _candidates(k, dom(k, d)) for k, d in od.options.items()}
    dtypes = dims0.get("dtype", [None])

    def make(dtype, params, opt_over=None):
        # first combination of candidate dims / options that builds and that the constraint takes
        base_d = {k: v[0] for k, v in dims0.items()}
        base_o = {k: v[0] for k, v in opts0.items()}
        if dtype is not None:
            base_d["dtype"] = dtype
        if opt_over:
            base_o.update(opt_over)
        tries = [base_d]
        for k, vals in dims0.items():
            for v in vals[1:]:
                if k != "dtype":
                    tries.append({**base_d, k: v})
        for d in tries:
            o = {k: v for k, v in base_o.items() if v is not None or k in sup}
            try:
                p = Problem(variant.op, d, o)
                _ = p.input_shapes()
            except Exception:
                continue
            if variant.constraint is not None:
                try:
                    if variant.constraint(p, params):
                        continue
                except Exception:
                    continue
            return p
        return None

    out, seen = [], set()
    for dt in dtypes:
        for pr in combos:
            p = make(dt, pr)
            if p is not None and (key := (json.dumps(pr, sort_keys=True, default=str), p.descriptor())) not in seen:
                seen.add(key)
                out.append((pr, p.descriptor()))
    for k, vals in opts0.items():
        if len(vals) < 2 or len(vals) > 6:
            continue
        for v in vals[1:]:
            p = make(dtypes[0], default_params, {k: v})
            if p is not None and (key := (json.dumps(default_params, sort_keys=True, default=str), p.descriptor())) not in seen:
                seen.add(key)
                out.append((default_params, p.descriptor()))
    return out


def _run_ref(variant):
    fn = variant.run
    mod, qn = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if mod and qn and "<locals>" not in qn and "<lambda>" not in qn:
        return [mod, qn]
    return None


# ----------------------------------------------------------------------------- parent side


def preflight(variants, options=None) -> dict:
    """``{variant_id: [finding dicts]}``; an empty list means every kernel compiled."""
    options = dict(options or {})
    cc = parse_cc(options.get("cc") or os.environ.get("REFCONV_CC") or DEFAULT_CC)
    result = {v.id: [] for v in variants}
    mode = options.get("compile_params") or os.environ.get("REFCONV_COMPILE_PARAMS") or "cover"
    tasks = []
    for v in variants:
        try:
            specs = specialisations(v, mode)
        except Exception as e:
            result[v.id].append(_finding("compile-check-failed",
                                         f"could not list specialisations: {type(e).__name__}: {e}", v.id))
            continue
        if not specs:
            result[v.id].append(_finding("compile-check-failed",
                                         "no specialisation of this variant builds a valid tiny problem", v.id))
            continue
        tasks.append({"id": v.id, "ref": _run_ref(v), "specs": specs, "writes": v.writes, "output": v.output})
    if not tasks:
        return result
    njobs = int(options.get("compile_jobs") or os.environ.get("REFCONV_COMPILE_JOBS") or min(4, os.cpu_count() or 1))
    njobs = max(1, min(njobs, len(tasks)))
    chunks = [tasks[i::njobs] for i in range(njobs)]
    timeout = float(options.get("compile_timeout") or 900)
    env = dict(os.environ)
    env["NUMBA_ENABLE_CUDASIM"] = "0"
    env.pop("REFCONV_CUDA", None)
    tmp = tempfile.mkdtemp(prefix="refconv-compile-")
    procs = []
    for i, chunk in enumerate(chunks):
        inp, outp = os.path.join(tmp, f"in{i}.json"), os.path.join(tmp, f"out{i}.json")
        with open(inp, "w") as f:
            json.dump({"cc": list(cc), "tasks": chunk, "ptxas": options.get("ptxas", True)}, f)
        log = open(os.path.join(tmp, f"log{i}.txt"), "w")
        p = subprocess.Popen([sys.executable, "-m", "refconv.backends.numba_cuda.compile_check",
                              "--worker", inp, outp], env=env, stdout=log, stderr=subprocess.STDOUT)
        procs.append((p, chunk, outp, log))
    t_end = time.monotonic() + timeout
    for p, chunk, outp, log in procs:
        try:
            p.wait(timeout=max(1.0, t_end - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        log.close()
        got = None
        if os.path.exists(outp):
            try:
                with open(outp) as f:
                    got = json.load(f)
            except Exception:
                got = None
        if got is None:
            with open(log.name) as f:
                tail = f.read()[-2000:]
            why = "timed out" if p.returncode in (-9, None) else f"exit status {p.returncode}"
            for t in chunk:
                result[t["id"]].append(_finding(
                    "compile-check-failed", f"the compile-check worker crashed ({why}); its output "
                    f"ends: {tail}", t["id"]))
            continue
        for vid, fs in got.items():
            result.setdefault(vid, []).extend(fs)
    shutil.rmtree(tmp, ignore_errors=True)
    return result


def _finding(cls, message, vid, **kw):
    return {"class": cls, "message": message, "variant": vid, **kw}


# ----------------------------------------------------------------------------- worker side


class _FakeStream:
    handle = None

    def synchronize(self):
        pass

    def auto_synchronize(self):
        import contextlib
        return contextlib.nullcontext(self)

    def __int__(self):
        return 0


class _FakeDevice:
    def __init__(self, cc):
        self.compute_capability = cc
        self.name = b"refconv compile check"
        self.id = 0
        self.MULTIPROCESSOR_COUNT = 132
        self.MAX_THREADS_PER_BLOCK = 1024
        self.MAX_SHARED_MEMORY_PER_BLOCK = 49152
        self.WARP_SIZE = 32
        self.MAX_BLOCK_DIM_X = 1024
        self.MAX_BLOCK_DIM_Y = 1024
        self.MAX_BLOCK_DIM_Z = 64
        self.MAX_GRID_DIM_X = 2 ** 31 - 1
        self.MAX_GRID_DIM_Y = 65535
        self.MAX_GRID_DIM_Z = 65535
        self.MAX_REGISTERS_PER_BLOCK = 65536

    def reset(self):
        pass


def _install_fakes(cc, recorder):
    """Host-memory stand-ins for numba.cuda's device API and a recording launch."""
    import contextlib

    import numpy as np
    from numba import cuda
    from numba.cuda import dispatcher as D

    class DevArray(np.ndarray):
        """A host array standing in for a DeviceNDArray (typed the same by numba)."""

        def copy_to_host(self, ary=None, stream=0):
            if ary is None:
                return np.array(self, copy=True).view(np.ndarray)
            np.copyto(ary, self)
            return ary

        def copy_to_device(self, ary, stream=0):
            np.copyto(self, np.asarray(ary))

        def split(self, section, stream=0):
            return [self[i:i + section] for i in range(0, len(self), section)]

        def is_c_contiguous(self):
            return self.flags.c_contiguous

        def is_f_contiguous(self):
            return self.flags.f_contiguous

        @property
        def alloc_size(self):
            return self.nbytes

        def bind(self, stream=0):
            return self

        def get_ipc_handle(self):  # pragma: no cover
            raise RuntimeError("not available in the compile check")

    def dev(a):
        return np.asarray(a).view(DevArray)

    def to_device(obj, stream=0, copy=True, to=None):
        if to is not None:
            np.copyto(to, np.asarray(obj))
            return to
        return dev(np.array(obj, copy=True, order="K"))

    def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
        return dev(np.empty(shape, dtype=dtype, order=order))

    def device_array_like(ary, stream=0):
        return dev(np.empty_like(np.asarray(ary)))

    def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
        return np.empty(shape, dtype=dtype, order=order)

    @contextlib.contextmanager
    def pinned(*arylist):
        yield

    fake_dev = _FakeDevice(cc)
    for name, val in {
        "to_device": to_device, "device_array": device_array, "device_array_like": device_array_like,
        "mapped_array": device_array, "managed_array": device_array, "pinned_array": pinned_array,
        "pinned_array_like": lambda ary: np.empty_like(ary), "pinned": pinned,
        "synchronize": lambda: None, "stream": lambda: _FakeStream(),
        "default_stream": lambda: _FakeStream(), "per_thread_default_stream": lambda: _FakeStream(),
        "legacy_default_stream": lambda: _FakeStream(), "external_stream": lambda ptr: _FakeStream(),
        "is_available": lambda: True, "get_current_device": lambda: fake_dev,
        "select_device": lambda i: fake_dev, "close": lambda: None,
        "profile_start": lambda: None, "profile_stop": lambda: None,
    }.items():
        setattr(cuda, name, val)

    class _Ctx:
        def get_memory_info(self):
            return (80 << 30, 80 << 30)

        def synchronize(self):
            pass
    cuda.current_context = lambda devnum=0: _Ctx()
    # device functions ask the current device for its compute capability while compiling
    import numba.cuda.api as _api
    import numba.cuda.compiler as _compiler
    for m in (D, _api, _compiler):
        if hasattr(m, "get_current_device"):
            m.get_current_device = lambda: fake_dev

    def call(self, args, launch_config):
        recorder(self, tuple(self.typeof_pyval(a) for a in args), launch_config)

    def configure(self, griddim, blockdim, stream=0, sharedmem=0):
        from numba.cuda.errors import normalize_kernel_dimensions
        griddim, blockdim = normalize_kernel_dimensions(griddim, blockdim)
        lc = D._LaunchConfiguration.__new__(D._LaunchConfiguration)
        lc.dispatcher, lc.griddim, lc.blockdim = self, griddim, blockdim
        lc.stream, lc.sharedmem, lc.pre_launch_callbacks = stream, sharedmem, []
        lc._kernel_launch_config_sensitive = None
        return lc

    def compile_eager(self, sig):
        # cuda.jit("sig") compiles at decoration: record it, compile when launched / at the end
        from numba.cuda import sigutils
        args, _ = sigutils.normalize_signature(sig)
        recorder(self, tuple(args), None)
        return None

    D.CUDADispatcher.call = call
    D.CUDADispatcher.configure = configure
    D.CUDADispatcher.compile = compile_eager
    D._LaunchConfiguration.__call__ = lambda self, *args: self.dispatcher.call(args, self)


_PTXAS_RE = {
    "regs": re.compile(r"[Uu]sed (\d+) registers"),
    "smem": re.compile(r"(\d+) bytes smem"),
    "stack": re.compile(r"(\d+) bytes stack frame"),
    "spill_stores": re.compile(r"(\d+) bytes spill stores"),
    "spill_loads": re.compile(r"(\d+) bytes spill loads"),
}


def _parse_ptxas(text):
    info = {}
    for k, rx in _PTXAS_RE.items():
        m = rx.findall(text)
        if m:
            info[k] = max(int(x) for x in m)
    return info


def _nvjitlink(ptx, cc):
    """Assemble with nvJitLink (same CUDA release as NVVM, from the cu13 wheels): ``(info, error)``;
    ``(None, None)`` when nvJitLink is not available."""
    try:
        from cuda.bindings import nvjitlink as nj
    except Exception:
        return None, None
    try:
        h = nj.create(2, [f"-arch=sm_{cc[0]}{cc[1]}", "-verbose"])
    except Exception:
        return None, None
    try:
        data = ptx.encode()
        try:
            nj.add_data(h, nj.InputType.PTX, data, len(data), "kernel.ptx")
            nj.complete(h)
        except Exception as e:
            try:
                n = nj.get_error_log_size(h)
                buf = bytearray(n)
                nj.get_error_log(h, buf)
                msg = buf.decode(errors="replace").strip("\x00 \n")
            except Exception:
                msg = ""
            return None, (msg or str(e))
        n = nj.get_info_log_size(h)
        buf = bytearray(n)
        nj.get_info_log(h, buf)
        return _parse_ptxas(buf.decode(errors="replace")), None
    finally:
        try:
            nj.destroy(h)
        except Exception:
            pass


def _ptxas(ptxas, ptx, cc):
    """``(info, error, tool)``; ``info`` None and ``error`` None: no assembler usable here."""
    info, err = _nvjitlink(ptx, cc)
    if info is not None or err is not None:
        return info, err, "nvJitLink"
    if not ptxas:
        return None, None, None
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        p = subprocess.run([ptxas, f"-arch=sm_{cc[0]}{cc[1]}", "-v", src, "-o", os.path.join(d, "k.cubin")],
                           capture_output=True, text=True, timeout=120)
    text = p.stdout + p.stderr
    if p.returncode != 0:
        if "Unsupported .version" in text:  # ptxas older than NVVM: a tool mismatch, not a kernel bug
            return None, None, None
        return None, text.strip(), "ptxas"
    return _parse_ptxas(text), None, "ptxas"


def _short(e: BaseException, limit=1500) -> str:
    s = f"{type(e).__name__}: {e}"
    return s if len(s) <= limit else s[:limit] + " ..."


def _kernel_lines(pyfunc):
    try:
        code = pyfunc.__code__
        return code.co_filename, code.co_firstlineno
    except Exception:
        return None, None


def worker(inp: str, outp: str) -> None:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
    import numpy as np
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    from numba import cuda  # real numba.cuda, before any backend module can ask for the simulator
    from numba.cuda.core import config
    assert not config.ENABLE_CUDASIM

    with open(inp) as f:
        job = json.load(f)
    cc = tuple(job["cc"])
    ptxas = find_ptxas() if job.get("ptxas", True) else None
    launches: list = []
    keep: list = []

    def recorder(disp, argtypes, lc):
        launches.append((disp, argtypes, lc))
        keep.append(disp)

    _install_fakes(cc, recorder)
    from refconv import registry
    from refconv.problem import Problem

    compiled: dict = {}

    def compile_one(disp, argtypes):
        key = (id(disp), argtypes)
        if key in compiled:
            return compiled[key]
        opts = {k: v for k, v in disp.targetoptions.items()
                if k in ("fastmath", "lineinfo", "debug", "opt", "launch_bounds")}
        t0 = time.perf_counter()
        try:
            ptx, _ = cuda.compile_ptx(disp.py_func, argtypes, cc=cc, **opts)
        except Exception as e:
            res = {"error": _short(e), "stage": "numba/NVVM"}
        else:
            res = {"ptx_bytes": len(ptx)}
            if job.get("ptxas", True):
                info, err, tool = _ptxas(ptxas, ptx, cc)
                if err:
                    res.update(error=err[-1500:], stage=tool)
                elif info is not None:
                    res.update(info, assembler=tool)
        res["seconds"] = round(time.perf_counter() - t0, 3)
        compiled[key] = res
        return res

    out: dict = {}
    for task in job["tasks"]:
        vid = task["id"]
        fs = out.setdefault(vid, [])
        try:
            _check_task(task, vid, fs, cuda, cc, ptxas, job, launches, compile_one, registry, Problem)
        except Exception as e:  # a bug in the check itself: reported, never a pass
            fs.append(_finding("compile-check-failed", f"the compile check failed on this variant: "
                                                       f"{_short(e)}", vid,
                               traceback="".join(traceback.format_exception(e))[-3000:]))
    with open(outp, "w") as f:
        json.dump(out, f, default=str)


def _check_task(task, vid, fs, cuda, cc, ptxas, job, launches, compile_one, registry, Problem):
    import numpy as np
    if True:
        try:
            if task.get("ref"):
                import importlib
                mod = importlib.import_module(task["ref"][0])
                run = mod
                for part in task["ref"][1].split("."):
                    run = getattr(run, part)
            else:
                run = registry.get(vid).run
        except Exception as e:
            fs.append(_finding("compile-check-failed", f"cannot load the variant in a non-simulator "
                                                       f"process: {_short(e)}", vid))
            return
        infos: dict = {}
        errors: dict = {}
        for params, desc in task["specs"]:
            spec = {"params": params, "problem": desc}
            launches.clear()
            trace_err = None
            try:
                from refconv.checking import call_run, scratch_output
                problem = Problem.parse(desc)
                out = scratch_output(problem, task.get("writes", "all"), task.get("output", "array"))
                call_run(run, problem, out, params)
            except Exception as e:  # the fake device returns garbage: later host code may fail
                trace_err = e
            if not launches:
                fs.append(_finding(
                    "compile-check-failed",
                    f"no kernel launch recorded for params {params} on {desc}"
                    + (f": the variant raised {_short(trace_err)}" if trace_err else ""), vid,
                    specialisation=spec,
                    traceback="".join(traceback.format_exception(trace_err))[-3000:] if trace_err else None))
                continue
            for disp, argtypes, lc in launches:
                name = disp.py_func.__qualname__
                file, line = _kernel_lines(disp.py_func)
                res = compile_one(disp, argtypes)
                sig = f"({', '.join(str(a) for a in argtypes)})"
                where = dict(kernel=name, file=file, line=line, signature=sig, cc=f"sm_{cc[0]}{cc[1]}",
                             specialisation=spec)
                if "error" in res:
                    k = (name, res["error"][:200])
                    if k not in errors:
                        errors[k] = _finding(
                            "compile-error", f"kernel {name}{sig} does not compile for sm_{cc[0]}{cc[1]} "
                            f"({res['stage']}) with params {params}: {res['error']}", vid, stage=res["stage"],
                            **where)
                    continue
                if lc is not None:
                    threads = int(np.prod(lc.blockdim))
                    why = None
                    if threads > 1024:
                        why = f"block {lc.blockdim} has {threads} threads > 1024"
                    elif "regs" in res and res["regs"] * threads > 65536:
                        why = (f"{res['regs']} registers x {threads} threads = {res['regs'] * threads} "
                               f"> 65536 registers per block (too many resources requested for launch)")
                    elif res.get("smem", 0) + int(lc.sharedmem or 0) > 49152:
                        why = (f"{res.get('smem', 0)} B static + {lc.sharedmem} B dynamic shared memory "
                               f"> 48 KiB (numba does not opt in to more)")
                    if why:
                        k = ("launch", name, why)
                        if k not in errors:
                            errors[k] = _finding("launch-error", f"kernel {name}: {why} (params {params})",
                                                 vid, griddim=list(lc.griddim), blockdim=list(lc.blockdim),
                                                 sharedmem=int(lc.sharedmem or 0), **where)
                ik = (name, json.dumps(params, sort_keys=True, default=str), sig)
                if ik not in infos:
                    extra = ""
                    if "regs" in res:
                        extra = (f": {res['regs']} registers, {res.get('smem', 0)} B static smem, "
                                 f"{res.get('spill_stores', 0)} B spill stores, {res.get('spill_loads', 0)} B "
                                 f"spill loads, {res.get('stack', 0)} B stack")
                    infos[ik] = _finding("compile-info", f"kernel {name}{sig} params {params} compiled for "
                                         f"sm_{cc[0]}{cc[1]}{extra}", vid,
                                         **{k: res[k] for k in ("regs", "smem", "spill_stores", "spill_loads",
                                                                "stack", "ptx_bytes", "seconds", "assembler") if k in res},
                                         **where)
        fs.extend(errors.values())
        fs.extend(infos.values())


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3])
    else:
        print("usage: python -m refconv.backends.numba_cuda.compile_check --worker IN.json OUT.json",
              file=sys.stderr)
        sys.exit(2)
