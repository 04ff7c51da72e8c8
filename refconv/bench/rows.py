"""One row of ``refconv bench``: the spec, a variant, a peer or the copy floor on one problem,
checked (variants) and timed; and the statistics and copy bandwidth the rows share.

The functions here compute a row in whatever process calls them: in the bench's worker process
(:mod:`refconv.bench.worker`, the default: a hang or crash costs only that row) or in the bench's
own process (``--timeout 0``).  They take a :class:`~refconv.bench.options.RowOptions`, never the command line, and
return a :class:`~refconv.bench.row.Row`.
"""
from __future__ import annotations

import fnmatch
import statistics
import time

from .. import peers as peers_mod
from .. import timing
from . import roofline
from .options import RowOptions
from . import problems
from .row import Row
from ..console import console
from ..problem import Problem
from ..session import Session


def fits(variant, problem: Problem) -> str | None:
    """Why ``problem`` is outside ``variant``'s declared support, or None."""
    from ..variant import Range
    for k, dom in variant.supports.items():
        if k.startswith("fill."):
            continue
        if k not in problem.dims and k not in problem.options:
            continue
        val = problem.dims.get(k, problem.options.get(k))
        if isinstance(dom, Range):
            if val not in dom:
                return f"{k}={val} outside {dom}"
        elif val not in tuple(dom):
            return f"{k}={val!r} not in {tuple(dom)}"
    return None


# ----------------------------------------------------------------------------- statistics

def summary(xs: list[float]) -> dict | None:
    """Median, quartiles, min, max and count of ``xs`` (None when empty)."""
    if not xs:
        return None
    s = sorted(xs)
    if len(s) >= 2:
        q1, _, q3 = statistics.quantiles(s, n=4, method="inclusive")
    else:
        q1 = q3 = s[0]
    return {"median": statistics.median(s), "q1": q1, "q3": q3, "min": s[0], "max": s[-1], "n": len(s)}


def measure(run, repeat: int, flush_bytes: int = 0, budget_s: float | None = None) -> dict:
    """Time ``run()``: ``repeat`` calls each inside a :func:`timing.collect` (``flush_bytes``: the
    L2 flush before each launch) give the kernel time (sum of the recorded intervals; None when
    none were recorded); the end-to-end time is the host clock around each call.  When intervals
    were recorded with a flush, the end-to-end times come from as many further plain calls
    (no events, no flush: what a user's call costs).  ``budget_s`` (``--budget``): stop starting
    calls once the timed calls have taken that long in all (at least one call; each summary's
    ``n`` says how many ran).  Returns both summaries, whether any interval was simulated, and
    ``launches``: the most intervals one call recorded (None when none were)."""
    kern, e2e, simulated, caveats, launches = [], [], False, {}, []
    spent = 0.0
    for _ in range(repeat):
        with timing.collect(flush_bytes) as iv:
            t0 = time.perf_counter()
            run()
            e2e.append(time.perf_counter() - t0)
        spent += e2e[-1]
        simulated |= iv.simulated
        k = iv.total()
        if k is not None:
            kern.append(k)
            launches.append(len(iv))
        for why, n in iv.caveats().items():
            caveats[why] = caveats.get(why, 0) + n
        if budget_s is not None and spent >= budget_s:
            break
    if kern and flush_bytes and not simulated:
        runs, e2e = len(e2e), []
        for _ in range(runs):
            t0 = time.perf_counter()
            run()
            e2e.append(time.perf_counter() - t0)
    out = {"kernel_s": summary(kern), "e2e_s": summary(e2e), "simulated": simulated,
           "launches": max(launches) if launches else None}
    if caveats:  # the backend says some intervals may hold more than the device's work
        out["caveats"] = caveats
    return out


def _status(m: dict) -> str:
    """``ok``, or ``ok`` with the backend's caveats about the intervals and how many they concern."""
    cav = m.get("caveats") or {}
    return "ok" + "".join(f"; caveat ({n} intervals): {why}" for why, n in cav.items())


# ----------------------------------------------------------------------------- the run

def backend_hooks(name: str):
    from .. import registry
    b = registry.backends().get(name)
    return getattr(b, "bench", None)


