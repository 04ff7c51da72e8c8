"""``refconv`` command line: ``list``, ``check``, ``repro``, ``merge``, ``bench``, ``specs``.

This module builds the parser and dispatches; each command is a module of
:mod:`refconv.commands`.  Backends add their own options to ``check``/``list``/``bench`` through
:class:`refconv.variant.BackendOption` (e.g. a ``--TARGET`` choice); the core names none.

Exit statuses of every command: a :class:`refconv.errors.UsageError` (a bad argument, environment
value or input file, raised where it is read) is one line on stderr and status 2; Ctrl-C is 130,
SIGTERM 143; any other exception is a bug and ends in a traceback (status 1).
"""
from __future__ import annotations

import argparse
import os
import sys

from . import ops
from .commands.check import cmd_check
from .commands.common import refconv_version, session_from
from .commands.listing import cmd_list
from .commands.merge import cmd_merge
from .commands.replay import cmd_repro
from .commands.specs import cmd_specs
from .console import err_console
from .errors import UsageError
from .procs import MIN_TIMEOUT
from .profiles import PROFILES
from .render import esc
from .report import write_junit  # noqa: F401  (re-exported: refconv.cli.write_junit)
from .session import TOLERANCE_HELP, TOLERANCES, backend_options, negated_flag, worker_count  # noqa: F401

__all__ = ["main", "build_parser", "session_from", "UsageError", "worker_count", "write_junit"]


# ----------------------------------------------------------------------------- argument types

def _seconds(flag: str, zero_ok: bool, least: float = 0.0):
    """argparse type: a finite number of seconds, > 0 (>= 0 when ``zero_ok``), and >= ``least``
    when one is given."""
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            v = float("nan")
        finite = v == v and v not in (float("inf"), float("-inf"))
        if not finite or v < 0 or (v == 0 and not zero_ok) or 0 < v < least:
            raise argparse.ArgumentTypeError(
                f"{text!r} not accepted; accepted: a finite number of seconds "
                + (f">= {least:g} (the least a hang can be judged by)" if least else '>= 0' if zero_ok else '> 0'))
        return v
    return parse


