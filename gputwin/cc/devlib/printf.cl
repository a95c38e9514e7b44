/* printf's side of gputwin's device library, linked as an object (ld.lld --gc-sections keeps it only for
   kernels that print): clang lowers OpenCL printf in the back end, and HIP's buffered printf in the front
   end, into calls to __printf_alloc, after builtin bitcode is linked. Protocol: gputwin/abi/printf.py. */
#include "implicit.h"

/* ---- printf: reserve a record in the buffer the hidden_printf_buffer argument points at ----
   Buffer: uint write offset, uint size of the whole buffer, then records from byte 8 (ROCm's layout).
   The offset only grows, also for a record that does not fit, so the driver can tell how much was lost. */
__global char *__printf_alloc(uint bytes) {
  __global uint *buf = (__global uint *)GT_PRINTF_BUFFER();
  if (buf == 0) return 0;
  uint size = buf[1];
  uint offset = __opencl_atomic_fetch_add((volatile __global atomic_uint *)buf, bytes, memory_order_relaxed,
                                          memory_scope_device);
  if ((ulong)offset + bytes + 8 > size) return 0;
  return (__global char *)buf + 8 + offset;
}
