"""numba_cpu keeps its compiled kernels in numba's on-disk cache (``backends/numba_cpu/_util.njit``):
a second process loads them instead of compiling, and where no cache folder can be written the
kernels still compile and run."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

_RUN_MATVEC = """
import json, numpy as np
from refconv.backends.numba_cpu import matvec
m = np.arange(12, dtype=np.float32).reshape(3, 4); v = np.ones(4, np.float32)
out = matvec._matvec(m, v, np.empty(3, np.float32), 8, 1)
st = matvec._matvec.stats
print(json.dumps({"out": out.tolist(), "hits": sum(st.cache_hits.values()), "misses": sum(st.cache_misses.values())}))
"""


def _run(env):
    p = subprocess.run([sys.executable, "-c", _RUN_MATVEC], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_compiled_kernel_from_the_disk_cache(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    first, second = _run(env), _run(env)
    assert first["out"] == second["out"] == [6.0, 22.0, 38.0]
    assert (first["hits"], first["misses"]) == (0, 1)
    assert (second["hits"], second["misses"]) == (1, 0)


def test_a_function_numba_cannot_cache_is_compiled_in_memory_and_runs():
    from refconv.backends.numba_cpu._util import njit
    ns: dict = {}
    exec("def twice(a):\n    return a * 2\n", ns)      # no source file: numba has no cache folder for it
    f = njit(ns["twice"])
    assert f(np.int64(21)) == 42
    assert type(f._cache).__name__ == "NullCache"          # numba's in-memory-only cache
