"""The options of ``refconv bench`` and ``refconv bench-report``, typed and checked once.

The command line builds one :class:`BenchOptions` (or :class:`ReportOptions`) from its parsed
arguments, and nothing else of the command line reaches the bench: the field names are the
options' names (``--flush-bytes`` -> ``flush_bytes``).  A value out of range raises
:class:`~refconv.errors.UsageError` naming the option, what was given and what is accepted, before anything runs.  The rows get the
part they need as a :class:`RowOptions`.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError
from ..procs import MIN_TIMEOUT

#: seconds one row may take by default: a paper-size Kronecker row (kron-360 streamed: checking 134
#: GB of result by row blocks on the host, then timing) fits
DEFAULT_TIMEOUT = 1200.0
#: bytes of the copy that measures bandwidth: large enough to leave an H100's 50 MB L2
COPY_BYTES = 256 << 20
#: bytes a GPU backend overwrites before each timed launch (cold L2, busy device): > 2x that L2
FLUSH_BYTES = 128 << 20


@dataclass(frozen=True)
class RowOptions:
    """What every row's timing needs: ``repeat`` timed runs (``--repeat``), the L2 flush before each
    GPU launch (``--flush-bytes``), the per-row time budget (``--budget``, None: none) and the size
    of the bandwidth copy (``--copy-bytes``)."""

    repeat: int = 30
    flush_bytes: int = 0
    budget: float | None = None
    copy_bytes: int = COPY_BYTES


@dataclass(frozen=True)
class BenchOptions:
    """``refconv bench``'s own options (the variant selection and backend options travel in the
    :class:`refconv.session.Session`).  ``preset``: the ``--preset`` values as given (names, globs,
    comma lists); empty: one problem per op at ``scale``."""

    preset: tuple[str, ...] = ()
    list_presets: bool = False
    scale: str = "small"
    repeat: int = 30
    budget: float | None = None
    timeout: float = DEFAULT_TIMEOUT
    baseline: str = "auto"
    peers: str = "auto"
    copy_bytes: int = COPY_BYTES
    flush_bytes: int = FLUSH_BYTES
    json: str | None = None
    markdown: str | None = None
    plots: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "preset", tuple(self.preset or ()))
        if self.repeat < 1:
            raise UsageError(f"--repeat must be >= 1, got {self.repeat}")
        if self.budget is not None and not self.budget > 0:
            raise UsageError(f"--budget must be a number of seconds > 0, got {self.budget}")
        if self.copy_bytes < 1:
            raise UsageError(f"--copy-bytes must be >= 1, got {self.copy_bytes}")
        if self.flush_bytes < 0:
            raise UsageError(f"--flush-bytes must be >= 0 (0: no flush), got {self.flush_bytes}")
        if not (self.timeout == 0 or self.timeout >= MIN_TIMEOUT):
            raise UsageError(f"--timeout must be 0 (rows in this process, no limit) or a number of seconds "
                             f">= {MIN_TIMEOUT:g} (the least a hang can be judged by), got {self.timeout}")

    def rows(self) -> RowOptions:
        """The part of these options every row's timing needs."""
        return RowOptions(self.repeat, self.flush_bytes, self.budget, self.copy_bytes)


@dataclass(frozen=True)
class ReportOptions:
    """``refconv bench-report``: the ``--json`` reports to merge and where to write the result."""

    reports: tuple[str, ...]
    json: str | None = None
    markdown: str | None = None
    plots: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "reports", tuple(self.reports))
        if not self.reports:
            raise UsageError("bench-report: no reports given; accepted: one or more JSON files of refconv bench --json")
