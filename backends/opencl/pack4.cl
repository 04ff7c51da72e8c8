/* Shared by filter2d_best.cl and sobel_best.cl (prepended by their modules, which then reset the
 * line numbering with #line so that build logs quote each kernel file's own lines).
 * pack4: the low bytes of a, b, c, d packed into one word (a lowest); three byte permutes (PTX
 * prmt) with -DUSE_PTX, the portable uchar4 otherwise. */
inline uint pack4(const uint a, const uint b, const uint c, const uint d)
{
#ifdef USE_PTX
    uint ab, cd, r;
    asm("prmt.b32 %0, %1, %2, 0x0040;" : "=r"(ab) : "r"(a), "r"(b));
    asm("prmt.b32 %0, %1, %2, 0x0040;" : "=r"(cd) : "r"(c), "r"(d));
    asm("prmt.b32 %0, %1, %2, 0x5410;" : "=r"(r) : "r"(ab), "r"(cd));
    return r;
#else
    return as_uint((uchar4)((uchar)a, (uchar)b, (uchar)c, (uchar)d));
#endif
}
