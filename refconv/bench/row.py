"""One row of a ``refconv bench`` table: the spec, a variant, a peer or the copy floor on one problem.

A :class:`Row` names what it measured by explicit fields (``kind``, ``op``, and for a variant
``backend`` and ``name``, for a peer ``name`` and ``library``), never by an id split by hand; its
id (``Row.id``, the JSON's ``"variant"`` key) is derived: ``op/spec``, ``op/peer/<peer>``, ``op/copy``
(the device-to-device copy of the problem's bytes, :func:`refconv.bench.rows.copy_row`), or the
variant's ``op/backend/name`` (:class:`refconv.variant_id.VariantId`).

The JSON schema on disk is the one bench reports have always had (:meth:`Row.to_json`,
:meth:`Row.from_json`; files of older runs read back unchanged, keys this version does not know are
kept in ``extra`` and written back):

* every row: ``kind``, ``variant`` (the id), ``status``, ``median_s``, ``speedup``; a peer row
  ``peer`` and ``library``; the spec row ``library``; a checked variant ``params``;
* a timed row (``timer`` set) also ``kernel_s`` and ``e2e_s`` (each a summary: ``median``, ``q1``,
  ``q3``, ``min``, ``max``, ``n``, or null), ``simulated``, ``copy`` (the bandwidth's source),
  ``roofline_pct``; and where there are any, ``caveats`` (the backend's, with how many intervals
  they concern) and ``kernels`` (what a peer's library launched); where one call recorded more
  than one interval, ``launches`` (the most one call recorded: its kernel time is their sum);
* the copy row ``bytes`` (the problem's input plus output bytes, which its copy moves) and
  ``sources`` (each device copy path measured: its median seconds, or why it could not run; the
  row's times are the fastest one's, named by ``library``);
* a timed row with a device time, in a problem whose copy row was timed, ``copy_ratio``: its time
  over the copy's (the ``× copy`` column);
* a merged report's row ``run`` (the index of the report it came from).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

from ..variant_id import VariantId

KINDS = ("spec", "variant", "peer", "copy")
_TIMED = ("kernel_s", "e2e_s", "simulated")
_FINISHED = ("copy", "roofline_pct")


@dataclass
class Row:
    """A row (module docstring).  ``median_s``: the main time (kernel median, else end-to-end; None
    when not timed); ``timer``: what took it (``device events``, ``host clock``, ``simulated``);
    ``copy_ratio``: ``median_s`` over the problem's copy row's (device rows only)."""

    kind: str
    op: str
    status: str
    backend: str | None = None
    name: str | None = None
    library: str | None = None
    params: dict | None = None
    kernel_s: dict | None = None
    e2e_s: dict | None = None
    simulated: bool | None = None
    caveats: dict | None = None
    kernels: list | None = None
    median_s: float | None = None
    timer: str | None = None
    copy: str | None = None
    roofline_pct: float | None = None
    speedup: float | None = None
    bytes: int | None = None
    sources: dict | None = None
    copy_ratio: float | None = None
    run: int | None = None
    launches: int | None = None
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"row kind {self.kind!r} not accepted; accepted: {', '.join(KINDS)}")
        if self.kind == "variant":
            VariantId(self.op, self.backend, self.name)      # raises naming the bad part
        elif self.kind == "peer" and not self.name:
            raise ValueError(f"a peer row of {self.op} needs the peer's name, got {self.name!r}")

    @classmethod
    def of_variant(cls, vid: VariantId | str, status: str, **kw) -> Row:
        v = vid if isinstance(vid, VariantId) else VariantId.parse(vid)
        return cls("variant", v.op, status, backend=v.backend, name=v.name, **kw)

    @property
    def id(self) -> str:
        """``op/spec``, ``op/peer/<peer>``, ``op/copy`` or the variant id."""
        if self.kind in ("spec", "copy"):
            return f"{self.op}/{self.kind}"
        if self.kind == "peer":
            return f"{self.op}/peer/{self.name}"
        return str(self.variant_id)

    @property
    def variant_id(self) -> VariantId:
        if self.kind != "variant":
            raise ValueError(f"row {self.id} is a {self.kind} row; only variant rows have a variant id")
        return VariantId(self.op, self.backend, self.name)

    @property
    def stat(self) -> dict | None:
        """The summary the main time comes from: the kernel time's, else the end-to-end time's
        (``median``, ``q1``, ``q3`` -- the IQR --, ``min``, ``max``, ``n`` runs)."""
        return self.kernel_s or self.e2e_s

    def timed(self, m: dict) -> Row:
        """Set the fields of a :func:`refconv.bench.rows.measure` result ``m``; returns the row."""
        self.kernel_s, self.e2e_s, self.simulated = m["kernel_s"], m["e2e_s"], m["simulated"]
        self.caveats = m.get("caveats") or None
        self.launches = m.get("launches")
        return self

    def to_json(self) -> dict:
        """The row as bench reports store it (schema in the module docstring)."""
        out = {"kind": self.kind, "variant": self.id}
        if self.kind == "peer":
            out["peer"] = self.name
        for k in ("library", "params", "bytes", "sources"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        out["status"] = self.status
        if self.timer is not None:
            out.update({k: getattr(self, k) for k in _TIMED})
            out.update({k: getattr(self, k) for k in ("caveats", "kernels") if getattr(self, k)})
            if self.launches and self.launches > 1 and self.kernel_s:
                out["launches"] = self.launches
        out["median_s"] = self.median_s
        if self.timer is not None:
            out["timer"] = self.timer
            out.update({k: getattr(self, k) for k in _FINISHED})
        out["speedup"] = self.speedup
        if self.copy_ratio is not None:
            out["copy_ratio"] = self.copy_ratio
        if self.run is not None:
            out["run"] = self.run
        return {**out, **self.extra}

    @classmethod
    def from_json(cls, d: dict, op: str) -> Row:
        """The row ``d`` of a bench report, of a problem whose op is ``op``; ``ValueError`` naming
        the row when its kind or id is not one a bench writes."""
        kind, rid = d.get("kind"), d.get("variant")
        known = {f.name for f in fields(cls)} - {"kind", "op", "backend", "name", "extra"}
        kw = {k: d[k] for k in known if k in d}
        extra = {k: v for k, v in d.items() if k not in known and k not in ("kind", "variant", "peer")}
        if kind == "variant":
            row = cls.of_variant(VariantId.parse(rid), extra=extra, **kw)
        elif kind == "peer":
            row = cls("peer", op, name=d.get("peer"), extra=extra, **kw)
        else:
            row = cls(kind, op, extra=extra, **kw)
        if row.id != rid:
            raise ValueError(f"bench row {rid!r} ({kind}) does not belong to op {op!r}; accepted: a "
                             f"{'|'.join(KINDS)} row whose id is {op}/spec, {op}/copy, {op}/peer/<peer> or "
                             f"{op}/<backend>/<name>")
        return row