class Bandwidth:
    """Copy bandwidth per device, measured once per run (bytes/s, with how it was measured)."""

    def __init__(self, nbytes: int, repeat: int, flush_bytes: int = 0):
        self.nbytes, self.repeat, self.flush_bytes, self.cache = nbytes, repeat, flush_bytes, {}
        self.device_sources: list = []       # (key, make) of every GPU copy this run can measure
        self.empty: dict = {}                # key -> the empty-kernel hook of the same source

    def device_best(self, key: str, make) -> dict | None:
        """The hardware limit for a GPU row: the fastest device-to-device copy measured in this
        run over every GPU source (the backends' and the GPU peers'), so one backend's slower
        copy path (one backend's host API copy may reach half of what another's does on the same
        GPU) does not inflate its own kernels' roofline.  Falls back to ``key``."""
        got = [self.get(k, m) for k, m in [(key, make)] + [x for x in self.device_sources if x[0] != key]]
        ok = [g for g in got if g and g.get("bytes_per_s") and not g.get("simulated")]
        return max(ok, key=lambda g: g["bytes_per_s"]) if ok else self.get(key, make)

    def get(self, key: str, make) -> dict | None:
        if key not in self.cache:
            try:
                run = make(self.nbytes)
            except Exception as e:
                self.cache[key] = {"source": key, "error": f"{type(e).__name__}: {e}"}
                return self.cache[key]
            if run is None:
                self.cache[key] = None
                return None
            run()  # warm-up
            m = measure(run, self.repeat)
            t = (m["kernel_s"] or m["e2e_s"])["median"]
            self.cache[key] = {"source": key, "bytes": self.nbytes, "seconds": t, "simulated": m["simulated"],
                               "bytes_per_s": (2 * self.nbytes / t) if t > 0 else None}
            if not m["simulated"]:
                try:
                    self.cache[key]["fixed_s"] = self._fixed_seconds(key)
                except Exception as e:  # noqa: BLE001 - the bandwidth stands without it; the report says why
                    self.cache[key].update(fixed_s=None, fixed_error=f"{type(e).__name__}: {e}"[:300])
        return self.cache[key]

    def _fixed_seconds(self, key: str) -> float | None:
        """The median time of the empty kernel registered for ``key`` (:attr:`empty`, a backend's
        ``BenchHooks.launch``) launched through its timed path with this run's flush: what every
        interval of that source carries whatever its work (launch, events, the GPU's start and
        drain; a few microseconds on a GPU).  None when there is no
        such hook; what the hook raises propagates."""
        make = self.empty.get(key)
        if make is None:
            return None
        run = make()
        run()
        m = measure(run, self.repeat, self.flush_bytes)
        return (m["kernel_s"] or m["e2e_s"])["median"]


def _main_seconds(row: Row) -> float | None:
    """The time the ratio and roofline use: the kernel median, else the end-to-end median."""
    st = row.stat
    if not st or row.simulated or st["median"] <= 0:
        return None
    return st["median"]


def _finish_row(row: Row, work, bw, timer=None) -> Row:
    """Set the main time, what took it (``timer``: given, else device events when intervals were
    recorded, host clock otherwise), the roofline percentage and the bandwidth source."""
    t = row.median_s = _main_seconds(row)
    row.timer = "simulated" if row.simulated else timer or ("device events" if row.kernel_s else "host clock")
    bps = (bw or {}).get("bytes_per_s")
    row.copy = (bw or {}).get("source")
    ok = t and bps and not bw.get("simulated")
    row.roofline_pct = roofline.percent_of_roofline(work, bps, t) if ok else None
    return row


def spec_row(problem, opts: RowOptions, work, bandwidth):
    """The NumPy spec timed with the host clock."""
    args, kwargs = problem.spec_args()
    fn = problem.record.spec

    def spec_run():
        t0 = time.perf_counter()
        fn(*args, **kwargs)
        dt = time.perf_counter() - t0
        timing.record(lambda: dt, "spec")
    m = measure(spec_run, opts.repeat, budget_s=opts.budget)
    row = Row("spec", problem.op, "ok", library="refconv.specs (NumPy)").timed(m)
    return _finish_row(row, work, bandwidth.get("host", timing.host_copy), "host clock")


#: called with what a row is doing as it starts each phase (the bench's worker sends it to the
#: parent, whose time limit then starts again and whose ``hang`` status names the phase)
_phase_hook = None


