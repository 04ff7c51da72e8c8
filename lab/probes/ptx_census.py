"""Count the PTX instructions of numba_cuda kernels by kind, without a GPU: each named variant is
run on a small problem against the compile check's fake device (its launches are recorded, not
executed), each launched kernel is compiled to PTX with numba-cuda/NVVM, and the instructions of
its body are counted: 64-bit integer arithmetic (add/sub/mul/mad/div/rem/shl/shr on s64/u64),
32-bit integer arithmetic, float arithmetic, conversions, global/shared/constant loads and
stores, branches.  Static counts of the compiled body (loops counted once).

With SASS=1 each kernel is also assembled for sm_90 (``ptxas`` found as the compile check finds it,
then ``cuobjdump -sass`` from PATH or triton's bundled copy) and its machine instructions counted: the whole body,
and the body of its innermost loop (from a backward branch's target to the branch) by opcode, which
with a variant's per-iteration outputs gives instructions an output without a GPU; ``ptxas -v``'s
register count follows the count.

usage: [PTX_DUMP=FILE] [SASS=1 [SASS_DUMP=FILE] [MAXRREG=N]] [PARAMS='k=v ...'] python lab/probes/ptx_census.py VARIANT_ID[=PROBLEM] ...   (default problem: the op's dev size)
"""
import collections
import os
import re
import sys

os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
import numpy as np  # noqa: E402

if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack
from numba import cuda  # noqa: E402

from refconv.tooling.cuda.compile_check import find_ptxas  # noqa: E402
# The public kit has no in-process way to record a variant's launches without a GPU: the compile
# check's trace (refconv.tooling.cuda.compile_check.trace) runs them in worker processes and hands
# back records, not the dispatchers and argument types this census compiles to PTX.  So the probe
# installs the compile check's fake device itself, the one private module it reaches.
from refconv.tooling.cuda.compile_check._fake_device import install_fakes  # noqa: E402

CC = (9, 0)
launches = []
install_fakes(CC, lambda disp, argtypes, lc: launches.append((disp, argtypes)))
from refconv import registry  # noqa: E402
from refconv.checking import call_run, scratch_output  # noqa: E402
from refconv.problem import Problem  # noqa: E402

DEFAULT = {
    "sobel": "sobel:dtype=uint8,channels=4,h=66,w=70:magnitude=l1,boundary=valid,out_dtype=uint8,cast=saturate,rounding=trunc:image=random.1",
    "filter2d": "filter2d:dtype=uint8,c=0,h=66,w=70,kh=3,kw=3:boundary=valid,flip=0,accumulator=int,shift=4,rounding=trunc,cast=wrap:image=random.3,weights=exact.4",
    "matvec": "matvec:dtype=float32,rows=256,cols=256::m=random.1,v=random.2",
    "conv2d": "conv2d:dtype=float32,n=1,c=8,h=16,w=16,m=8,r=3,s=3,groups=1,bias=0:stride=1,padding=1,dilation=1:x=random.1,w=random.2",
}


def kind(op: str) -> str:
    parts = op.split(".")
    name = parts[0]
    t = parts[-1] if len(parts) > 1 else ""
    if name in ("ld", "ldu"):
        return "load " + ("global" if "global" in parts else "shared" if "shared" in parts
                          else "const" if "const" in parts else "param" if "param" in parts else "other")
    if name == "st":
        return "store " + ("global" if "global" in parts else "shared" if "shared" in parts else "other")
    if name in ("bra", "ret", "exit", "bar", "setp", "selp"):
        return {"setp": "compare", "selp": "select"}.get(name, "branch/sync")
    if name == "cvt" or name == "cvta":
        return "convert"
    if t in ("s64", "u64", "b64") and name in ("add", "sub", "mul", "mad", "div", "rem", "shl", "shr", "neg", "and", "or", "xor", "min", "max"):
        return f"int64 {name}" if name in ("div", "rem") else "int64 arith"
    if t in ("s32", "u32", "b32", "s16", "u16") and name in ("add", "sub", "mul", "mad", "div", "rem", "shl", "shr", "neg", "and", "or", "xor", "min", "max"):
        return f"int32 {name}" if name in ("div", "rem") else "int32 arith"
    if t in ("f32", "f64") or name in ("fma", "rcp", "sqrt", "abs"):
        return "float"
    if name == "mov":
        return "move"
    return "other"


def _cuobjdump() -> str:
    """``cuobjdump`` from PATH, else triton's bundled copy."""
    import shutil
    found = shutil.which("cuobjdump")
    if found:
        return found
    import triton
    return os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")


