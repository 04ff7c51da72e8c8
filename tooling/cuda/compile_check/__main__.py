"""``python -m refconv.tooling.cuda.compile_check --worker IN.json OUT.json``: one
compile-check worker (started by :func:`refconv.tooling.cuda.compile_check.preflight`)."""
import sys

if len(sys.argv) == 4 and sys.argv[1] == "--worker":
    from ._worker import worker
    worker(sys.argv[2], sys.argv[3])
else:
    print("usage: python -m refconv.tooling.cuda.compile_check --worker IN.json OUT.json",
          file=sys.stderr)
    sys.exit(2)