def set_phase_hook(hook) -> None:
    """Have :func:`phase` call ``hook(text)`` (None: nothing)."""
    global _phase_hook
    _phase_hook = hook


def phase(text: str) -> None:
    """Say that the current row now does ``text`` (e.g. ``checking v``)."""
    if _phase_hook is not None:
        _phase_hook(text)


def variant_row(v, name, problem, opts: RowOptions, work, bandwidth, skip, only, big, spec):
    """Check ``v`` on ``problem`` (also its warm-up), then time it; or say why not.  ``spec()``
    gives the problem's acceptance, computed once for all variants."""
    from ..checking import check_example
    from ..variant import run_variant
    why = Session.availability(v) or fits(v, problem) or skip
    if not why and only and not fnmatch.fnmatchcase(v.name, only):
        why = f"this preset runs only variants named {only!r}"
    hooks = backend_hooks(v.backend)
    sim = hooks.simulated() if (hooks and not why) else None
    if not why and big and sim:
        why = f"{sim}; {name} is sized for a GPU"
    if why:
        return Row.of_variant(v.id, f"skipped: {why}")
    params = v.default_params()
    try:
        # an op checked by row blocks (kron) never needs the whole spec result: check_example
        # computes the spec's rows itself
        if problem.record.rows is None:
            phase("computing the spec's result")
        acc = spec() if problem.record.rows is None else None
    except (ValueError, TypeError) as e:
        return Row.of_variant(v.id, f"error: the spec rejects this problem: {e}")
    kept: dict = {}
    phase(f"checking {v.id} (its first run)")
    with console.status(f"{name}: checking {v.id} (also its warm-up run)"):
        first = check_example(v, problem, params, acc, keep=kept)
    if first.status != "pass":  # a wrong kernel's time is not a result
        return Row.of_variant(v.id, f"{first.status}: {first.message[:200]}")
    # the timed runs write into the checked output buffer again (its layout is the variant's)
    try:
        phase(f"timing {v.id}")
        with console.status(f"{name}: timing {v.id}"):
            # on a simulated device one timed run exercises the timing; more would mean nothing
            out = kept.get("out")
            fresh = out if callable(out) else (lambda: out)   # a streamed variant gets a fresh sink per run
            m = measure(lambda: run_variant(v, problem, fresh(), params), 1 if sim else opts.repeat,
                        opts.flush_bytes, opts.budget)
    except Exception as e:
        return Row.of_variant(v.id, f"error: {type(e).__name__}: {e}")
    if m["simulated"]:
        m["kernel_s"] = None  # a simulator's event times are not times
    bw = None
    if m["kernel_s"] and hooks and hooks.copy:
        bw = bandwidth.device_best(f"{v.backend} device copy", hooks.copy)
    elif not m["kernel_s"]:
        bw = bandwidth.get("host", timing.host_copy)
    return _finish_row(Row.of_variant(v.id, _status(m), params=params).timed(m), work, bw)


