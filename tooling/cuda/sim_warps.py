"""Warp-level operations for numba-cuda's CUDA simulator, on refconv's block scheduler.

The simulator runs each CUDA thread as a Python thread and has no warp-level operations at all
(``cuda.shfl_down_sync`` is an ``AttributeError`` inside a simulated kernel).  This module gives
them their CUDA meaning on :mod:`.sim_scheduler`, which knows every thread of the block:

* **Lanes and warps.** A thread's lane is its linear ``threadIdx`` (x fastest) modulo 32, its warp
  that index divided by 32, as on the GPU; the last warp of a block whose size is not a multiple
  of 32 has fewer lanes.
* **Rendezvous.** A lane calling a ``*_sync`` operation (shuffles, votes, ``match_*_sync``,
  ``syncwarp``) waits until every lane its mask names has arrived at a warp operation -- the masks
  of the lanes that arrive are merged, so lanes whose masks name each other meet as one group --
  then the group exchanges values and every lane continues.  A lane that the mask names but
  that does not exist (beyond ``blockDim``) or has exited is not waited for.
* **Shuffles** (``shfl_sync`` / ``shfl_up_sync`` / ``shfl_down_sync`` / ``shfl_xor_sync``, width
  32 as numba has it): the source lane is ``src & 31``, ``lane - delta``, ``lane + delta`` or
  ``lane ^ lane_mask``; a source outside the warp, or one that is not in the group, gives the
  caller its own value (the GPU leaves the latter undefined).
* **Votes** (``all_sync`` / ``any_sync`` / ``eq_sync`` / ``ballot_sync``, ``vote_sync_intrinsic``)
  and **matches** (``match_any_sync`` / ``match_all_sync``) see the lanes of the caller's mask
  that are in the group.  ``ballot_sync`` and the match masks are ``int32`` as numba types them.
* ``activemask()`` returns the lanes of the warp that reach the same ``activemask()`` call (the
  same source line): it is resolved once every live thread of the block is blocked (at a barrier,
  at a warp operation or at this call), so lanes in a divergent branch see only each other.
  ``lanemask_lt()`` needs no rendezvous.
* **Misuse** -- a mask naming a lane that is absent or has exited, a calling lane missing from its
  own mask, lanes of one group at different operations or with different masks, a named lane
  waiting at ``syncthreads()`` instead (a deadlock on the GPU; here the group goes on without it)
  -- is reported to the block's ``on_warp`` callback (the sanitizer's ``warp-mask`` finding) and
  otherwise tolerated, as the simulator tolerates an early exit before a barrier.
* **Memory ordering.** ``syncwarp`` stamps the lanes of its group (``t._wsync``, ``t._wsync_mask``)
  so that the sanitizer's race detector orders shared accesses of lanes of one warp separated by
  a ``syncwarp`` that both took part in; shuffles and votes exchange registers, not memory, and
  order nothing (CUDA guarantees memory ordering among lanes only through ``__syncwarp``).

:class:`WarpState` is created by ``sim_scheduler.run_block`` for each block: a lane that waits
hands control back to the block's scheduler, and the lanes of a completed group are woken
through the scheduler's ``wake``.  :func:`install` puts the operations on the simulator's
``FakeCUDAModule`` (and so on the sanitizer's module, its subclass).
"""
from __future__ import annotations

import sys

import numpy as np

from .sim_current import current_thread

WARP = 32
FULL = 0xFFFFFFFF
SYNC_KINDS = ("shfl", "vote", "match_any", "match_all", "syncwarp")
_SHFL_MODES = {0: "idx", 1: "up", 2: "down", 3: "bfly"}
_VOTE_MODES = {0: "all", 1: "any", 2: "eq", 3: "ballot"}
#: user-facing name of each (kind, mode), for messages
_NAMES = {("shfl", "idx"): "shfl_sync", ("shfl", "up"): "shfl_up_sync", ("shfl", "down"): "shfl_down_sync",
          ("shfl", "bfly"): "shfl_xor_sync", ("vote", "all"): "all_sync", ("vote", "any"): "any_sync",
          ("vote", "eq"): "eq_sync", ("vote", "ballot"): "ballot_sync", ("match_any", None): "match_any_sync",
          ("match_all", None): "match_all_sync", ("syncwarp", None): "syncwarp",
          ("activemask", None): "activemask"}


def _bits(m: int):
    j = 0
    while m:
        if m & 1:
            yield j
        m >>= 1
        j += 1


