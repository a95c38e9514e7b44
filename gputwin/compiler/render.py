"""Render a Kernel to LLVM IR text for one target.

The kernel body (statements and pure values) renders the same way for every target; only the frame
differs: how ids are read, where buffers live, and how a barrier is spelled.
- amdgpu: an `amdgpu_kernel` whose explicit arguments are the kernel's parameters (sizes are passed as
  scalars, so no implicit-argument or dispatch-pointer reads are needed); ids from the amdgcn intrinsics.
- nvptx: a `ptx_kernel` with the same parameters; ids from the ptx special registers.
- cpu: one host function `void name(i64 *argv, i64 *fault, i32 gx, i32 gy, i32 gz)` that loops over all
  workgroups and, per barrier-separated phase, over all work-items. argv holds two slots per parameter
  (buffer: address, element count; scalar: its bits); every buffer access is bounds checked and a bad
  one records (1, address, is_write) in `fault` and returns, so the CPU device raises MemoryFault.
  fault[3] holds an iteration budget spent by every loop iteration (work-item and `range` loops);
  when it runs out the code records 2 in fault[0] and returns, so the device raises GpuHang.
"""
from __future__ import annotations

from dataclasses import dataclass

from gputwin.compiler import ir
from gputwin.compiler.halfconv import HALF_HELPERS
from gputwin.compiler.lower import MEM, REG, Lowerer

DENORMAL_IEEE = '"denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee"'
AXES = "xyz"


@dataclass(frozen=True)
class Target:
    name: str        # gfx1100 | gfx1201 | gfx942 | sm_80 | sm_90 | cpu
    kind: str        # amdgpu | nvptx | cpu
    triple: str


AMD_ARCHS = ("gfx1100", "gfx1201", "gfx942")
NV_ARCHS = ("sm_80", "sm_90")


def target(name: str) -> Target:
    if name in AMD_ARCHS:
        return Target(name, "amdgpu", "amdgcn-amd-amdhsa")
    if name in NV_ARCHS:
        return Target(name, "nvptx", "nvptx64-nvidia-cuda")
    if name == "cpu":
        import llvmlite.binding as llvm
        return Target(name, "cpu", llvm.get_process_triple())
    raise ValueError(f"unknown compile target {name!r}; known: {', '.join(AMD_ARCHS + NV_ARCHS)}, cpu")