def copy_nbytes(work) -> int:
    """The size of the copy that stands for ``work``: ``ceil(work.bytes / 2)``.  A copy reads and
    writes its size, so it moves the problem's input plus output bytes (one more when odd)."""
    return -(-int(work.bytes) // 2)


def no_device_copy(backends) -> str:
    """Why no device copy can be timed with ``backends`` (the run's selected backends): each one's
    simulator (``BenchHooks.simulated``) or its lack of a ``BenchHooks.copy``."""
    why = []
    for b in sorted(backends):
        hooks = backend_hooks(b)
        if hooks is None or hooks.copy is None:
            why.append(f"{b} has no device copy (Backend.bench.copy)")
            continue
        try:
            sim = hooks.simulated()
        except Exception as e:  # noqa: BLE001 - a probe never stops the bench; the row says why
            sim = f"{b}: simulated() failed: {type(e).__name__}: {e}"
        why.append(sim or f"{b} offers no device copy here")
    return "no GPU device copy here: " + ("; ".join(why) or "no backend selected")


def copy_row(problem, opts: RowOptions, work, bandwidth, backends) -> Row:
    """The problem's floor: a device-to-device copy of :func:`copy_nbytes` bytes (so it moves the
    problem's input plus output bytes), through every device copy path of the run
    (``bandwidth.device_sources``: each GPU backend's ``BenchHooks.copy`` and the GPU peers'), each
    warmed up once, then timed as a variant is (:func:`measure`: ``--repeat`` runs, the L2 flush,
    the stream hold where the path has one, median and IQR).  The row's times are the fastest
    path's (``library`` names it; ``sources`` has every path's median or why it did not run).
    Skipped with the reason where no GPU path exists (CPU backends, simulators)."""
    row = Row("copy", problem.op, "", bytes=int(work.bytes))
    if not bandwidth.device_sources:
        row.status = f"skipped: {no_device_copy(backends)}"
        return row
    n, got, sources = copy_nbytes(work), {}, {}
    host_have = problems.available_host_bytes()
    if host_have is not None and n > host_have:    # a path may fill its source from the host (kron-360)
        row.status = (f"skipped: the copy's source of {n / 1e9:.3g} GB may be filled from the host, "
                      f"{host_have / 1e9:.3g} GB of host memory available")
        return row
    for key, make in bandwidth.device_sources:
        phase(f"timing the device copy of {n} bytes ({key})")
        run = None
        try:
            run = make(n)
            if run is None:           # the path's device is missing (the peers without a CUDA torch)
                continue
            run()                     # warm-up (a buffer's first use, the flush kernel's compile)
            m = measure(run, opts.repeat, opts.flush_bytes, opts.budget)
        except Exception as e:  # noqa: BLE001 - out of device memory, a driver error: this path's reason
            sources[key] = f"{type(e).__name__}: {e}"[:300]
            continue
        finally:
            del run
            _release()
        if m["simulated"] or not m["kernel_s"]:
            sources[key] = "simulated: no device time" if m["simulated"] else "recorded no device interval"
            continue
        got[key], sources[key] = m, m["kernel_s"]["median"]
    row.sources = sources
    if not got:
        why = "; ".join(f"{k}: {v}" for k, v in sources.items())
        row.status = (f"skipped: no device copy could be timed: {why}" if why
                      else f"skipped: {no_device_copy(backends)}")
        return row
    best = min(got, key=lambda k: got[k]["kernel_s"]["median"])
    row.library, row.status = best, _status(got[best])
    bw = bandwidth.device_best(best, dict(bandwidth.device_sources)[best])
    return _finish_row(row.timed(got[best]), work, bw, "device events")


def _release() -> None:
    """Free the copy's device buffers before the next path allocates its own (a large problem's
    copy takes its input plus output bytes of device memory): collect them, and have the peers'
    libraries hand back what they cache."""
    import gc
    gc.collect()
    peers_mod.release()


def peer_row(p, why, name, problem, opts: RowOptions, work, bandwidth, host_have):
    """Prepare, warm up (a library's planning and autotuning happen there, untimed) and time one
    peer, with the names of the kernels it launched where the library says (``kernels``); or say
    why not."""
    row = Row("peer", problem.op, "", name=p.name, library=p.library)
    if not why and p.device == "cpu" and host_have is not None and 2 * work.bytes > host_have:
        why = f"needs about {2 * work.bytes / 1e9:.0f} GB of host memory, {host_have / 1e9:.0f} GB available"
    if why:
        row.status = f"skipped: {why}"
        return row
    run = None
    try:
        with console.status(f"{name}: timing peer {p.name}"):
            run = p.prepare(problem)
            run()  # warm-up (library plans, autotuning, caches)
            m = measure(run, opts.repeat, opts.flush_bytes, opts.budget)
            kernels = getattr(run, "kernels", None)
            if kernels is not None and kernels():       # what the library launched (its algorithm)
                row.kernels = kernels()
    except Exception as e:
        row.status = f"skipped: {type(e).__name__}: {e}"
        return row
    finally:
        del run                    # the peer's tensors, then the memory its library keeps cached
        if p.device == "gpu":
            peers_mod.release()
    gpu = p.device == "gpu"
    bw = (bandwidth.device_best("gpu peers device copy", peers_mod.gpu_copy) if gpu
          else bandwidth.get("host", timing.host_copy))
    row.status = _status(m)
    return _finish_row(row.timed(m), work, bw, "device events" if gpu else "host clock")