def _i32(m: int) -> np.int32:
    """A 32-bit lane mask as numba's ``int32`` result type (lane 31 set: negative)."""
    return np.int32(m - (1 << 32) if m & 0x80000000 else m)


class _Arrival:
    """One lane waiting at one warp operation."""

    __slots__ = ("thread", "lane", "kind", "mode", "mask", "value", "arg", "arg2", "site", "done",
                 "result")

    def __init__(self, thread, lane, kind, mode, mask, value, arg, arg2, site):
        self.thread, self.lane, self.kind, self.mode = thread, lane, kind, mode
        self.mask, self.value, self.arg, self.arg2, self.site = mask, value, arg, arg2, site
        self.done, self.result = False, None

    @property
    def name(self):
        return _NAMES.get((self.kind, self.mode), self.kind)


class WarpState:
    """The warp-level state of one block: who waits at which warp operation.  ``wake(t)`` tells
    the block's scheduler that thread ``t`` can move again."""

    def __init__(self, nthreads: int, wake, on_warp=None):
        self.wake = wake
        self.n = nthreads
        self.on_warp = on_warp
        self.pending: dict = {}     # warp -> {lane: _Arrival}
        self.arrived: dict = {}     # warp -> bit mask of lanes pending at a *_sync operation
        self.exited: dict = {}      # warp -> bit mask of lanes that have finished
        self.npending = 0
        self.nactivemask = 0
        self.counter = 0            # syncwarp groups completed in this block

    # -- lanes ------------------------------------------------------------------------------
    def present(self, w: int) -> int:
        """Bit mask of the lanes that exist in warp ``w``."""
        k = min(WARP, self.n - WARP * w)
        return (1 << k) - 1 if k > 0 else 0

    # -- arrivals -----------------------------------------------------------------------------
    def wait(self, t, kind, mode, mask, value, arg, arg2, site):
        """Called by lane ``t``: arrive, wait for the group, return the result."""
        w, lane = divmod(t.thread_id, WARP)
        a = _Arrival(t, lane, kind, mode, mask & FULL, value, arg, arg2, site)
        self.pending.setdefault(w, {})[lane] = a
        self.npending += 1
        if kind == "activemask":
            self.nactivemask += 1
        else:
            self.arrived[w] = self.arrived.get(w, 0) | (1 << lane)
            self._try(w, lane)
        while not a.done and not t.abort:
            t._yield()
        if t.abort:
            raise RuntimeError("abort flag set on a warp operation")
        return a.result

    def exit(self, t):
        """Lane ``t`` finished the kernel: groups that waited for it go on."""
        w, lane = divmod(t.thread_id, WARP)
        self.exited[w] = self.exited.get(w, 0) | (1 << lane)
        pend = self.pending.get(w)
        if pend:
            for ln in list(pend):
                a = pend.get(ln)
                if a is not None and a.kind != "activemask" and not a.done:
                    self._try(w, ln)

    # -- groups -------------------------------------------------------------------------------
    def _gone(self, w):
        return (FULL & ~self.present(w)) | self.exited.get(w, 0)

    def _closure(self, w, lane, force=False):
        """The lanes of the group of ``lane`` (the union of the masks of the arrived lanes it
        names, transitively), or None while a lane it needs (present, live) is not there yet."""
        pend, arrived, gone = self.pending[w], self.arrived.get(w, 0), self._gone(w)
        group = pend[lane].mask | (1 << lane)
        while True:
            if not force and group & ~gone & ~arrived:
                return None
            u = group
            for j in _bits(group & arrived):
                u |= pend[j].mask
            if u == group:
                return group
            group = u

    def _try(self, w, lane):
        group = self._closure(w, lane)
        if group is not None:
            self._complete(w, group, forced=False)

    def _complete(self, w, group, forced):
        pend = self.pending[w]
        arrived = self.arrived.get(w, 0)
        here = group & arrived
        members = {j: pend.pop(j) for j in _bits(here)}
        self.arrived[w] = arrived & ~here
        self.npending -= len(members)
        self._check(w, group, members, forced)
        vals = {j: a.value for j, a in members.items()}
        for j, a in members.items():
            a.result = self._result(a, j, members, vals, here)
            a.done = True
            self.wake(a.thread)
        sync = [a for a in members.values() if a.kind == "syncwarp"]
        if sync:
            self.counter += 1
            for a in sync:
                a.thread._wsync = self.counter
                a.thread._wsync_mask = here

    @staticmethod
    def _result(a, lane, members, vals, here):
        if a.kind == "shfl":
            b = int(a.arg) & FULL                # PTX reads the lane operand as unsigned 32-bit
            src = {"idx": b & 31, "up": lane - b, "down": lane + b, "bfly": lane ^ b}[a.mode]
            ok = 0 <= src < WARP and src in vals
            v = vals[src] if ok else a.value
            return (v, ok) if a.arg2 else v
        if a.kind == "vote":
            lanes = [j for j in _bits(a.mask & here)]
            preds = [bool(members[j].value) for j in lanes]
            ballot = 0
            for j, p in zip(lanes, preds):
                if p:
                    ballot |= 1 << j
            res = {"all": all(preds), "any": any(preds), "eq": len(set(preds)) <= 1,
                   "ballot": bool(ballot)}[a.mode]
            if a.arg2:                          # vote_sync_intrinsic: (ballot, predicate)
                return _i32(ballot), res
            return _i32(ballot) if a.mode == "ballot" else res
        if a.kind in ("match_any", "match_all"):
            lanes = list(_bits(a.mask & here))
            same = 0
            for j in lanes:
                if members[j].value == a.value:
                    same |= 1 << j
            if a.kind == "match_any":
                return _i32(same)
            allsame = all(members[j].value == a.value for j in lanes)
            return _i32(same if allsame else 0), allsame
        return None                             # syncwarp

    # -- misuse -------------------------------------------------------------------------------
    def _check(self, w, group, members, forced):
        if self.on_warp is None:
            return
        base = WARP * w
        first = members[min(members)]
        absent = group & ~self.present(w)
        exited = group & self.exited.get(w, 0) & self.present(w)
        elsewhere = group & self.present(w) & ~self.exited.get(w, 0) & ~sum(1 << j for j in members)
        for kind, bits, why in (
                ("absent", absent, f"that do not exist (the block has {self.n} threads)"),
                ("exited", exited, "that have already exited"),
                ("elsewhere", elsewhere if forced else 0,
                 "that never arrive: they wait at syncthreads() or another barrier (a deadlock on a GPU)")):
            if bits:
                lanes = list(_bits(bits))
                users = [a for a in members.values() if a.mask & bits] or [first]
                a = users[0]
                self.on_warp({"kind": kind, "op": a.name, "mask": a.mask, "warp": w, "site": a.site,
                              "thread": a.thread,
                              "lanes": lanes[:8], "threads": [base + j for j in lanes[:8]],
                              "message": f"{a.name}(mask={a.mask:#010x}) in warp {w} names lane(s) "
                                         f"{_fmt(lanes)} {why}"})
        for j, a in members.items():
            if not a.mask >> j & 1:
                self.on_warp({"kind": "self", "op": a.name, "mask": a.mask, "warp": w, "site": a.site,
                              "thread": a.thread, "lanes": [j], "threads": [base + j],
                              "message": f"{a.name}(mask={a.mask:#010x}) called by lane {j} of warp {w}, "
                                         f"which its own mask does not name"})
                break
        ops = {(a.name, a.mask) for a in members.values()}
        if len(ops) > 1:
            desc = ", ".join(sorted(f"{n}(mask={m:#010x})" for n, m in ops))
            self.on_warp({"kind": "mismatch", "op": first.name, "mask": first.mask, "warp": w,
                          "site": first.site, "thread": first.thread, "lanes": sorted(members)[:8],
                          "threads": [base + j for j in sorted(members)[:8]],
                          "sites": sorted({a.site[1] for a in members.values() if a.site}),
                          "message": f"lanes of warp {w} meet at different warp operations or masks: {desc}"})

    # -- when nobody can move ---------------------------------------------------------------
    def unblock(self) -> bool:
        """Every live thread of the block is blocked and some wait here: resolve the
        ``activemask()`` calls if any wait, else let the stuck groups go on with the lanes they
        have.  True if anything was released."""
        if not self.npending:
            return False
        if self.nactivemask:
            for w, pend in self.pending.items():
                sites: dict = {}
                for j, a in pend.items():
                    if a.kind == "activemask":
                        sites.setdefault(a.site, []).append(j)
                for lanes in sites.values():
                    m = sum(1 << j for j in lanes)
                    for j in lanes:
                        a = pend.pop(j)
                        a.result, a.done = m, True
                        self.wake(a.thread)
                    self.npending -= len(lanes)
                    self.nactivemask -= len(lanes)
            return True
        for w, pend in self.pending.items():
            while pend:
                lane = min(pend)
                self._complete(w, self._closure(w, lane, force=True), forced=True)
        return True


