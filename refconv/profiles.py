"""Hypothesis profiles: how many examples per variant, how large the drawn problems may be, and
how long one example may run before it counts as a hang.

``ci``        ~25 examples, small shapes: the whole built-in suite under the simulators in minutes.
``dev``       100 examples, medium shapes.
``thorough``  500 examples, the specs' whole former toy ranges (images to 64², matrices to 300).
``gpu``       6 examples at the seed studies' sizes and a GPU's boundaries (3072² images, N = 16384
              matvec, Kronecker n = 100…360, cuconv's 64–1024 channels; rows past 65535 · block,
              results past 2³¹ elements).  Refused on simulators (it would take days there).

The sizes per op (caps and the ``gpu`` configurations) are the op records' (``caps``,
``profile_shapes`` in ``specs/<op>.py``); a profile here holds what is the same for every op.

The example database (where Hypothesis keeps failing examples so later runs replay them first) is
``.refconv/hypothesis`` by default; ``--database DIR`` or ``REFCONV_DATABASE`` points it elsewhere
(a shared directory, or ``redis://host:port/db`` with the ``hypothesis[redis]`` extra) so several
CI machines share found counterexamples; ``none`` disables it.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

from . import ops


@dataclass(frozen=True)
class Profile:
    """How many examples, how large, how long.

    A profile caps every size it draws: the cap of a dim is the op record's
    (``OpRecord.caps[profile name]``, next to the spec), intersected with the variant's declared
    support; ``caps`` here overrides it per dim (``"h"``) or per op and dim (``"<op>.h"``, which
    wins), for a profile of one's own.  Whole size configurations (only the size dims), drawn
    instead of independent sizes with probability ``shape_weight``, are the op record's
    ``profile_shapes[profile name]`` (the seed studies' own configurations and the boundaries a
    GPU has, for ``gpu``).  ``multiples``: the k of the favoured sizes ``k·m − 1, k·m, k·m + 1``
    for each launch parameter value m.  ``host_fraction``: the inputs and an array output of one
    problem must fit in this fraction of the host's memory (row-streamed outputs do not count).
    ``real_targets_only``: refuse variants whose backend runs on a simulator (days, not minutes).
    ``sim_work``: on a simulator, the most work units one example may cost (the variant's
    ``cost``, :mod:`refconv.cost`; a unit is about one simulated thread's loop step, a few
    microseconds of CPU under a GPU simulator); launch parameters and sizes are drawn inside it.  None: no budget."""

    name: str
    max_examples: int
    caps: dict = field(default_factory=dict)
    timeout: float = 60.0
    shape_weight: float = 0.0
    multiples: tuple = (1, 2, 3)
    host_fraction: float = 0.5
    real_targets_only: bool = False
    sim_work: float | None = None

    def cap(self, op: str, key: str) -> int | None:
        """The upper cap of dim or option ``key`` of ``op`` (None: uncapped): this profile's own
        ``caps`` (``"<op>.<key>"``, then ``key``), else the op record's ``caps[self.name]``."""
        own = self.caps.get(f"{op}.{key}", self.caps.get(key))
        return own if own is not None else ops.get(op).caps.get(self.name, {}).get(key)

    def configurations(self, op: str) -> tuple:
        """The whole size configurations this profile draws for ``op`` (the op record's
        ``profile_shapes[self.name]``; empty: none)."""
        return tuple(ops.get(op).profile_shapes.get(self.name, ()))


#: work units one example may cost on a simulator (refconv.cost): ci about 0.5 s of CPU at most
SIM_WORK = {"ci": 125_000, "dev": 1_000_000, "thorough": 4_000_000}

PROFILES = {
    "ci": Profile("ci", 25, timeout=60.0, sim_work=SIM_WORK["ci"]),
    "dev": Profile("dev", 100, timeout=120.0, sim_work=SIM_WORK["dev"]),
    "thorough": Profile("thorough", 500, timeout=300.0, sim_work=SIM_WORK["thorough"]),
    "gpu": Profile("gpu", 6, timeout=600.0, shape_weight=0.75,
                   multiples=(1, 2, 3, 17, 64, 96, 128, 256, 512), host_fraction=0.3, real_targets_only=True),
}


def get_profile(name: str, examples: int | None = None, timeout: float | None = None) -> Profile:
    if name not in PROFILES:
        raise ValueError(f"profile {name!r} not accepted; accepted: {', '.join(PROFILES)}")
    p = PROFILES[name]
    if examples is not None:
        if examples < 1:
            raise ValueError(f"--examples must be >= 1, got {examples}")
        p = dataclasses.replace(p, max_examples=examples)
    if timeout is not None:
        if timeout <= 0:
            raise ValueError(f"--timeout must be > 0 seconds, got {timeout}")
        p = dataclasses.replace(p, timeout=timeout)
    return p


def database(spec: str | None = None):
    """A Hypothesis example database from ``spec`` (a directory, ``redis://...`` or ``none``); a
    directory's records the saves that failed (:class:`refconv.exampledb.CheckedDirectoryDatabase`)."""
    from .exampledb import CheckedDirectoryDatabase
    spec = spec or os.environ.get("REFCONV_DATABASE") or os.path.join(".refconv", "hypothesis")
    if spec == "none":
        return None
    if spec.startswith("redis://"):
        try:
            import redis
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError as e:  # pragma: no cover - optional extra
            raise ValueError(f"database {spec!r} needs the redis extra: pip install 'hypothesis[redis]' ({e})")
        return RedisExampleDatabase(redis.Redis.from_url(spec))
    return CheckedDirectoryDatabase(spec)
