"""``refconv merge``: join the JSON reports of ``refconv check --shard`` runs (:mod:`refconv.merge`)
into one matrix, JSON and JUnit report; the exit status is the one run's."""
from __future__ import annotations

import time

from .. import render
from ..console import console, err_console
from ..render import esc
from ..report import atomic_write, check_report_paths, write_junit
from .common import report_on_stdout, run_info, write_to_fd


def cmd_merge(ns) -> int:
    """Join shard reports into one matrix, JSON and JUnit file; exit as one run (2 when a report
    could not be written)."""
    import dataclasses

    from ..merge import exit_status, load_report, merge_reports, report_text
    from ..runner import VariantResult
    check_report_paths(ns.json, ns.junit)   # before anything is printed
    doc = merge_reports([load_report(f) for f in ns.reports], names=list(ns.reports),
                        merged={k: v for k, v in run_info(ns, time.time()).items() if k != "seed"})
    fields = {f.name for f in dataclasses.fields(VariantResult)}
    ordered = [VariantResult(**{k: v for k, v in r.items() if k in fields}) for r in doc["results"]]
    with report_on_stdout(ns.json == "-") as fd:
        render.print_matrix(console, ordered, doc["seconds"])
        if fd is not None:
            write_to_fd(fd, report_text(doc))
    code = 0
    for flag, path, write in (("--json", ns.json if ns.json != "-" else None, lambda: atomic_write(ns.json, report_text(doc))),
                              ("--junit", ns.junit, lambda: write_junit(ns.junit, ordered, doc["seconds"]))):
        if not path:
            continue
        try:
            write()
        except OSError as e:
            err_console.print(f"refconv merge: could not write {flag} {esc(path)}: {esc(e)}")
            code = 2
    return max(code, exit_status(ordered))