def _fmt(lanes):
    return ", ".join(str(j) for j in lanes[:8]) + (", ..." if len(lanes) > 8 else "")


# ----------------------------------------------------------------------------- the operations

def _site(depth=2):
    f = sys._getframe(depth)
    return (f.f_code.co_filename, f.f_lineno)


def _op(kind, mode, mask, value, arg, arg2=False, depth=3):
    t = current_thread()
    b = getattr(t, "_barrier", None)
    if b is None or getattr(b, "warps", None) is None:
        raise NotImplementedError(
            f"warp-level operations ({_NAMES.get((kind, mode), kind)}) need refconv's simulator "
            f"scheduler (refconv.tooling.cuda.sim_scheduler); it is not in use "
            f"(REFCONV_SIM_SCHEDULER=numba, or numba-cuda is not a version it supports)")
    site = _site(depth)
    if t.abort:
        raise RuntimeError("abort flag set on a warp operation")
    return b.warps.wait(t, kind, mode, int(mask), value, arg, arg2, site)


_SHFL = {"shfl_sync": "idx", "shfl_up_sync": "up", "shfl_down_sync": "down", "shfl_xor_sync": "bfly"}
_VOTE = {"all_sync": "all", "any_sync": "any", "eq_sync": "eq", "ballot_sync": "ballot"}


