"""Hypothesis profiles: how many examples per variant, how large the drawn problems may be, and
how long one example may run before it counts as a hang.

``ci``        ~25 examples, small shapes: the whole built-in suite under the simulators in minutes.
``dev``       100 examples, medium shapes.
``thorough``  500 examples, the variants' full declared shape ranges.

The example database (where Hypothesis keeps failing examples so later runs replay them first) is
``.refconv/hypothesis`` by default; ``--database DIR`` or ``REFCONV_DATABASE`` points it elsewhere
(a shared directory, or ``redis://host:port/db`` with the ``hypothesis[redis]`` extra) so several
CI machines share found counterexamples; ``none`` disables it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Profile:
    name: str
    max_examples: int
    # per-dim upper caps, intersected with the variant's declared support
    caps: dict = field(default_factory=dict)
    timeout: float = 60.0


_CI_CAPS = {"h": 20, "w": 20, "c": 2, "kh": 10, "kw": 10, "channels": 4,
            "n": 2, "m": 4, "r": 3, "s": 3, "rows": 40, "cols": 40, "p": 6, "q": 6}
_DEV_CAPS = {"h": 40, "w": 40, "c": 3, "n": 2, "m": 6, "r": 5, "s": 5, "rows": 120, "cols": 120,
             "p": 10, "q": 10}

PROFILES = {
    "ci": Profile("ci", 25, _CI_CAPS, timeout=60.0),
    "dev": Profile("dev", 100, {**_CI_CAPS, **_DEV_CAPS}, timeout=120.0),
    "thorough": Profile("thorough", 500, {}, timeout=300.0),
}


def get_profile(name: str, examples: int | None = None, timeout: float | None = None) -> Profile:
    if name not in PROFILES:
        raise ValueError(f"profile {name!r} not accepted; accepted: {', '.join(PROFILES)}")
    p = PROFILES[name]
    if examples is not None:
        if examples < 1:
            raise ValueError(f"--examples must be >= 1, got {examples}")
        p = Profile(p.name, examples, p.caps, p.timeout)
    if timeout is not None:
        if timeout <= 0:
            raise ValueError(f"--timeout must be > 0 seconds, got {timeout}")
        p = Profile(p.name, p.max_examples, p.caps, timeout)
    return p


def database(spec: str | None = None):
    """A Hypothesis example database from ``spec`` (a directory, ``redis://...`` or ``none``)."""
    from hypothesis.database import DirectoryBasedExampleDatabase
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
    return DirectoryBasedExampleDatabase(spec)
