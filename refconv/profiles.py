"""Hypothesis profiles: how many examples per variant, how large the drawn problems may be, and
how long one example may run before it counts as a hang.

``ci``        ~25 examples, small shapes: the whole built-in suite under the simulators in minutes.
``dev``       100 examples, medium shapes.
``thorough``  500 examples, the specs' whole former toy ranges (images to 64², matrices to 300).
``gpu``       6 examples at the seed studies' sizes and a GPU's boundaries (3072² images, N = 16384
              matvec, Kronecker n = 100…360, cuconv's 64–1024 channels; rows past 65535 · block,
              results past 2³¹ elements).  Refused on simulators (it would take days there).

The example database (where Hypothesis keeps failing examples so later runs replay them first) is
``.refconv/hypothesis`` by default; ``--database DIR`` or ``REFCONV_DATABASE`` points it elsewhere
(a shared directory, or ``redis://host:port/db`` with the ``hypothesis[redis]`` extra) so several
CI machines share found counterexamples; ``none`` disables it.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Profile:
    """How many examples, how large, how long.

    ``caps``: upper caps per dim (``"h"``) or per op and dim (``"conv2d.c"``, which wins),
    intersected with the variant's declared support; a profile caps every size it draws.
    ``shapes``: per op, whole size configurations (only the size dims) drawn instead of
    independent sizes with probability ``shape_weight`` (the seed studies' own configurations and
    the boundaries a GPU has).  ``multiples``: the k of the favoured sizes ``k·m − 1, k·m, k·m + 1``
    for each launch parameter value m.  ``host_fraction``: the inputs and an array output of one
    problem must fit in this fraction of the host's memory (row-streamed outputs do not count).
    ``real_targets_only``: refuse variants whose backend runs on a simulator (days, not minutes).
    ``sim_work``: on a simulator, the most work units one example may cost (the variant's
    ``cost``, :mod:`refconv.cost`; a unit is about one simulated thread's loop step, 4 µs of
    CPU under a GPU simulator on a 2-core box); launch parameters and sizes are drawn inside it.  None: no budget."""

    name: str
    max_examples: int
    caps: dict = field(default_factory=dict)
    timeout: float = 60.0
    shapes: dict = field(default_factory=dict)
    shape_weight: float = 0.0
    multiples: tuple = (1, 2, 3)
    host_fraction: float = 0.5
    real_targets_only: bool = False
    sim_work: float | None = None

    def cap(self, op: str, key: str):
        return self.caps.get(f"{op}.{key}", self.caps.get(key))


#: the spec domains' old defaults: the full size range the ``thorough`` profile draws
_THOROUGH_CAPS = {"h": 64, "w": 64, "kh": 10, "kw": 10, "filter2d.c": 3, "conv2d.c": 8, "conv2d.n": 3,
                  "conv2d.m": 8, "r": 5, "s": 5, "rows": 300, "cols": 300, "m": 8, "n": 8, "p": 12, "q": 12,
                  "stride": 3, "padding": 2, "dilation": 2}
_CI_CAPS = {**_THOROUGH_CAPS,
            "h": 20, "w": 20, "c": 2, "filter2d.c": 2, "conv2d.c": 2, "kh": 10, "kw": 10, "channels": 4,
            "n": 2, "conv2d.n": 2, "m": 4, "conv2d.m": 4, "r": 3, "s": 3, "rows": 40, "cols": 40, "p": 6, "q": 6}
_DEV_CAPS = {**_CI_CAPS, "h": 40, "w": 40, "c": 3, "filter2d.c": 3, "conv2d.c": 3, "n": 2, "conv2d.n": 2,
             "m": 6, "conv2d.m": 6, "r": 5, "s": 5, "rows": 120, "cols": 120, "p": 10, "q": 10}

#: the GPU-scale profile: independent sizes up to these caps, and whole configurations below
_GPU_CAPS = {"h": 2048, "w": 2048, "kh": 9, "kw": 9, "filter2d.c": 3, "conv2d.c": 64, "conv2d.n": 2,
             "conv2d.m": 64, "conv2d.h": 40, "conv2d.w": 40, "r": 7, "s": 7, "rows": 16384, "cols": 16384,
             "m": 64, "n": 64, "p": 64, "q": 64, "stride": 3, "padding": 3, "dilation": 2}


def _conv(n, h, r, m, c):  # seed 004's Config {N, H, R, M, C}: square H x H images, R x R filters
    return {"n": n, "c": c, "h": h, "w": h, "m": m, "r": r, "s": r}


def _sq(n):
    return {"m": n, "n": n, "p": n, "q": n}


_GPU_SHAPES = {
    # seed 000: 3072² 3x3; k·block·CF ± 1 around it; rows past 65535·by (gridDim.y) and columns past 65535
    "filter2d": [{"h": 3072, "w": 3072, "kh": 3, "kw": 3}, {"h": 3073, "w": 3071, "kh": 3, "kw": 3},
                 {"h": 4095, "w": 4097, "kh": 3, "kw": 3}, {"h": 131073, "w": 17, "kh": 3, "kw": 3},
                 {"h": 5, "w": 65537, "kh": 3, "kw": 3}, {"h": 1025, "w": 2047, "kh": 5, "kw": 5},
                 {"h": 777, "w": 1023, "kh": 7, "kw": 7}],
    # seed 002: 4096 x 3072 Sobel, and the same boundaries
    "sobel": [{"h": 3072, "w": 4096}, {"h": 4096, "w": 3072}, {"h": 3073, "w": 4095},
              {"h": 131073, "w": 9}, {"h": 4, "w": 65537}],
    # seed 002: N = 4096 and 16384; rows / columns past 65535; past 2**31 elements
    "matvec": [{"rows": 4096, "cols": 4096}, {"rows": 16384, "cols": 16384}, {"rows": 16385, "cols": 16383},
               {"rows": 65537, "cols": 33}, {"rows": 33, "cols": 65537}, {"rows": 65537, "cols": 32769}],
    # seed 003: n = 100 ... 360 (216: more than 2**31 elements; >= 250: only row-streamed variants
    # fit the host); m*p past 65535*8 rows; n*q past 2**31 / 8
    "kron": [_sq(100), _sq(200), _sq(216), _sq(300), _sq(360),
             {"m": 1025, "n": 1, "p": 513, "q": 3}, {"m": 3, "n": 257, "p": 2, "q": 257}],
    # seed 004: T3-1x1 A/B/C, T4-3x3 A/B, T5-5x5 A, E1-E4
    "conv2d": [_conv(1, 7, 1, 256, 832), _conv(1, 14, 1, 1024, 256), _conv(1, 27, 1, 256, 64),
               _conv(1, 4, 3, 384, 192), _conv(1, 13, 3, 384, 384), _conv(1, 7, 5, 128, 48),
               _conv(1, 32, 3, 64, 64), _conv(1, 32, 3, 128, 128), _conv(1, 64, 3, 128, 128),
               _conv(1, 64, 3, 256, 256)],
}

#: work units one example may cost on a simulator (refconv.cost): ci about 0.5 s of CPU at most
SIM_WORK = {"ci": 125_000, "dev": 1_000_000, "thorough": 4_000_000}

PROFILES = {
    "ci": Profile("ci", 25, _CI_CAPS, timeout=60.0, sim_work=SIM_WORK["ci"]),
    "dev": Profile("dev", 100, _DEV_CAPS, timeout=120.0, sim_work=SIM_WORK["dev"]),
    "thorough": Profile("thorough", 500, _THOROUGH_CAPS, timeout=300.0, sim_work=SIM_WORK["thorough"]),
    "gpu": Profile("gpu", 6, _GPU_CAPS, timeout=600.0, shapes=_GPU_SHAPES, shape_weight=0.75,
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
