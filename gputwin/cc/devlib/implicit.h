/* Where the hidden kernel arguments live, for gputwin's device library (opencl.cl, printf.cl): code
   object v5 reads them at AMDGPUUsage's "Code Object V5 Metadata" offsets from the implicit-argument
   pointer, v4 from the HSA dispatch packet and the v4 hidden arguments. GT_COV is set by `gputwin cc`. */
#ifndef GPUTWIN_IMPLICIT_H
#define GPUTWIN_IMPLICIT_H
#define GT_IMPLICIT(type, offset) (*(__constant type *)((__constant char *)__builtin_amdgcn_implicitarg_ptr() + (offset)))
#if GT_COV >= 5
#define GT_BLOCK_COUNT(d) GT_IMPLICIT(uint, 4 * (d))
#define GT_GROUP_SIZE(d) GT_IMPLICIT(ushort, 12 + 2 * (d))
#define GT_REMAINDER(d) GT_IMPLICIT(ushort, 18 + 2 * (d))
#define GT_GLOBAL_OFFSET(d) GT_IMPLICIT(ulong, 40 + 8 * (d))
#define GT_WORK_DIM() GT_IMPLICIT(ushort, 64)
#define GT_PRINTF_BUFFER() GT_IMPLICIT(ulong, 72)
#else
#define GT_PACKET(type, offset) (*(__constant type *)((__constant char *)__builtin_amdgcn_dispatch_ptr() + (offset)))
#define GT_GLOBAL_OFFSET(d) GT_IMPLICIT(ulong, 8 * (d))
#define GT_WORK_DIM() (GT_PACKET(ushort, 2) & 3)
#define GT_PRINTF_BUFFER() GT_IMPLICIT(ulong, 24)
#endif
#endif