class Renderer:
    def __init__(self, kern: ir.Kernel, tgt: Target):
        self.k, self.t = kern, tgt
        self.body: list[str] = []
        self.allocas: list[str] = []
        self.decls: set[str] = set()
        self.labels = 0
        self.ids: dict[tuple[str, int], str] = {}     # cpu: loop variables of the group / item loops
        self.lo = Lowerer(self.body, self.leaf)
        self.var_slots: dict[int, str] = {}
        self.loop_md: list[str] = []                   # CPU frame loops' metadata node names
        self.shared_ptr: dict[int, str] = {}
        self.items = kern.local_size[0] * kern.local_size[1] * kern.local_size[2]
        gptr = "ptr addrspace(1)" if tgt.kind != "cpu" else "ptr"
        self.gptr, self.sptr = gptr, ("ptr addrspace(3)" if tgt.kind != "cpu" else "ptr")
        self.aspace = " addrspace(5)" if tgt.kind == "amdgpu" else ""   # private (alloca) pointers
        self.alloca_as = ", addrspace(5)" if tgt.kind == "amdgpu" else ""
        if tgt.kind != "cpu":
            self.shared_ptr = {id(arr): f"@shared{j}" for j, arr in enumerate(kern.shared)}

    # --- helpers ---------------------------------------------------------------------------------
    def label(self, stem: str) -> str:
        self.labels += 1
        return f"{stem}{self.labels}"

    def start(self, label: str):
        self.body.append(f"{label}:")
        self.cur = label

    def ins(self, text: str) -> str:
        return self.lo.ins(text)

    def call_id(self, fn: str) -> str:
        self.decls.add(f"declare i32 @{fn}()")
        return self.ins(f"call i32 @{fn}()")

    def leaf(self, v: ir.Value) -> str:
        if v.op == "param":
            return f"%p{v.arg}"
        if v.op in ("group_id", "local_id"):
            if self.t.kind == "cpu":
                return self.ids[(v.op, v.arg)]
            if self.t.kind == "amdgpu":
                kind = "workgroup" if v.op == "group_id" else "workitem"
                return self.call_id(f"llvm.amdgcn.{kind}.id.{AXES[v.arg]}")
            reg = "ctaid" if v.op == "group_id" else "tid"
            return self.call_id(f"llvm.nvvm.read.ptx.sreg.{reg}.{AXES[v.arg]}")
        raise ir.IRError(f"{v!r} used where it is not visible (internal: renderer found no binding)")

    # --- memory ----------------------------------------------------------------------------------
    def address(self, mem, index: ir.Value, write: bool) -> str:
        idx = self.lo.emit(index)
        if index.dtype == ir.int32:
            idx = self.ins(f"sext i32 {idx} to i64")
        t = MEM[mem.dtype.name]
        if isinstance(mem, ir.Shared):
            base, ptr = self.shared_ptr[id(mem)], self.sptr
            count = str(mem.size)
        else:
            base, ptr = f"%p{mem.index}", self.gptr
            count = f"%n{mem.index}"
        if self.t.kind == "cpu":
            ok = self.ins(f"icmp ult i64 {idx}, {count}")
            good, bad = self.label("inb"), self.label("oob")
            self.body.append(f"  br i1 {ok}, label %{good}, label %{bad}")
            self.start(bad)
            wild = self.ins(f"getelementptr {t}, ptr {base}, i64 {idx}")
            addr = self.ins(f"ptrtoint ptr {wild} to i64")
            f1 = self.ins("getelementptr i64, ptr %fault, i64 1")
            f2 = self.ins("getelementptr i64, ptr %fault, i64 2")
            self.body += ["  store i64 1, ptr %fault", f"  store i64 {addr}, ptr {f1}",
                          f"  store i64 {int(write)}, ptr {f2}", "  ret void"]
            self.start(good)
        return self.ins(f"getelementptr inbounds {t}, {ptr} {base}, i64 {idx}")

    def load(self, st: ir.Load):
        p = self.address(st.mem, st.index, False)
        ptr = self.sptr if isinstance(st.mem, ir.Shared) else self.gptr
        dt = st.mem.dtype
        x = self.ins(f"load {MEM[dt.name]}, {ptr} {p}, align {dt.itemsize}")
        if dt == ir.bool_:
            x = self.ins(f"icmp ne i8 {x}, 0")
        self.lo.bind(st.out, x)

    def store(self, st: ir.Store):
        dt = st.mem.dtype
        x = self.lo.emit(st.value)
        t = MEM[dt.name]
        if dt.is_float and isinstance(st.mem, ir.Buffer):
            x = self.lo.canonical_nan(x, dt)
            t = "i32" if dt == ir.float32 else t
        if dt == ir.bool_:
            x = self.ins(f"zext i1 {x} to i8")
        p = self.address(st.mem, st.index, True)
        ptr = self.sptr if isinstance(st.mem, ir.Shared) else self.gptr
        self.body.append(f"  store {t} {x}, {ptr} {p}, align {dt.itemsize}")

    # --- control flow ----------------------------------------------------------------------------
    def loop(self, start: str, stop: str, step: int, ty: str, body, frame: bool = False) -> None:
        """for (i = start; step > 0 ? i < stop : i > stop; i += step) body(i). `frame` marks the CPU's
        workgroup / work-item loops: not unrolled or vectorised (compile time; the bits are the same)."""
        head, loop, exit_ = self.label("head"), self.label("body"), self.label("exit")
        pre = self.cur
        self.body.append(f"  br label %{head}")
        self.start(head)
        phi_at = len(self.body)
        i = self.lo.tmp()
        c = self.ins(f"icmp {'slt' if step > 0 else 'sgt'} {ty} {i}, {stop}")
        self.body.append(f"  br i1 {c}, label %{loop}, label %{exit_}")
        self.start(loop)
        self.lo.push()
        body(i)
        self.lo.pop()
        nxt = self.ins(f"add {ty} {i}, {step}")
        if self.t.kind == "cpu":
            self.spend_budget()
        md = ""
        if frame:
            self.loop_md.append(f"!{100 + len(self.loop_md)}")
            md = f", !llvm.loop {self.loop_md[-1]}"
        self.body.append(f"  br label %{head}{md}")
        self.body.insert(phi_at, f"  {i} = phi {ty} [ {start}, %{pre} ], [ {nxt}, %{self.cur} ]")
        self.start(exit_)

    def spend_budget(self):
        """CPU only: one loop iteration less of the launch's budget; at zero record a hang and return."""
        left = self.ins("load i64, ptr %budget")
        left = self.ins(f"sub i64 {left}, 1")
        self.body.append(f"  store i64 {left}, ptr %budget")
        out = self.ins(f"icmp eq i64 {left}, 0")
        hang, go = self.label("hang"), self.label("go")
        self.body.append(f"  br i1 {out}, label %{hang}, label %{go}")
        self.start(hang)
        self.body += ["  store i64 2, ptr %fault", "  ret void"]
        self.start(go)

    def block(self, blk: ir.Block):
        for st in blk.stmts:
            self.stmt(st)

    def stmt(self, st):
        if isinstance(st, ir.Load):
            self.load(st)
        elif isinstance(st, ir.Store):
            self.store(st)
        elif isinstance(st, ir.If):
            c = self.lo.emit(st.cond)
            then, end = self.label("then"), self.label("endif")
            self.body.append(f"  br i1 {c}, label %{then}, label %{end}")
            self.start(then)
            self.lo.push()
            self.block(st.body)
            self.lo.pop()
            self.body.append(f"  br label %{end}")
            self.start(end)
        elif isinstance(st, ir.Range):
            ty = REG[st.var.dtype.name]
            start, stop = self.lo.emit(st.start), self.lo.emit(st.stop)

            def body(i):
                self.lo.bind(st.var, i)
                self.block(st.body)
            self.loop(start, stop, st.step, ty, body)
        elif isinstance(st, ir.VarDecl):
            slot = f"%v{len(self.var_slots)}"
            self.var_slots[id(st.var)] = slot
            t = REG[st.var.dtype.name]
            if self.per_item(st.var):
                self.allocas.append(f"  {slot} = alloca [{self.items} x {t}], align 8")
            else:
                self.allocas.append(f"  {slot} = alloca {t}, align 8{self.alloca_as}")
            self.body.append(f"  store {t} {self.lo.emit(st.init)}, ptr{self.aspace} {self.var_ptr(st.var)}")
        elif isinstance(st, ir.VarGet):
            t = REG[st.var.dtype.name]
            self.lo.bind(st.out, self.ins(f"load {t}, ptr{self.aspace} {self.var_ptr(st.var)}"))
        elif isinstance(st, ir.VarSet):
            t = REG[st.var.dtype.name]
            self.body.append(f"  store {t} {self.lo.emit(st.value)}, ptr{self.aspace} {self.var_ptr(st.var)}")
        elif isinstance(st, ir.Barrier):
            self.barrier()
        else:
            raise ir.IRError(f"unknown statement {st!r}")

    def per_item(self, var: ir.Var) -> bool:
        """CPU: a kernel-scope variable of a kernel with several phases lives through work-item loops,
        so each work-item of the workgroup has its own slot."""
        return self.t.kind == "cpu" and var.block is None and len(self.k.phases) > 1

    def var_ptr(self, var: ir.Var) -> str:
        slot = self.var_slots[id(var)]
        if not self.per_item(var):
            return slot
        lx, ly, _ = self.k.local_size
        x, y, z = (self.ids[("local_id", a)] for a in range(3))
        zy = self.ins(f"add i32 {self.ins(f'mul i32 {z}, {ly}')}, {y}")
        flat = self.ins(f"add i32 {self.ins(f'mul i32 {zy}, {lx}')}, {x}")
        return self.ins(f"getelementptr {REG[var.dtype.name]}, ptr {slot}, i32 {flat}")

    def phases(self, run_phase) -> None:
        """The kernel's top level: each phase through run_phase(block); a uniform_range loops over its
        phases with a barrier after each (run_phase emits the barriers that end the others)."""
        for item in self.k.phases:
            if isinstance(item, ir.Block):
                run_phase(item)
                continue

            def body(i, item=item):
                self.lo.bind(item.var, i)
                for ph in item.phases:
                    run_phase(ph)
                self.barrier()
            self.loop("0", str(item.count), 1, "i32", body, frame=self.t.kind == "cpu")

    def barrier(self):
        if self.t.kind == "amdgpu":
            self.decls.add("declare void @llvm.amdgcn.s.barrier()")
            self.body += ['  fence syncscope("workgroup") release', "  call void @llvm.amdgcn.s.barrier()",
                          '  fence syncscope("workgroup") acquire']
        elif self.t.kind == "nvptx":
            self.decls.add("declare void @llvm.nvvm.barrier0()")
            self.body.append("  call void @llvm.nvvm.barrier0()")
        # cpu: phases are separate work-item loops, nothing to emit

    # --- frames ----------------------------------------------------------------------------------
    def params(self) -> str:
        out = []
        for i, p in enumerate(self.k.params):
            out.append(f"{self.gptr} %p{i}" if p.kind == "buffer" else f"{REG[p.dtype.name]} %p{i}")
        return ", ".join(out)

    def gpu_function(self) -> list[str]:
        self.start("entry")

        def run_phase(ph):
            self.lo.push()
            self.block(ph)
            self.lo.pop()
        self.phases(run_phase)
        self.body.append("  ret void")
        cc = "amdgpu_kernel" if self.t.kind == "amdgpu" else "ptx_kernel"
        md = " !reqd_work_group_size !0" if self.t.kind == "amdgpu" else ""
        return [f"define {cc} void @{self.k.name}({self.params()}) #0{md} {{"]

    def cpu_function(self) -> list[str]:
        self.start("entry")
        self.allocas.append("  %budget = alloca i64, align 8")
        f3 = self.ins("getelementptr i64, ptr %fault, i64 3")
        self.body.append(f"  store i64 {self.ins(f'load i64, ptr {f3}')}, ptr %budget")
        for i, p in enumerate(self.k.params):
            slot = self.ins(f"getelementptr i64, ptr %argv, i64 {2 * i}")
            if p.kind == "buffer":
                self.body.append(f"  %p{i} = load ptr, ptr {slot}")
                nslot = self.ins(f"getelementptr i64, ptr %argv, i64 {2 * i + 1}")
                self.body.append(f"  %n{i} = load i64, ptr {nslot}")
            else:
                raw = self.ins(f"load i64, ptr {slot}")
                t = REG[p.dtype.name]
                if t == "i64":
                    self.body.append(f"  %p{i} = add i64 {raw}, 0")
                elif t == "float":
                    lo32 = self.ins(f"trunc i64 {raw} to i32")
                    self.body.append(f"  %p{i} = bitcast i32 {lo32} to float")
                else:
                    self.body.append(f"  %p{i} = trunc i64 {raw} to {t}")
        for j, arr in enumerate(self.k.shared):
            self.shared_ptr[id(arr)] = f"%shared{j}"
            self.allocas.append(f"  %shared{j} = alloca [{arr.size} x {MEM[arr.dtype.name]}], align 16")

        def groups(axis):
            def run(g):
                self.ids[("group_id", axis)] = g
                if axis > 0:
                    self.loop("0", f"%g{AXES[axis - 1]}", 1, "i32", groups(axis - 1), frame=True)
                else:
                    self.phases(lambda ph: self.loop("0", str(self.k.local_size[2]), 1, "i32", items(2, ph),
                                                     frame=True))
            return run

        def items(axis, ph):
            def run(li):
                self.ids[("local_id", axis)] = li
                if axis > 0:
                    self.loop("0", str(self.k.local_size[axis - 1]), 1, "i32", items(axis - 1, ph), frame=True)
                else:
                    self.block(ph)
            return run

        self.loop("0", "%gz", 1, "i32", groups(2), frame=True)
        self.body.append("  ret void")
        return [f"define void @{self.k.name}(ptr %argv, ptr %fault, i32 %gx, i32 %gy, i32 %gz) #0 {{"]

    def render(self) -> str:
        head = self.cpu_function() if self.t.kind == "cpu" else self.gpu_function()
        for name, ty in (("fabs", "float"), ("sqrt", "float"), ("fma", "float, float, float")):
            if f"@llvm.{name}.f32(" in "\n".join(self.body):
                self.decls.add(f"declare float @llvm.{name}.f32({ty})")
        out = [f'target triple = "{self.t.triple}"', ""]
        if self.t.kind != "cpu":
            for j, arr in enumerate(self.k.shared):
                out.append(f"@shared{j} = internal addrspace(3) global [{arr.size} x {MEM[arr.dtype.name]}] "
                           f"undef, align 16")
        out += head
        out += [self.body[0]] + self.allocas + self.body[1:] + ["}", ""]
        out += sorted(self.decls)
        out.append(HALF_HELPERS)
        ls = self.k.local_size
        out.append(f'attributes #0 = {{ nounwind {DENORMAL_IEEE}'
                   + (f' "amdgpu-flat-work-group-size"="1,{ls[0] * ls[1] * ls[2]}"' if self.t.kind == "amdgpu" else "")
                   + " }")
        for node in self.loop_md:
            out.append(f"{node} = distinct !{{{node}, !98, !99}}")
        if self.loop_md:
            out += ['!98 = !{!"llvm.loop.unroll.disable"}', '!99 = !{!"llvm.loop.vectorize.enable", i1 false}']
        if self.t.kind == "amdgpu":
            out += [f"!0 = !{{i32 {ls[0]}, i32 {ls[1]}, i32 {ls[2]}}}",
                    "!llvm.module.flags = !{!1}", '!1 = !{i32 1, !"amdhsa_code_object_version", i32 500}']
        return "\n".join(out) + "\n"


def render(kern: ir.Kernel, target_name: str) -> str:
    """LLVM IR text of `kern` for the target (see `target` for the names)."""
    return Renderer(kern, target(target_name)).render()
