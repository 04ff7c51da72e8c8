/* Oclgrind probe: the high half of x[0] below the low half of x[1], (a >> 16) | (b << 16).
 * Well-defined OpenCL C (unsigned shifts by 16 of 32-bit values): x = {0x11112222, 0x33334444}
 * gives 0x44441111 on PoCL.  Clang (inside Oclgrind 21.10) turns the expression into the LLVM
 * funnel-shift intrinsic llvm.fshl.i32, which Oclgrind's interpreter does not implement:
 * clCreateKernel fails (INVALID_KERNEL_NAME) after "OCLGRIND FATAL ERROR ... Undefined external
 * function: llvm.fshl.i32" (https://github.com/jrprice/Oclgrind/issues/205).  upsample() gives the
 * same bits and runs (probe_upsample), which is what filter2d_best.cl does off NVIDIA. */
__kernel void probe(__global const uint *x, __global uint *out)
{
    out[0] = (x[0] >> 16) | (x[1] << 16);
}

__kernel void probe_upsample(__global const uint *x, __global uint *out)
{
    out[0] = upsample((ushort)x[1], (ushort)(x[0] >> 16));
}
