/* Oclgrind probe: s = 0, then for t = 0, 1: s = step(x[t] + s, t), the step chosen by nibble t
 * of KINDS (0x211: both kind 1, s | 3), the step function out of line.  Well-defined OpenCL C:
 * x = {0x100, 1} gives ((0x100 | 3) + 1) | 3 = 0x107 on PoCL, and on Oclgrind built with
 * -cl-opt-disable.  Built with optimisation, clang makes of `kind` a `trunc i32 ... to i2` feeding
 * a `switch i2` (clang 15 -O2 does so here); Oclgrind 21.10's trunc keeps the whole byte it stores
 * an i2 in (0x11, not 1) and its switch compares that byte with the zero-extended case value, so no
 * case matches and both steps are skipped: 0x101.  filter2d_best.cl declares its helpers static
 * inline, so that each is inlined into the unrolled tap loop and every tap's kind is a constant
 * there (no switch is left). */
#define KINDS 0x211

uint step(const uint s, const int t)
{
    const int kind = (KINDS >> (4 * t)) & 0xF;
    if (kind == 1)
        return s | 3u;
    if (kind == 2)
        return (s - 3u) | 3u;
    return s;
}

__kernel void probe(__global const uint *x, __global uint *out)
{
    uint s = 0u;
    for (int t = 0; t < 2; ++t)
        s = step(x[t] + s, t);
    out[0] = s;
}
