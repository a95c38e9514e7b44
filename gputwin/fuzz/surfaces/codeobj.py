"""Corrupted code objects through the public driver path: `dev.load(image, name)` on MOCKAMD:<arch>, then a
launch with arguments laid out as the (possibly corrupted) metadata says.

Two kinds of mutation of the clang fixtures in fixtures/drivers/: raw bytes (flipped or replaced, mostly in
the ELF, program and section headers) and metadata (the NT_AMDGPU_METADATA msgpack decoded, one field of a
kernel or argument set to a hostile value or removed, re-encoded into a note appended to the file, which
the PT_NOTE header and .note section are pointed at). Allowed outcomes: success, or a gputwin error
(CodeObjectError at load; GpuFault/GpuHang/DeviceLost from running it); what the GPU reported to the mock
KFD is checked as on the pm4 surface.
"""
from __future__ import annotations

import copy
import random
import struct

import msgpack

from gputwin.abi.code_object import NT_AMDGPU_METADATA, PT_NOTE, SHT_NOTE
from gputwin.fuzz.surface import Recorder, Surface, register
from gputwin.fuzz.surfaces.isa import CODE_OBJECTS, fixture
from gputwin.fuzz.surfaces.kfd import record_gpu_events

HOSTILE = [0, 1, -1, -4, 3, 2 ** 31, 2 ** 32, 2 ** 40, 2 ** 63, -(2 ** 63), "x", None, [], {}, 1.5, True]
KERNEL_KEYS = [".kernarg_segment_size", ".kernarg_segment_align", ".group_segment_fixed_size",
               ".private_segment_fixed_size", ".wavefront_size", ".sgpr_count", ".vgpr_count",
               ".max_flat_workgroup_size", ".name", ".symbol", ".args", ".uses_dynamic_stack"]
ARG_KEYS = [".offset", ".size", ".value_kind", ".address_space", ".type_name", ".pointee_align"]
VALUE_KINDS = ["global_buffer", "by_value", "dynamic_shared_pointer", "hidden_block_count_x",
               "hidden_group_size_x", "hidden_none", "image", "queue_ptr", "nonsense"]


def relocate_metadata(image: bytes, metadata: dict) -> bytes:
    """The image with its metadata note replaced by one holding `metadata`, appended at the end."""
    desc = msgpack.packb(metadata)
    name = b"AMDGPU\0"
    record = struct.pack("<III", len(name), len(desc), NT_AMDGPU_METADATA) + name.ljust(8, b"\0") + \
        desc + b"\0" * (-len(desc) % 4)
    out = bytearray(image) + b"\0" * (-len(image) % 8)
    where = len(out)
    out += record
    phoff, shoff = struct.unpack_from("<QQ", out, 32)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", out, 54)
    for i in range(phnum):
        at = phoff + i * phentsize
        if struct.unpack_from("<I", out, at)[0] == PT_NOTE:
            struct.pack_into("<Q", out, at + 8, where)                         # p_offset
            struct.pack_into("<QQ", out, at + 32, len(record), len(record))   # p_filesz, p_memsz
    for i in range(shnum):
        at = shoff + i * shentsize
        if struct.unpack_from("<I", out, at + 4)[0] == SHT_NOTE:
            struct.pack_into("<QQ", out, at + 24, where, len(record))         # sh_offset, sh_size
    return bytes(out)


def mutate_metadata(rnd: random.Random, md: dict) -> tuple[dict, str]:
    md = copy.deepcopy(md)
    kernels = md.get("amdhsa.kernels") or [{}]
    kmd = rnd.choice(kernels)
    args = kmd.get(".args") or []
    if args and rnd.random() < 0.5:
        arg = rnd.choice(args)
        key = rnd.choice(ARG_KEYS)
        r = rnd.random()
        if r < 0.15:
            arg.pop(key, None)
            return md, f"{kmd.get('.name')}: arg del {key}"
        value = rnd.choice(VALUE_KINDS) if key == ".value_kind" and r < 0.6 else rnd.choice(HOSTILE)
        arg[key] = value
        return md, f"{kmd.get('.name')}: arg {key} = {value!r}"
    key = rnd.choice(KERNEL_KEYS)
    if rnd.random() < 0.15:
        kmd.pop(key, None)
        return md, f"{kmd.get('.name')}: del {key}"
    value = rnd.choice(HOSTILE)
    kmd[key] = value
    return md, f"{kmd.get('.name')}: {key} = {value!r}"


@register
class CodeObjects(Surface):
    name = "codeobj"
    doc = "ELF byte and msgpack-metadata mutations of clang code objects through dev.load and a launch"

    def generate(self, rnd: random.Random) -> dict:
        arch = rnd.choice(list(CODE_OBJECTS))
        name = rnd.choice(CODE_OBJECTS[arch])
        image, _, kernels = fixture(name)
        case = {"arch": arch, "fixture": name, "kernel": rnd.choice(kernels), "seed": rnd.getrandbits(32)}
        if rnd.random() < 0.5:
            hot = min(len(image), 0x400)
            edits = []
            for _ in range(rnd.choice([1, 1, 2, 4, 8])):
                off = rnd.randrange(hot) if rnd.random() < 0.7 else rnd.randrange(len(image))
                edits.append([off, rnd.choice([image[off] ^ (1 << rnd.randrange(8)), 0, 0xFF, rnd.randrange(256)])])
            case.update(kind="bytes", edits=edits)
        else:
            from gputwin.abi.code_object import CodeObject
            md, what = mutate_metadata(rnd, CodeObject.parse(image).metadata)
            case.update(kind="metadata", metadata=md, change=what)
        return case

    def image(self, case: dict) -> bytes:
        image, _, _ = fixture(case["fixture"])
        if case["kind"] == "metadata":
            return relocate_metadata(image, case["metadata"])
        blob = bytearray(image)
        for off, byte in case["edits"]:
            blob[off] = byte
        return bytes(blob)

    def execute(self, case: dict, rec: Recorder) -> None:
        rnd = random.Random(case["seed"])
        dev, mock = mock_device(case["arch"])
        try:
            prg = rec.step("load", dev.load, self.image(case), case["kernel"])
            if prg is None:
                return
            from gputwin.abi.kernargs import LocalMemory
            args = []
            for a in prg.kernel.info.explicit_args:
                if a.value_kind == "global_buffer":
                    args.append(dev.alloc(1 << 16))
                elif a.value_kind == "dynamic_shared_pointer":
                    args.append(LocalMemory(64))
                else:   # by_value (and kinds the driver should have refused): the bytes the metadata asks for
                    size = min(max(a.size, 0), 1 << 10)
                    args.append(rnd.choice([0, 1, 16]).to_bytes(8, "little")[:size].ljust(size, b"\0"))
            wave = 64 if case["arch"] == "gfx942" else 32
            rec.step("launch", prg, *args, grid=(rnd.choice([1, 2]), 1, 1), block=(wave, 1, 1))
            rec.step("synchronize", dev.synchronize)
            record_gpu_events(rec, mock)
        finally:
            dev.close()


def mock_device(arch: str):
    """(device, mock KFD): what open_device("MOCKAMD:<arch>") opens, with the mock in hand so the GPU's own
    reports can be checked too (a driver-level GpuHang may hide an emulator leak)."""
    from gputwin.drivers.amd.device import AMDDevice
    from gputwin.mock.kernel import MockKernel
    from gputwin.mock.kfd import install
    kernel = MockKernel()
    mock = install(kernel, [arch])
    return AMDDevice(kernel, 0), mock