def _count(flag: str, lo: int, hi: int | None = None):
    """argparse type: an integer >= ``lo`` (and <= ``hi`` when given)."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            v = lo - 1
        if v < lo or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"{text!r} not accepted; accepted: an integer "
                                             + (f">= {lo}" if hi is None else f"from {lo} to {hi}"))
        return v
    return parse


#: the most ``--examples`` a run may ask for per variant (the thorough profile draws 500; a run of
#: 10**5 examples per variant under a simulator already takes days)
MAX_EXAMPLES = 100_000


def _glob(flag: str):
    """argparse type: a non-empty name or glob (an empty one would silently select nothing)."""
    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{text!r} not accepted; accepted: a non-empty name or "
                                             f"glob (leave the option out to select everything)")
        return text
    return parse


class _Once(argparse.Action):
    """``--op`` / ``--backend``: one glob each.  Given again, a usage error that names both values
    (a second value silently replacing the first would check something else than asked)."""

    def __call__(self, parser, namespace, values, option_string=None):
        old = getattr(namespace, self.dest, None)
        if old is not None:
            select = (f"--variant '{old}/*' --variant '{values}/*'" if self.dest == "op" else
                      f"--variant '*/{old}/*' --variant '*/{values}/*'")
            parser.error(f"{option_string} given twice ({old!r}, {values!r}); accepted: one name or glob "
                         f"matching all you want, or --variant once per selection ({select})")
        setattr(namespace, self.dest, values)


# ----------------------------------------------------------------------------- options

def _add_backend_options(p: argparse.ArgumentParser):
    for bname, o in backend_options():
        help_ = f"[{bname}] {o.help}" + (f" (env {o.env})" if o.env else "")
        if o.is_flag:
            p.add_argument(o.flag, dest=o.dest, action="store_true", default=None, help=help_)
            p.add_argument(negated_flag(o), dest=o.dest, action="store_false", default=None,
                           help=f"[{bname}] turn {o.flag} off")
        else:
            p.add_argument(o.flag, dest=o.dest, choices=o.choices, default=None, metavar=(
                "{" + ",".join(map(str, o.choices)) + "}" if o.choices else o.dest.upper()), help=help_)



# ----------------------------------------------------------------------------- main

def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="refconv", description=__doc__.splitlines()[0])
    ap.add_argument("--version", action="version", version=f"refconv {refconv_version()}")
    sub = ap.add_subparsers(dest="cmd")

    def filters(p):
        p.add_argument("--op", type=_glob("--op"), action=_Once, help=f"op name or glob ({', '.join(ops.names())})")
        p.add_argument("--backend", type=_glob("--backend"), action=_Once, help="backend name or glob")
        p.add_argument("--variant", type=_glob("--variant"), action="append",
                       help="variant name glob, or a full-id glob like '<op>/*/CM_*'; given "
                            "more than once, a variant matching any of them is selected")
        _add_backend_options(p)

    p = sub.add_parser("list", help="table of ops × backends × variants with availability")
    filters(p)
    p = sub.add_parser("check", help="cross-check variants against the specs with Hypothesis")
    filters(p)
    p.add_argument("--profile", default=None, choices=list(PROFILES),
                   help="Hypothesis profile (default: env REFCONV_PROFILE, else ci)")
    p.add_argument("--examples", type=_count("--examples", 1, MAX_EXAMPLES),
                   help=f"examples per variant, 1 to {MAX_EXAMPLES} (overrides the profile)")
    p.add_argument("--seed", type=int, help="Hypothesis seed, for a reproducible run")
    p.add_argument("--timeout", type=_seconds("--timeout", zero_ok=False, least=MIN_TIMEOUT),
                   help="seconds one example may run before it counts as a hang")
    p.add_argument("--hang-shrink", type=_seconds("--hang-shrink", zero_ok=True), metavar="SECONDS",
                   help="time allowed to shrink each hanging or crashing case from outside the worker "
                        "(default: 4 × the timeout; 0 keeps the case as found)")
    p.add_argument("--jobs", "-j", type=_count("--jobs", 0), default=0,
                   help="worker processes (default 0: the number of CPUs); never more than the variants to check")
    p.add_argument("--database", help="Hypothesis example database: a directory, redis://..., or none "
                                      "(default .refconv/hypothesis, env REFCONV_DATABASE)")
    p.add_argument("--failures-dir", default=os.environ.get("REFCONV_FAILURES", ".refconv/failures"),
                   help="where minimised reproducers are saved (default .refconv/failures)")
    p.add_argument("--no-save", action="store_true", help="do not save reproducer files")
    p.add_argument("--json", help="write a JSON report to this file ('-': to stdout; the matrix and "
                                  "everything else then go to stderr)")
    p.add_argument("--junit", help="write a JUnit XML report to this file")
    p.add_argument("--quiet", "-q", action="store_true", help="no live progress bar")
    p.add_argument("--shard", metavar="K/N", help="check only shard K of N of the selected variants (a stable "
                                                  "split by a hash of the variant id; join with refconv merge)")
    p.add_argument("--tolerance", choices=TOLERANCES, default=None, help=TOLERANCE_HELP)
    p = sub.add_parser("repro", help="replay a saved reproducer file and print the diff")
    p.add_argument("file")
    p.add_argument("--params", help="override launch params, e.g. 'bx=8 by=4'")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds the replay may run before it counts as a hang (default 60)")
    p.add_argument("--tolerance", choices=TOLERANCES,
                   default=None,
                   help="float verdict of the replay (default: env REFCONV_TOLERANCE, else the one the "
                        "reproducer recorded, else proven)")
    _add_backend_options(p)
    p = sub.add_parser("merge", help="join the JSON reports of refconv check --shard runs into one report")
    p.add_argument("reports", nargs="+", metavar="REPORT.json")
    p.add_argument("--json", help="write the merged JSON report to this file ('-': to stdout; the "
                                  "matrix then goes to stderr)")
    p.add_argument("--junit", help="write the merged JUnit XML report to this file")
    sub.add_parser("specs", help="list the reference specs")
    try:
        from .bench.args import add_parser as add_bench
        from .bench.args import add_report_parser
        add_bench(sub, filters)
        add_report_parser(sub)
    except ImportError:
        pass
    return ap


def main(argv=None) -> int:
    ap = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    ns = ap.parse_args(argv)
    ns.argv = argv
    if ns.cmd is None:
        ap.print_help()
        return 0
    handler = {"list": cmd_list, "check": cmd_check, "repro": cmd_repro, "specs": cmd_specs,
               "merge": cmd_merge}.get(ns.cmd)
    if handler is None:
        handler = _bench_handler
    from .procs import Terminated, sigterm_as_interrupt
    try:
        with sigterm_as_interrupt():
            return handler(ns)
    except Terminated:  # SIGTERM (kill, docker stop, a CI cancel): as Ctrl-C, status 143
        return interrupted(terminated=True)
    except UsageError as e:
        err_console.print(f"refconv {ns.cmd}: {esc(e)}")
        return 2
    except KeyboardInterrupt:  # Ctrl-C: the workers are already killed (refconv.pool); one line, status 130
        return interrupted()


def _bench_handler(ns) -> int:
    """``refconv bench`` / ``bench-report``: the one typed options object, built from ``ns`` by
    field name (:mod:`refconv.bench.args` names each option after its field); nothing else of
    ``ns`` enters the bench but the session."""
    import dataclasses

    from .bench import BenchOptions, ReportOptions, cmd_bench, cmd_bench_report
    cls = ReportOptions if ns.cmd == "bench-report" else BenchOptions
    opts = cls(**{f.name: getattr(ns, f.name) for f in dataclasses.fields(cls)})
    return cmd_bench_report(opts) if ns.cmd == "bench-report" else cmd_bench(opts, session_from(ns))


def interrupted(terminated: bool = False) -> int:
    """Report a Ctrl-C (``refconv: interrupted``, exit status 130 = 128 + SIGINT) or a SIGTERM
    (``refconv: terminated``, 143 = 128 + SIGTERM) in one line on stderr.  A second Ctrl-C while
    this is printed is ignored."""
    import signal
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        try:
            sys.stdout.flush()
        except OSError:   # stdout closed or a broken pipe: the line on stderr still says it
            pass
        print(f"refconv: {'terminated' if terminated else 'interrupted'}", file=sys.stderr, flush=True)
    finally:
        signal.signal(signal.SIGINT, old)
    return 143 if terminated else 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
