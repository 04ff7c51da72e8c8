"""The command-line options of ``refconv bench`` and ``refconv bench-report`` (argparse).

Each option's destination is the name of a :class:`refconv.bench.options.BenchOptions` (or
:class:`~refconv.bench.options.ReportOptions`) field, so the command line builds the options object
from the parsed arguments by name (:func:`refconv.cli.main`); the variant selection (``filters``)
goes to the session.
"""
from __future__ import annotations

from .problems import scales
from .options import COPY_BYTES, DEFAULT_TIMEOUT, FLUSH_BYTES


def add_parser(sub, filters):
    """Add ``refconv bench`` to the subcommands ``sub``; ``filters(parser)`` adds the variant
    selection and backend options the session reads."""
    p = sub.add_parser("bench", help="kernel and end-to-end time per variant, peers, roofline, plots")
    filters(p)
    p.add_argument("--preset", action="append", metavar="NAME",
                   help="a seed study's problem by name (glob, comma list, or 'all'; repeatable); "
                        "see --list-presets")
    p.add_argument("--list-presets", action="store_true", help="list the presets and exit")
    p.add_argument("--scale", default="small", choices=list(scales()),
                   help="without --preset: one problem per op, small (default; fits the simulators) or paper")
    p.add_argument("--repeat", type=int, default=30, help="timed runs per row, after the warm-up (default 30)")
    p.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                   help="a row's timed runs stop once they have taken this long in all (at least one run; "
                        "the table shows n where fewer than --repeat ran; default: no limit)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"each row runs in a worker process and becomes a 'hang' row when one of its phases (the "
                        f"spec's result, the check, the timing) runs this long (default "
                        f"{DEFAULT_TIMEOUT:g}: a paper-size Kronecker row fits); a crash or error is a row too, "
                        f"and the run goes on; 0: rows in this process, no limit")
    p.add_argument("--baseline", default="auto",
                   help="row the speed-up divides: auto (a peer per op), spec, a peer name, or a variant id")
    p.add_argument("--peers", default="auto",
                   help="peers to time: auto (GPU peers, else CPU ones; refused for a preset or --scale paper "
                        "when no GPU peer can run here), all, none, or names (comma list)")
    p.add_argument("--copy-bytes", type=int, default=COPY_BYTES,
                   help=f"size of the copy that measures bandwidth (default {COPY_BYTES >> 20} MiB)")
    p.add_argument("--flush-bytes", type=int, default=FLUSH_BYTES,
                   help=f"device bytes overwritten before each timed GPU launch, so that L2 is cold and "
                        f"the host's launch overhead is not timed (default {FLUSH_BYTES >> 20} MiB; 0: off)")
    p.add_argument("--json", help="write the measurements to this JSON file")
    p.add_argument("--markdown", metavar="FILE", help="write the tables as Markdown (for docs/performance.md)")
    p.add_argument("--plots", metavar="DIR", help="write PNG plots (time, %% roofline, coarsening curve) here")


def add_report_parser(sub):
    """Add ``refconv bench-report`` to the subcommands ``sub``."""
    p = sub.add_parser("bench-report", help="merge refconv bench --json reports; write JSON, Markdown, plots")
    p.add_argument("reports", nargs="+", metavar="BENCH.json",
                   help="reports of runs that split the problems (a row measured in any of them is kept)")
    p.add_argument("--json", help="write the merged report to this JSON file")
    p.add_argument("--markdown", metavar="FILE", help="write the merged tables as Markdown")
    p.add_argument("--plots", metavar="DIR", help="write the PNG plots of the merged report here")
