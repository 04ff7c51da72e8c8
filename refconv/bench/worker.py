"""Where ``refconv bench`` computes its rows: in a worker process, one row at a time, each under a
time limit, so that a kernel that hangs, kills its process or raises costs only its own row.

* **A row is a task** (:class:`RowTask`): the spec, one variant, or one peer on one problem (sent
  as its one-line descriptor), or the listing of an op's peers.  :class:`Rows` computes tasks in
  the process that holds it, keeping what the rows of a run share: the copy bandwidths measured
  so far and the current problem's acceptance (the spec's result, computed once for all its
  variants).
* **The worker** (:class:`WorkerRows`, the default): the check's worker process (its own process
  group, the parent's backend options: :mod:`refconv.worker`) holding a :class:`Rows`.
  A row whose phase (computing the spec's result, checking the variant's first run, timing it:
  :func:`refconv.bench.rows.phase`) runs past ``timeout`` seconds, judged as the check judges an
  example (on the worker's CPU time; one blocked without using CPU at about 2 × the limit of wall
  time), is a ``hang: ... while <phase>`` row and the worker is killed with everything it started; a worker that dies is a ``crash: worker died (...)`` row; either way the
  next row gets a fresh worker (which measures the copy bandwidth again when it needs it).  A
  variant that raises is an ``error: ...`` row, as before.
* ``--timeout 0`` computes the rows in the bench's own process (:class:`Rows` directly): no limit,
  and backends registered in-process (tests) are seen.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import peers as peers_mod
from . import roofline
from .options import RowOptions
from .row import Row
from .rows import Bandwidth, backend_hooks, copy_row, peer_row, spec_row, variant_row
from ..problem import Problem
from ..procs import IDLE_LIMIT, worker_env
from ..worker import Ended, Worker


@dataclass(frozen=True)
class RowTask:
    """One row to compute.  ``kind``: ``spec``, ``copy`` (the problem's device copy floor), ``variant``
    (``target`` = variant id), ``peer``
    (``target`` = peer name, ``skip`` = why it cannot run, from the listing) or ``peers`` (list the
    peers of the problem's op that ``--peers`` selects).  ``name``: the problem's name; ``problem``:
    its descriptor; ``skip``: a reason the row is skipped (host memory); ``only``/``big``: the
    preset's name filter and whether it is GPU-sized; ``host_have``: available host bytes."""

    kind: str
    name: str
    problem: str
    target: str = ""
    skip: str | None = None
    only: str | None = None
    big: bool = False
    host_have: int | None = None
    peers: str = "auto"

    def failed(self, status: str) -> Row:
        """This task's row, not computed: ``status`` says why (a hang, a crash, an error); for
        ``peers``, each peer the listing would have given, skipped with that reason."""
        op = Problem.parse(self.problem).op
        if self.kind == "variant":
            return Row.of_variant(self.target, status)
        if self.kind == "peer":
            lib = next((p.library for p in peers_mod.all_peers() if p.op == op and p.name == self.target), "")
            return Row("peer", op, status, name=self.target, library=lib)
        if self.kind == "peers":   # the listing itself failed: each peer it would list, skipped with why
            return [(p.name, f"not listed: {status}") for p in peers_mod.named(op, self.peers)]
        return Row(self.kind, op, status)


def _peer(op: str, name: str):
    for p in peers_mod.all_peers():
        if p.op == op and p.name == name:
            return p
    raise ValueError(f"no peer {name!r} for {op}; peers of {op}: "
                     f"{', '.join(p.name for p in peers_mod.all_peers() if p.op == op)}")


class Rows:
    """Computes :class:`RowTask` s in this process (see the module docstring)."""

    def __init__(self, opts: RowOptions, backends: list[str] = (), peers: str = "auto"):
        self.opts, self.backends = opts, sorted(backends)
        self.bandwidth = Bandwidth(opts.copy_bytes, opts.repeat, opts.flush_bytes)
        for b in sorted(backends):
            hooks = backend_hooks(b)
            if hooks and hooks.copy and not (hooks.simulated and hooks.simulated()):
                self.bandwidth.device_sources.append((f"{b} device copy", hooks.copy))
            if hooks and hooks.launch:
                self.bandwidth.empty[f"{b} device copy"] = hooks.launch
        if self.bandwidth.device_sources and peers != "none":
            self.bandwidth.device_sources.append(("gpu peers device copy", peers_mod.gpu_copy))
            self.bandwidth.empty["gpu peers device copy"] = peers_mod.gpu_empty
        self._acc: tuple = (None, None)        # (descriptor, the problem's Acceptance)

    def _spec_of(self, problem: Problem):
        def spec():
            key = problem.descriptor()
            if self._acc[0] != key:
                import numpy as np
                from ..checking import acceptance_for
                self._acc = (None, None)         # the previous problem's result goes first
                with np.errstate(all="ignore"):
                    self._acc = (key, acceptance_for(problem))
            return self._acc[1]
        return spec

    def __call__(self, task: RowTask):
        """The :class:`Row` of ``task``, or for ``peers`` a list of ``(name, why)``."""
        problem = Problem.parse(task.problem)
        if task.kind == "peers":
            return [(p.name, why) for p, why in peers_mod.for_op(problem.op, task.peers)]
        work = roofline.work(problem)
        if task.kind == "spec":
            return spec_row(problem, self.opts, work, self.bandwidth)
        if task.kind == "copy":
            return copy_row(problem, self.opts, work, self.bandwidth, self.backends)
        if task.kind == "variant":
            from .. import registry
            return variant_row(registry.get(task.target), task.name, problem, self.opts, work, self.bandwidth,
                               task.skip, task.only, task.big, self._spec_of(problem))
        if task.kind == "peer":
            return peer_row(_peer(problem.op, task.target), task.skip, task.name, problem, self.opts, work,
                            self.bandwidth, task.host_have)
        raise ValueError(f"row kind {task.kind!r} not accepted; accepted: spec, copy, variant, peer, peers")

    def measured(self) -> dict:
        """The copy bandwidths measured so far (key -> measurement), for the report."""
        return self.bandwidth.cache

    def close(self) -> None:
        self._acc = (None, None)


def _rower(send, opts: RowOptions, backends: list, peers: str):
    """The worker's ``setup`` (:mod:`refconv.worker`): a :class:`Rows` that answers a task with
    ``("row", out, bandwidths)``, saying ``("phase", text)`` as a row enters each phase."""
    from ..console import console
    from .rows import set_phase_hook
    console.quiet = True                      # the parent shows what runs
    rows = Rows(opts, backends, peers)
    set_phase_hook(lambda text: send(("phase", text)))

    def row(task: RowTask):
        try:
            out = rows(task)
        except Exception as e:  # refconv's own code or a broken declaration: this row's error
            out = task.failed(f"error: {type(e).__name__}: {e}")
        return ("row", out, rows.bandwidth.cache)
    return row


class WorkerRows:
    """Computes :class:`RowTask` s in a worker process under a per-row time limit (module docstring)."""

    def __init__(self, backend_options: dict, opts: RowOptions, timeout: float, backends: list[str] = (),
                 peers: str = "auto"):
        self.args = (opts, sorted(backends), peers)
        self.options = dict(backend_options=backend_options, env=worker_env())
        self.timeout = float(timeout)
        self.worker: Worker | None = None
        self._bandwidth: dict = {}

    def _failed(self, task: RowTask, status: str) -> Row:
        self.kill()
        return task.failed(status)

    def __call__(self, task: RowTask):
        if self.worker is None:
            start = max(self.timeout, IDLE_LIMIT)
            self.worker = Worker(_rower, *self.args, **self.options, start_limit=start,
                                 start_says=f"the worker did not start within {start:g}s")
            got = self.worker.wait()
            if isinstance(got, Ended):
                return self._failed(task, f"error: {got.reason}")
        # each phase gets the whole limit; listing the peers imports their libraries, as a start-up does
        limit = max(self.timeout, IDLE_LIMIT) if task.kind == "peers" else self.timeout
        self.worker.send(task)
        doing = ""
        while True:
            self.worker.example(limit, lambda over, _w=doing: (
                f"hang: the row ran longer than {over}{f' while {_w}' if _w else ''} (--timeout; killed)"))
            got = self.worker.wait()
            if isinstance(got, tuple) and got[0] == "phase":     # the row starts a phase (rows.phase)
                doing = got[1]
                continue
            break
        if isinstance(got, Ended):
            return self._failed(task, got.reason)
        _, out, bw = got
        self._bandwidth.update({k: v for k, v in bw.items() if v is not None or k not in self._bandwidth})
        return out

    def measured(self) -> dict:
        """Every copy bandwidth a worker of this run measured (key -> measurement), for the report."""
        return self._bandwidth

    def kill(self) -> None:
        if self.worker is not None:
            self.worker.kill()
        self.worker = None

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
        self.worker = None
