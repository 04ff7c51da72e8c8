"""How tight the float verdict is: (half-width of the accepted interval) / (actual error of a
float32 / float64 left-to-right sum) on random standard-normal matvec data, median over the rows,
for a few n, in the default (proven) and the probabilistic tolerance modes.

    .venv/bin/python lab/sweeps/bound_tightness.py
"""
import numpy as np

from refconv.tolerance import acceptance


def main():
    rng = np.random.default_rng(0)
    print("dtype    n     proven  probabilistic   (median bound / actual error over 200 rows)")
    for dt in (np.float32, np.float64):
        for n in (10, 100, 1000, 10000):
            m = rng.standard_normal((200, n)).astype(dt)
            v = rng.standard_normal(n).astype(dt)
            exact = (m.astype(np.longdouble) * v.astype(np.longdouble)).sum(1)
            acc = np.zeros(200, dt)
            for k in range(n):
                acc = acc + m[:, k] * v[k]
            err = np.abs(acc.astype(np.longdouble) - exact).astype(np.float64)
            ok = err > 0
            row = []
            for mode in ("proven", "probabilistic"):
                a = acceptance("matvec", {"m": m, "v": v}, {}, mode=mode)
                assert a.check(acc).ok
                half = (a.accepted.hi.astype(np.float64) - a.accepted.lo.astype(np.float64)) / 2
                row.append(np.median(half[ok] / err[ok]))
            print(f"{np.dtype(dt).name:8s} {n:<5d} {row[0]:9.3g} {row[1]:9.3g}")


if __name__ == "__main__":
    main()
