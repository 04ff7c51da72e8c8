"""``refconv bench``: kernel and end-to-end time of each selected variant, the peers (library
calls) measured in the same run, the memory roofline; ``refconv bench-report`` merges reports.

The package, by job (the method is in :mod:`refconv.bench.command`'s docstring and
docs/performance.md):

* :mod:`~refconv.bench.options`: the typed options (:class:`BenchOptions`, :class:`ReportOptions`,
  :class:`RowOptions`), built once by the command line; :mod:`~refconv.bench.args`: their argparse;
* :mod:`~refconv.bench.command`: the problems to run, the rows of each, speed-ups, the reports
  (:func:`cmd_bench`, :func:`cmd_bench_report`); :mod:`~refconv.bench.problems`: the ``--scale``
  problems and the host memory a row's check needs;
* :mod:`~refconv.bench.row`: one row (:class:`Row`) and its JSON;
* :mod:`~refconv.bench.rows`: computing one row (check, then time), the statistics, the copy bandwidth
  and each problem's copy floor;
* :mod:`~refconv.bench.worker`: where rows are computed (a worker process under ``--timeout``);
* :mod:`~refconv.bench.report`: terminal tables, JSON, Markdown, plots, and merging reports;
* :mod:`~refconv.bench.presets`, :mod:`~refconv.bench.roofline`: the named problems; minimum bytes
  and FLOPs of a problem.
"""
from __future__ import annotations

from .command import cmd_bench, cmd_bench_report
from .options import BenchOptions, ReportOptions, RowOptions
from .row import Row

__all__ = ["BenchOptions", "ReportOptions", "Row", "RowOptions", "cmd_bench", "cmd_bench_report"]
