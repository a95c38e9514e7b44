"""The NVIDIA conformance programs: one PTX kernel per instruction, lanes = inputs.

out[i] = OP(in0[i], in1[i], in2[i]) as raw 32-bit (f64: 64-bit) patterns, for i < n. The instructions the PTX emulator marks
"approximate vs hardware" (gputwin/emu/nv/ptx/fidelity.py) come first, then exact ones as checks.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# (instruction, arity, input kind, output kind); output kind only chooses the destination register type
OPS: tuple[tuple[str, int, str, str], ...] = (
    ("ex2.approx.f32", 1, "f32", "f32"), ("ex2.approx.ftz.f32", 1, "f32", "f32"),
    ("lg2.approx.f32", 1, "f32", "f32"), ("lg2.approx.ftz.f32", 1, "f32", "f32"),
    ("sin.approx.f32", 1, "f32", "f32"), ("cos.approx.f32", 1, "f32", "f32"),
    ("sin.approx.ftz.f32", 1, "f32", "f32"), ("cos.approx.ftz.f32", 1, "f32", "f32"),
    ("rsqrt.approx.f32", 1, "f32", "f32"), ("rsqrt.approx.ftz.f32", 1, "f32", "f32"),
    ("rcp.approx.f32", 1, "f32", "f32"), ("rcp.approx.ftz.f32", 1, "f32", "f32"),
    ("sqrt.approx.f32", 1, "f32", "f32"), ("sqrt.approx.ftz.f32", 1, "f32", "f32"),
    ("tanh.approx.f32", 1, "f32", "f32"), ("rcp.approx.ftz.f64", 1, "f64", "f64"),
    ("rsqrt.approx.f64", 1, "f64", "f64"), ("rsqrt.approx.ftz.f64", 1, "f64", "f64"),
    ("div.approx.f32", 2, "f32", "f32"), ("div.full.f32", 2, "f32", "f32"),
    # exact, as checks
    ("add.rn.f32", 2, "f32", "f32"), ("mul.rn.f32", 2, "f32", "f32"), ("fma.rn.f32", 3, "f32", "f32"),
    ("fma.rn.ftz.f32", 3, "f32", "f32"), ("div.rn.f32", 2, "f32", "f32"), ("rcp.rn.f32", 1, "f32", "f32"),
    ("sqrt.rn.f32", 1, "f32", "f32"), ("min.f32", 2, "f32", "f32"), ("max.f32", 2, "f32", "f32"),
    ("cvt.rni.s32.f32", 1, "f32", "s32"), ("cvt.rzi.s32.f32", 1, "f32", "s32"),
    ("cvt.rmi.s32.f32", 1, "f32", "s32"), ("cvt.rn.f32.s32", 1, "s32", "f32"),
    ("mul.hi.s32", 2, "s32", "s32"), ("mad.lo.s32", 3, "s32", "s32"), ("fma.rn.f64", 3, "f64", "f64"),
    ("div.rn.f64", 2, "f64", "f64"), ("sqrt.rn.f64", 1, "f64", "f64"),
)


@dataclass(frozen=True)
class Program:
    op: str
    arity: int
    in_kind: str
    out_kind: str

    @property
    def dtype(self):
        """Lane width of inputs and output (these programs never mix widths)."""
        return np.uint64 if self.in_kind == "f64" else np.uint32

    @property
    def family(self) -> str:
        return self.op.split(".")[0]

    @property
    def kernel(self) -> str:
        return "hil_" + self.op.replace(".", "_")

    def text(self, arch: str) -> str:
        """The program as recorded and hashed: the PTX module."""
        return self.ptx(arch)

    def image(self, arch: str) -> str:
        return self.ptx(arch)

    def ptx(self, arch: str) -> str:
        wide = self.in_kind == "f64"
        reg = {"f32": "%f", "s32": "%r", "f64": "%fd"}
        b, size, raw = ("b64", 8, "%rd") if wide else ("b32", 4, "%r")
        ins = ", ".join(f"{reg[self.in_kind]}{10 + i}" for i in range(self.arity))
        loads = "".join(f"\tld.global.{b} {raw}{20 + i}, [%rd{10 + i}];\n"
                        f"\tmov.{b} {reg[self.in_kind]}{10 + i}, {raw}{20 + i};\n" for i in range(self.arity))
        addrs = "".join(f"\tld.param.u64 %rd{30 + i}, [in{i}];\n\tadd.s64 %rd{10 + i}, %rd{30 + i}, %rd2;\n"
                        for i in range(self.arity))
        params = ", ".join(["\t.param .u64 out"] + [f".param .u64 in{i}" for i in range(self.arity)] + [".param .u32 n"])
        dst = reg[self.out_kind] + "1"
        return (f".version 7.8\n.target {arch}\n.address_size 64\n\n.visible .entry {self.kernel}({params})\n{{\n"
                "\t.reg .pred %p<2>;\n\t.reg .b32 %r<48>;\n\t.reg .f32 %f<16>;\n\t.reg .f64 %fd<16>;\n"
                "\t.reg .b64 %rd<48>;\n"
                "\tmov.u32 %r2, %ctaid.x;\n\tmov.u32 %r3, %ntid.x;\n\tmov.u32 %r4, %tid.x;\n"
                "\tmad.lo.s32 %r5, %r2, %r3, %r4;\n\tld.param.u32 %r6, [n];\n\tsetp.ge.u32 %p1, %r5, %r6;\n"
                f"\t@%p1 bra DONE;\n\tmul.wide.u32 %rd2, %r5, {size};\n" + addrs + loads
                + f"\t{self.op} {dst}, {ins};\n\tmov.{b} {raw}40, {dst};\n"
                + f"\tld.param.u64 %rd3, [out];\n\tadd.s64 %rd4, %rd3, %rd2;\n\tst.global.{b} [%rd4], {raw}40;\n"
                "DONE:\n\tret;\n}\n")


PROGRAMS: tuple[Program, ...] = tuple(Program(*o) for o in OPS)