def sass_census(ptx: str) -> str:
    """``SASS n (loop m: OPCODE k, ...)`` of one kernel's PTX assembled for sm_90."""
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        # NVVM may write a newer PTX ISA version than the local ptxas reads; these kernels use
        # nothing newer than PTX 8.0, so the version line is lowered to what the assembler takes
        open(os.path.join(d, "k.ptx"), "w").write(re.sub(r"^\.version \d+\.\d+", ".version 8.0", ptx, flags=re.M))
        ptxas = find_ptxas()      # the compile check's discovery (REFCONV_PTXAS, PATH, CUDA_HOME, /usr/local/cuda*)
        if ptxas is None:
            raise SystemExit("SASS=1 needs ptxas: set REFCONV_PTXAS or put it on PATH")
        cap = ["-maxrregcount", os.environ["MAXRREG"]] if os.environ.get("MAXRREG") else []
        run = subprocess.run([ptxas, "-arch=sm_90", "-O3", "-v", *cap, "k.ptx", "-o", "k.cubin"], cwd=d,
                             capture_output=True, text=True)
        if run.returncode:
            raise SystemExit(f"ptxas failed ({run.returncode}):\n{run.stderr}")
        regs = re.search(r"Used (\d+) registers", run.stderr)
        spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", run.stderr)
        sass = subprocess.run([_cuobjdump(), "-sass", "k.cubin"], cwd=d, check=True,
                              capture_output=True, text=True).stdout
    if os.environ.get("SASS_DUMP"):      # keep the listing: SASS_DUMP=FILE (appended, one kernel after another)
        with open(os.environ["SASS_DUMP"], "a") as f:
            f.write(sass)
    ins = [(int(m.group(1), 16), m.group(2), m.group(3))
           for m in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);", sass)]
    # a loop: a branch to an earlier address (cuobjdump prints targets as addresses), not the
    # trap's branch to itself
    loops = [(int(t.group(1), 16), addr) for addr, op, rest in ins
             if op == "BRA" and (t := re.search(r"0x([0-9a-f]+)", rest)) and int(t.group(1), 16) < addr]
    out = f"SASS {len(ins)}" + (f", {regs.group(1)} registers" if regs else "")
    if spill and spill.group(1) != "0":
        out += f" ({spill.group(1)} bytes spill stores, {spill.group(2)} loads)"
    if loops:
        a, b = min(loops, key=lambda ab: ab[1] - ab[0])
        body = [op.split(".")[0] for addr, op, _ in ins if a <= addr <= b]
        c = collections.Counter(body)
        out += f" (innermost loop {len(body)}: " + ", ".join(f"{k} {n}" for k, n in c.most_common(14)) + ")"
    return out


#: PARAMS='k=v ...': launch parameters over the variants' defaults (e.g. PARAMS='arith=int')
PARAMS = {k: (int(v) if v.lstrip("-").isdigit() else v)
          for k, v in (kv.split("=", 1) for kv in os.environ.get("PARAMS", "").split())}

for arg in sys.argv[1:]:
    vid, _, desc = arg.partition("=")
    v = registry.get(vid)
    problem = Problem.parse(desc or DEFAULT[v.op])
    launches.clear()
    try:
        call_run(v.run, problem, scratch_output(problem, v.writes, v.output), {**v.default_params(), **PARAMS})
    except Exception:  # the fake device returns garbage: host code after the launches may fail
        pass
    seen = set()
    for disp, argtypes in launches:
        key = (id(disp), argtypes)
        if key in seen:
            continue
        seen.add(key)
        ptx, _ = cuda.compile_ptx(disp.py_func, argtypes, cc=CC)
        if os.environ.get("PTX_DUMP"):       # keep the PTX: PTX_DUMP=FILE (appended)
            with open(os.environ["PTX_DUMP"], "a") as f:
                f.write(ptx)
        body = ptx[ptx.index(".entry"):]
        ops = [m.group(1) for m in re.finditer(r"^\s+(?:@!?%p\d+\s+)?([a-z][\w.:]*)\s", body, re.M)
               if not m.group(1).startswith((".reg", ".param", ".loc", ".local", ".shared"))]
        c = collections.Counter(kind(o) for o in ops)
        print(f"{vid} kernel {disp.py_func.__name__}: {len(ops)} PTX instructions: "
              + ", ".join(f"{k} {n}" for k, n in sorted(c.items(), key=lambda x: -x[1])), flush=True)
        if os.environ.get("SASS"):
            print(f"  {sass_census(ptx)}", flush=True)
