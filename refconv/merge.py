"""``refconv merge A.json B.json ...``: join the JSON reports of the shards of one run
(``refconv check --shard K/N --json ...``) into one report, as if one run had checked them all.

Rules:

* every file is a ``refconv check --json`` report (a JSON object with a ``results`` list);
* reports that carry a ``shard`` must be the shards ``1..N`` of the same ``N``, each exactly
  once, and all of the same selection (same ``of``, the number of variants before sharding);
  a missing or repeated shard is an error, so a CI job that died is never merged into green;
* a variant may appear in only one report;
* the merged ``seconds`` is the longest shard's (the wall time of a parallel run);
  ``work_seconds`` is their sum;
* ``seed``, ``refconv_version`` and ``tolerance`` are the shards' when they all agree, else
  ``null``; ``started`` is the earliest shard's start; ``shards`` lists what each shard recorded
  (file, shard, seed, version, start, command line) and ``merged`` the merge's own version, start
  and command line.
"""
from __future__ import annotations

import json

from .errors import UsageError
from .jsonfile import read_json


def load_report(path) -> dict:
    """Read one ``refconv check --json`` report; ``UsageError`` naming the
    file and what is wrong."""
    doc = read_json(path, "report")
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise UsageError(f"report {str(path)!r}: not a refconv check report (expected a JSON object with a "
                         f"'results' list, as written by refconv check --json)")
    for i, r in enumerate(doc["results"]):
        if not isinstance(r, dict) or not isinstance(r.get("variant"), str) or not isinstance(r.get("status"), str):
            raise UsageError(f"report {str(path)!r}: results[{i}] has no 'variant' and 'status'")
    return doc


def _common(docs: list[dict], key: str):
    """The value of ``key`` that every report carries, else None (unrecorded or differing)."""
    vals = {json.dumps(d.get(key), sort_keys=True, default=str) for d in docs}
    return docs[0].get(key) if len(vals) == 1 else None


def merge_reports(docs: list[dict], names: list[str] | None = None, merged: dict | None = None) -> dict:
    """One report from the shard reports ``docs`` (see the module docstring); ``merged``: what the
    merging run records about itself (:func:`refconv.commands.common.run_info`: version, start, command)."""
    names = names or [f"report {i + 1}" for i in range(len(docs))]
    if not docs:
        raise UsageError("merge: no report given")
    shards = [d.get("shard") for d in docs]
    if any(s is not None for s in shards):
        missing = [nm for nm, s in zip(names, shards) if not isinstance(s, dict)]
        if missing:
            raise UsageError(f"merge: {', '.join(missing)} has no shard while the others do (written without --shard)")
        ns = {s["n"] for s in shards}
        if len(ns) != 1:
            raise UsageError(f"merge: the reports are shards of different splits (N = {sorted(ns)})")
        n = ns.pop()
        ofs = {s.get("of") for s in shards}
        if len(ofs) != 1:
            raise UsageError(f"merge: the shards selected different variant sets ({sorted(map(str, ofs))} variants "
                             "before sharding); run every shard with the same filters")
        ks = [s["k"] for s in shards]
        dup = sorted({k for k in ks if ks.count(k) > 1})
        if dup:
            raise UsageError(f"merge: shard(s) {', '.join(f'{k}/{n}' for k in dup)} given more than once")
        lost = sorted(set(range(1, n + 1)) - set(ks))
        if lost:
            raise UsageError(f"merge: shard(s) {', '.join(f'{k}/{n}' for k in lost)} missing; given "
                             f"{', '.join(f'{k}/{n}' for k in sorted(ks))}")
    seen: dict[str, str] = {}
    results = []
    for nm, d in zip(names, docs):
        for r in d["results"]:
            if r["variant"] in seen:
                raise UsageError(f"merge: {r['variant']} is in both {seen[r['variant']]} and {nm}")
            seen[r["variant"]] = nm
            results.append(r)
    profiles = sorted({str(d.get("profile")) for d in docs})
    starts = [d["started"] for d in docs if isinstance(d.get("started"), str)]
    return {"profile": profiles[0] if len(profiles) == 1 else ",".join(profiles),
            "seconds": max(float(d.get("seconds", 0.0)) for d in docs),
            "work_seconds": sum(float(d.get("seconds", 0.0)) for d in docs),
            "backend_options": docs[0].get("backend_options", {}),
            "tolerance": _common(docs, "tolerance"), "seed": _common(docs, "seed"),
            "refconv_version": _common(docs, "refconv_version"),
            "started": min(starts) if len(starts) == len(docs) else None,
            "merged_from": len(docs),
            "shards": [{"report": nm, **{k: d.get(k) for k in ("shard", "seed", "refconv_version", "started", "command")}}
                       for nm, d in zip(names, docs)],
            "merged": dict(merged or {}), "results": results}


def report_text(doc: dict) -> str:
    """The JSON text of a merged report (as ``refconv merge --json`` writes it)."""
    return json.dumps(doc, indent=1, default=str)


def exit_status(results) -> int:
    """The exit status of one run with these results: 1 when a variant failed or errored, else 0."""
    return 1 if any((r["status"] if isinstance(r, dict) else r.status) in ("fail", "error") for r in results) else 0
