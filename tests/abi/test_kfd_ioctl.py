"""gputwin.abi.kfd_ioctl against the C header itself: every struct's size and field offsets and every
request number are checked by the C compiler (static assertions), when the host has the uapi header."""
import ctypes
import os
import re
import subprocess

import pytest

from gputwin.abi import ioctl
from gputwin.abi import kfd_ioctl as k
from tests.oracles import oracle

HEADER = "/usr/include/linux/kfd_ioctl.h"

# what appeared after a given minor version (so an older host header can still check the rest)
_ADDED_IN = {"kfd_ioctl_runtime_enable_args": 13, "kfd_runtime_info": 13, "AMDKFD_IOC_RUNTIME_ENABLE": 13,
             "kfd_ioctl_get_available_memory_args": 9, "AMDKFD_IOC_AVAILABLE_MEMORY": 9,
             "kfd_hsa_signal_event_data": 14, "kfd_event_data.signal_event_data": 14,
             "kfd_hsa_memory_exception_data.ErrorType": 10}


def _structs():
    return {name: obj for name, obj in vars(k).items()
            if name.startswith("kfd_") and isinstance(obj, type) and issubclass(obj, ctypes.Structure)}


def _requests():
    return {name: value for name, value in vars(k).items() if name.startswith("AMDKFD_IOC_")}


def test_every_request_encodes_its_struct_size_and_kfd_type():
    for request, (name, struct) in k.IOCTLS.items():
        assert ioctl.IOC_TYPE(request) == ord("K"), name
        assert ioctl.IOC_SIZE(request) == ctypes.sizeof(struct), name
        assert k.AMDKFD_COMMAND_START <= ioctl.IOC_NR(request) < k.AMDKFD_COMMAND_END, name
    assert set(k.IOCTLS) == set(_requests().values())


def test_event_data_union_members_alias_the_same_bytes():
    ev = k.kfd_event_data()
    ev.memory_exception_data.va = 0x1234_5678_9ABC
    assert ev.signal_event_data.last_event_age == ev.memory_exception_data.failure.NotPresent | (
        ev.memory_exception_data.failure.ReadOnly << 32)
    assert k.kfd_event_data.event_id.offset == 40


@oracle("clang-19")
@pytest.mark.skipif(not os.path.exists(HEADER), reason=f"needs the uapi header {HEADER} (apt install linux-libc-dev)")
def test_layouts_and_request_numbers_match_the_host_uapi_header(tmp_path):
    minor = int(re.search(r"KFD_IOCTL_MINOR_VERSION\s+(\d+)", open(HEADER).read()).group(1))
    skip = {name for name, version in _ADDED_IN.items() if version > minor}
    (tmp_path / "drm").mkdir()
    (tmp_path / "drm" / "drm.h").write_text("#include <linux/types.h>\n")  # kfd_ioctl.h needs only the types
    lines = ["#include <stddef.h>", "#include <linux/kfd_ioctl.h>"]
    for name, struct in _structs().items():
        if name in skip:
            continue
        lines.append(f"_Static_assert(sizeof(struct {name}) == {ctypes.sizeof(struct)}, \"size {name}\");")
        for field, *_ in struct._fields_:
            if field == "_u" or f"{name}.{field}" in skip:
                continue
            lines.append(f"_Static_assert(offsetof(struct {name}, {field}) == {getattr(struct, field).offset}, "
                         f"\"offset {name}.{field}\");")
    for name, value in _requests().items():
        if name not in skip:
            lines.append(f"_Static_assert({name} == {value}ULL, \"request {name}\");")
    src = tmp_path / "check.c"
    src.write_text("\n".join(lines) + "\n")
    res = subprocess.run(["clang-19", "-fsyntax-only", "-I", str(tmp_path), str(src)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-3000:]
