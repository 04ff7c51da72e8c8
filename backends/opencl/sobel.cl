/* Sobel gradient magnitude (seed 002, Kim et al.): gray uint8 or interleaved RGB/RGBA uint8
 * (CH = 0, 3, 4) converted in the kernel to float32 gray (0.299f*R + 0.587f*G) + 0.114f*B;
 * Gx, Gy accumulated from +0 in the spec's order (Gx row-major, Gy column-major, zero taps
 * skipped); magnitude |Gx|+|Gy| (l1) or sqrt(Gx*Gx+Gy*Gy) (l2); valid boundary: only the interior
 * of the H x W output is written; conversion to uchar: trunc or round-to-nearest-even, then
 * saturate or wrap.  Build with -DCH=<channels>.
 */
#pragma OPENCL FP_CONTRACT OFF
#ifndef CH
#define CH 0
#endif

__constant float KX[9] = {-1.0f, 0.0f, 1.0f, -2.0f, 0.0f, 2.0f, -1.0f, 0.0f, 1.0f};
__constant float KY[9] = {-1.0f, -2.0f, -1.0f, 0.0f, 0.0f, 0.0f, 1.0f, 2.0f, 1.0f};

inline float gray_at(__global const uchar *img, int r, int c, int W)
{
#if CH == 0
    return (float)img[r * W + c];
#else
    __global const uchar *p = img + (size_t)(r * W + c) * CH;
    return (0.299f * (float)p[0] + 0.587f * (float)p[1]) + 0.114f * (float)p[2];
#endif
}

inline float gray_or0(__global const uchar *img, int r, int c, int H, int W)
{
    return (r >= 0 && r < H && c >= 0 && c < W) ? gray_at(img, r, c, W) : 0.0f;
}

inline uchar to_u8(float m, int rte, int wrap)
{
    if (!wrap)
        return rte ? convert_uchar_sat_rte(m) : convert_uchar_sat_rtz(m);
    long v = rte ? convert_long_sat_rte(m) : convert_long_sat_rtz(m);
    return (uchar)(v & 0xFF);
}

/* magnitude of the window p (row-major 3x3) with the __constant masks */
inline float mag_masks(const float p[9], int l2)
{
    float gx = 0.0f, gy = 0.0f;
    for (int i = 0; i < 3; ++i)          /* Gx: row-major */
        for (int j = 0; j < 3; ++j)
            if (KX[i * 3 + j] != 0.0f)
                gx = gx + KX[i * 3 + j] * p[i * 3 + j];
    for (int j = 0; j < 3; ++j)          /* Gy: column-major, as the spec sums it */
        for (int i = 0; i < 3; ++i)
            if (KY[i * 3 + j] != 0.0f)
                gy = gy + KY[i * 3 + j] * p[i * 3 + j];
    return l2 ? sqrt(gx * gx + gy * gy) : fabs(gx) + fabs(gy);
}

#define ARGS __global const uchar * restrict img, __global uchar * restrict out, \
             const int H, const int W, const int l2, const int rte, const int wrap

/* gmem: every tap read from global memory, masks in __constant. */
__kernel void gmem(ARGS)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || x > W - 2 || y < 1 || y > H - 2)
        return;
    float p[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            p[i * 3 + j] = gray_at(img, y - 1 + i, x - 1 + j, W);
    out[y * W + x] = to_u8(mag_masks(p, l2), rte, wrap);
}

/* the (bx+2) x (by+2) gray tile around a bx x by work-group, then the interior compute */
#define TILE_COMPUTE()                                                                  \
    barrier(CLK_LOCAL_MEM_FENCE);                                                       \
    if (x >= 1 && x <= W - 2 && y >= 1 && y <= H - 2) {                                 \
        float p[9];                                                                     \
        for (int i = 0; i < 3; ++i)                                                     \
            for (int j = 0; j < 3; ++j)                                                 \
                p[i * 3 + j] = t[(ly + i) * TW + lx + j];                               \
        out[y * W + x] = to_u8(mag_masks(p, l2), rte, wrap);                            \
    }

#define TILE_SETUP()                                                                    \
    const int lx = get_local_id(0), ly = get_local_id(1);                               \
    const int bx = get_local_size(0), by = get_local_size(1);                           \
    const int x = get_global_id(0), y = get_global_id(1);                               \
    const int TW = bx + 2;                                                              \
    (void)by;

/* method I: each item copies its pixel; edge items also the halo next to them, corner items
 * the corner (all four corners: the listing forgets the bottom-right one). */
__kernel void smem_if(ARGS, __local float *t)
{
    TILE_SETUP();
    t[(ly + 1) * TW + lx + 1] = gray_or0(img, y, x, H, W);
    if (lx == 0)      t[(ly + 1) * TW + 0]      = gray_or0(img, y, x - 1, H, W);
    if (lx == bx - 1) t[(ly + 1) * TW + bx + 1] = gray_or0(img, y, x + 1, H, W);
    if (ly == 0)      t[lx + 1]                 = gray_or0(img, y - 1, x, H, W);
    if (ly == by - 1) t[(by + 1) * TW + lx + 1] = gray_or0(img, y + 1, x, H, W);
    if (lx == 0 && ly == 0)           t[0]                     = gray_or0(img, y - 1, x - 1, H, W);
    if (lx == bx - 1 && ly == 0)      t[bx + 1]                = gray_or0(img, y - 1, x + 1, H, W);
    if (lx == 0 && ly == by - 1)      t[(by + 1) * TW]         = gray_or0(img, y + 1, x - 1, H, W);
    if (lx == bx - 1 && ly == by - 1) t[(by + 1) * TW + bx + 1] = gray_or0(img, y + 1, x + 1, H, W);
    TILE_COMPUTE();
}

