"""The terminal of the ``refconv`` commands: the consoles every command prints to and the live
progress of a ``check``.  Shared by :mod:`refconv.cli` and :mod:`refconv.bench`, so that neither
imports the other for them."""
from __future__ import annotations

import os
import sys

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

#: stdout: tables, live results (no highlighting; when not a terminal, ``COLUMNS`` columns if set,
#: else 200, so a log keeps lines whole)
console = Console(highlight=False, width=None if sys.stdout.isatty() or os.environ.get("COLUMNS", "").isdigit() else 200)
#: stderr: usage and environment errors
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def check_progress(quiet: bool = False) -> Progress:
    """The progress display of ``refconv check``: one bar for the run, one per running variant
    (``disable``d by ``--quiet``)."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[status]}"), TimeElapsedColumn(), console=console,
                    transient=False, disable=quiet)
