"""``refconv merge A.json B.json ...``: join the JSON reports of the shards of one run
(``refconv check --shard K/N --json ...``) into one report, as if one run had checked them all.

Rules:

* every file is a ``refconv check --json`` report (a JSON object with a ``results`` list), and
  every field the merge or the matrix reads is checked before anything is merged: each result's
  ``variant`` is an id (``op/backend/name``), its ``status`` one of :data:`STATUSES`, its
  ``seconds`` a finite number >= 0 (also the report's own), its counts whole numbers >= 0, and a
  ``shard`` is an object ``{"k": K, "n": N, "of": M}``; anything else is a usage error (exit 2)
  naming the file, the entry and what is accepted;
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
import math

from .errors import UsageError
from .jsonfile import read_json
from .variant_id import FORM, VariantId


#: the statuses a result of ``refconv check`` can have
STATUSES = ("pass", "fail", "error", "unavailable", "skipped")
#: result fields that count something: whole numbers >= 0
COUNTS = ("examples", "passed", "invalid", "shrink_examples", "directed")


def _seconds_problem(value) -> str | None:
    """Why ``value`` is not a duration in seconds, a finite number >= 0 (None: it is one)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return f"seconds {value!r} not accepted; accepted: a finite number >= 0"
    return None


def _result_problem(r) -> str | None:
    """What is wrong with one entry of a report's ``results`` (None: nothing)."""
    if not isinstance(r, dict):
        return f"is {type(r).__name__}, not a JSON object with 'variant' and 'status'"
    vid = r.get("variant")
    try:
        VariantId.parse(vid)
    except ValueError:
        return f"variant {vid!r} is not a variant id; accepted: {FORM} (three non-empty parts separated by '/')"
    st = r.get("status")
    if st not in STATUSES:
        return f"variant {vid}: status {st!r} not accepted; accepted: {', '.join(STATUSES)}"
    if "seconds" in r and _seconds_problem(r["seconds"]):
        return f"variant {vid}: {_seconds_problem(r['seconds'])}"
    for key in COUNTS:
        v = r.get(key, 0)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            return f"variant {vid}: {key} {v!r} not accepted; accepted: a whole number >= 0"
    for key in ("worst_abs", "worst_rel"):
        v = r.get(key, 0.0)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return f"variant {vid}: {key} {v!r} not accepted; accepted: a number"
    return None


def _shard_problem(s) -> str | None:
    """What is wrong with a report's ``shard`` (None: absent, or ``{"k": K, "n": N, "of": M}``)."""
    if s is None:
        return None
    ok = (isinstance(s, dict) and all(isinstance(s.get(k), int) and not isinstance(s.get(k), bool)
                                      for k in ("k", "n", "of"))
          and 1 <= s["k"] <= s["n"] and s["of"] >= 0)
    if ok:
        return None
    return (f"shard {s!r} not accepted; accepted: an object {{\"k\": K, \"n\": N, \"of\": M}} with whole "
            "numbers 1 <= K <= N and M >= 0, as refconv check --shard K/N --json writes it")


def load_report(path) -> dict:
    """Read one ``refconv check --json`` report and check every field that the merge and the matrix
    read (the result ids, statuses, counts and times; the shard; the run's seconds);
    ``UsageError`` naming the file, the entry and what is accepted."""
    doc = read_json(path, "report")
    where = f"report {str(path)!r}"
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise UsageError(f"{where}: not a refconv check report (expected a JSON object with a "
                         f"'results' list, as written by refconv check --json)")
    for i, r in enumerate(doc["results"]):
        why = _result_problem(r)
        if why:
            raise UsageError(f"{where}: results[{i}]: {why}")
    if "seconds" in doc and _seconds_problem(doc["seconds"]):
        raise UsageError(f"{where}: {_seconds_problem(doc['seconds'])}")
    why = _shard_problem(doc.get("shard"))
    if why:
        raise UsageError(f"{where}: {why}")
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
        raise UsageError("no report given")
    shards = [d.get("shard") for d in docs]
    if any(s is not None for s in shards):
        missing = [nm for nm, s in zip(names, shards) if not isinstance(s, dict)]
        if missing:
            raise UsageError(f"{', '.join(missing)} has no shard while the others do (written without --shard)")
        ns = {s["n"] for s in shards}
        if len(ns) != 1:
            raise UsageError(f"the reports are shards of different splits (N = {sorted(ns)})")
        n = ns.pop()
        ofs = {s.get("of") for s in shards}
        if len(ofs) != 1:
            raise UsageError(f"the shards selected different variant sets ({sorted(map(str, ofs))} variants "
                             "before sharding); run every shard with the same filters")
        ks = [s["k"] for s in shards]
        dup = sorted({k for k in ks if ks.count(k) > 1})
        if dup:
            raise UsageError(f"shard(s) {', '.join(f'{k}/{n}' for k in dup)} given more than once")
        lost = sorted(set(range(1, n + 1)) - set(ks))
        if lost:
            raise UsageError(f"shard(s) {', '.join(f'{k}/{n}' for k in lost)} missing; given "
                             f"{', '.join(f'{k}/{n}' for k in sorted(ks))}")
    seen: dict[str, str] = {}
    results = []
    for nm, d in zip(names, docs):
        for r in d["results"]:
            if r["variant"] in seen:
                raise UsageError(f"{r['variant']} is in both {seen[r['variant']]} and {nm}")
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
