"""``python -m refconv.tooling.cuda.compile_check --worker JOB.json``: one compile-check worker
(started by :func:`refconv.tooling.cuda.compile_check.preflight`; JSON lines on stdin / stdout)."""
import sys

if len(sys.argv) == 3 and sys.argv[1] == "--worker":
    from ._worker import worker
    worker(sys.argv[2])
else:
    print("usage: python -m refconv.tooling.cuda.compile_check --worker JOB.json", file=sys.stderr)
    sys.exit(2)
