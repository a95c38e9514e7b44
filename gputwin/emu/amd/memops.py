"""The compare functions of PM4 WAIT_REG_MEM and SDMA POLL_REGMEM (bulk copy/fill: gputwin/emu/memops.py)."""
from __future__ import annotations

import operator

# function code (WAIT_REG_MEM_FUNCTION / SDMA_PKT_POLL_REGMEM_HEADER_func) -> (masked value, reference) test
COMPARE = {
    0: lambda v, ref: True,
    1: operator.lt, 2: operator.le, 3: operator.eq, 4: operator.ne, 5: operator.ge, 6: operator.gt,
}