def _methods() -> dict:
    """The warp-level members of the simulated ``cuda`` module, by name."""
    m = {}
    for name, mode in _SHFL.items():
        def shfl(self, mask, value, b, _mode=mode):
            return _op("shfl", _mode, mask, value, b)
        shfl.__name__ = shfl.__qualname__ = name
        shfl.__doc__ = f"``cuda.{name}`` on refconv's simulator scheduler (see sim_warps)."
        m[name] = shfl
    for name, mode in _VOTE.items():
        def vote(self, mask, predicate, _mode=mode):
            return _op("vote", _mode, mask, predicate, None)
        vote.__name__ = vote.__qualname__ = name
        vote.__doc__ = f"``cuda.{name}`` on refconv's simulator scheduler (see sim_warps)."
        m[name] = vote

    def shfl_sync_intrinsic(self, mask, mode, value, b, c=0x1F):
        """``(value, predicate)``: the raw shuffle (mode 0 idx, 1 up, 2 down, 3 xor; width 32)."""
        return _op("shfl", _SHFL_MODES[int(mode)], mask, value, b, arg2=True)

    def vote_sync_intrinsic(self, mask, mode, predicate):
        """``(ballot, predicate)``: the raw vote (mode 0 all, 1 any, 2 eq, 3 ballot)."""
        return _op("vote", _VOTE_MODES[int(mode)], mask, predicate, None, arg2=True)

    def match_any_sync(self, mask, value):
        """Mask of the lanes of ``mask`` holding the same ``value`` as the caller."""
        return _op("match_any", None, mask, value, None)

    def match_all_sync(self, mask, value):
        """``(mask, pred)``: ``mask`` if every lane of it holds ``value``, else ``(0, False)``."""
        return _op("match_all", None, mask, value, None)

    def syncwarp(self, mask=FULL):
        """Wait for the lanes of ``mask``; orders their shared-memory accesses (the sanitizer)."""
        _op("syncwarp", None, mask, None, None)

    def activemask(self):
        """The lanes of the warp that reach this same call (see sim_warps)."""
        return _op("activemask", None, 0, None, None)

    def lanemask_lt(self):
        """Lanes below the caller's."""
        return (1 << (current_thread().thread_id % WARP)) - 1

    def popc(self, val):
        """Population count over the value's width (negative ``int32`` ballots count 32 bits)."""
        if isinstance(val, np.integer):
            val = int(val) & ((1 << (8 * val.dtype.itemsize)) - 1)
        elif val < 0:
            val &= (1 << 64) - 1
        return bin(val).count("1")

    for f in (shfl_sync_intrinsic, vote_sync_intrinsic, match_any_sync, match_all_sync, syncwarp,
              activemask, lanemask_lt, popc):
        m[f.__name__] = f
    return m


NAMES = tuple(list(_SHFL) + list(_VOTE) + ["shfl_sync_intrinsic", "vote_sync_intrinsic", "match_any_sync",
                                           "match_all_sync", "syncwarp", "activemask", "lanemask_lt"])


def install(module_class) -> None:
    """Put the warp-level operations on the simulator's ``FakeCUDAModule`` class."""
    for name, f in _methods().items():
        setattr(module_class, name, f)