/* method II: four block-sized copies (offsets (0,0), (2,0), (0,2), (2,2)), no ifs.  The copies
 * overlap, so each is followed by a barrier (two items writing the same cell without one is a
 * write-write race, even with equal values).  Needs bx >= 2 and by >= 2 to cover the tile. */
__kernel void smem_4copy(ARGS, __local float *t)
{
    TILE_SETUP();
    t[ly * TW + lx]             = gray_or0(img, y - 1, x - 1, H, W);
    barrier(CLK_LOCAL_MEM_FENCE);
    t[ly * TW + lx + 2]         = gray_or0(img, y - 1, x + 1, H, W);
    barrier(CLK_LOCAL_MEM_FENCE);
    t[(ly + 2) * TW + lx]       = gray_or0(img, y + 1, x - 1, H, W);
    barrier(CLK_LOCAL_MEM_FENCE);
    t[(ly + 2) * TW + lx + 2]   = gray_or0(img, y + 1, x + 1, H, W);
    TILE_COMPUTE();
}

/* method III: the tile filled linearly, item l copies cells l and l + bx*by (div / mod index
 * arithmetic); needs (bx+2)*(by+2) <= 2*bx*by. */
__kernel void smem_linear(ARGS, __local float *t)
{
    TILE_SETUP();
    const int n = bx * (by) , cells = TW * (by + 2);
    const int tx0 = get_group_id(0) * bx - 1, ty0 = get_group_id(1) * by - 1;
    const int l = ly * bx + lx;
    for (int k = 0; k < 2; ++k) {
        const int i = l + k * n;
        if (i < cells)
            t[i] = gray_or0(img, ty0 + i / TW, tx0 + i % TW, H, W);
    }
    TILE_COMPUTE();
}

/* method IV: work-group bx x 2; a bx x 6 tile filled with three bx x 2 copies; the block
 * computes (bx-2) columns x 4 rows: two passes of the 2 rows, the last 2 columns' results
 * are discarded.  Tile column c is image column get_group_id(0)*(bx-2) + c - 1... (see host). */
__kernel void smem_rows2(ARGS, __local float *t)
{
    const int lx = get_local_id(0), ly = get_local_id(1), bx = get_local_size(0);
    const int c0 = get_group_id(0) * (bx - 2);       /* image column of tile column 0 */
    const int r0 = get_group_id(1) * 4 - 1;          /* image row of tile row 0 */
    const int xi = c0 + lx;
    t[ly * bx + lx]       = gray_or0(img, r0 + ly, xi, H, W);
    t[(ly + 2) * bx + lx] = gray_or0(img, r0 + ly + 2, xi, H, W);
    t[(ly + 4) * bx + lx] = gray_or0(img, r0 + ly + 4, xi, H, W);
    barrier(CLK_LOCAL_MEM_FENCE);
    const int x = xi + 1;                            /* output column: tile centre lx + 1 */
    for (int pass = 0; pass < 2; ++pass) {
        const int tr = ly + 2 * pass;                /* top tile row of this window */
        const int y = r0 + tr + 1;
        if (lx < bx - 2 && x <= W - 2 && y >= 1 && y <= H - 2) {
            float p[9];
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j)
                    p[i * 3 + j] = t[(tr + i) * bx + lx + j];
            out[y * W + x] = to_u8(mag_masks(p, l2), rte, wrap);
        }
    }
}

/* texture path + unrolling: the image is an OpenCL image2d_t (CL_R or CL_RGBA, UNSIGNED_INT8)
 * read through the image object (the paper's 1-D texture), every tap written out.  The reads are
 * sampler-less (OpenCL 1.2 read_imageui(image, int2): integer coordinates, no filtering): every
 * coordinate lies inside the image (only interior outputs are computed), so a sampler's
 * addressing mode never applies. */
inline float tex_gray(read_only image2d_t im, int r, int c)
{
    const uint4 v = read_imageui(im, (int2)(c, r));
#if CH == 0
    return (float)v.x;
#else
    return (0.299f * (float)v.x + 0.587f * (float)v.y) + 0.114f * (float)v.z;
#endif
}

__kernel void unrolled(read_only image2d_t im, __global uchar * restrict out,
                       const int H, const int W, const int l2, const int rte, const int wrap)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || x > W - 2 || y < 1 || y > H - 2)
        return;
    const float p00 = tex_gray(im, y - 1, x - 1), p01 = tex_gray(im, y - 1, x), p02 = tex_gray(im, y - 1, x + 1);
    const float p10 = tex_gray(im, y, x - 1),                                   p12 = tex_gray(im, y, x + 1);
    const float p20 = tex_gray(im, y + 1, x - 1), p21 = tex_gray(im, y + 1, x), p22 = tex_gray(im, y + 1, x + 1);
    float gx = 0.0f, gy = 0.0f;
    gx = gx - p00; gx = gx + p02; gx = gx - 2.0f * p10; gx = gx + 2.0f * p12; gx = gx - p20; gx = gx + p22;
    gy = gy - p00; gy = gy + p20; gy = gy - 2.0f * p01; gy = gy + 2.0f * p21; gy = gy - p02; gy = gy + p22;
    const float m = l2 ? sqrt(gx * gx + gy * gy) : fabs(gx) + fabs(gy);
    out[y * W + x] = to_u8(m, rte, wrap);
}
