"""PTX text -> statements: what nvcc 13 (`nvcc -ptx`) and LLVM's NVPTX back end emit.

The parser is line-aware: every statement keeps the PTX line it came from so errors (and faults at run
time) can name it. It knows the module directives, `.entry`/`.func` headers with their `.param` lists,
state-space declarations (`.reg`, `.global`, `.shared`, `.local`, `.const`, `.param`), labels, guard
predicates, and the operand forms: registers, immediates (decimal, hex, `0f`/`0d` float bits), vectors
`{a, b}`, addresses `[base+off]`, `a|b` destination pairs and symbol names. It does not interpret
opcodes; gputwin.emu.nv.ptx.plan does.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from gputwin.emu.nv.ptx.errors import PtxError

# --- operands --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reg:
    name: str            # "%r1", "%tid.x", "%SP" or a symbol/param name used as a value


@dataclass(frozen=True)
class Imm:
    value: int | float   # int for integer literals, float for decimal float literals
    bits: str = ""       # "f32"/"f64" for 0f/0d literals (value then holds the raw bits)


@dataclass(frozen=True)
class Sym:
    name: str            # a label, function or variable name
    offset: int = 0      # sym+off


@dataclass(frozen=True)
class Addr:
    base: Reg | Sym | None
    offset: int = 0


@dataclass(frozen=True)
class Vec:
    items: tuple         # of Reg / Imm / None ("_" sink)


@dataclass(frozen=True)
class Pair:
    items: tuple         # "%r|%p" destination pairs of shfl.sync / setp


@dataclass(frozen=True)
class Sink:
    pass


@dataclass
class Instr:
    op: str                      # "add"
    mods: tuple[str, ...]        # ("rn", "f32") : every ".x" after the opcode, in order
    args: list
    line: int
    pred: str | None = None      # guard register
    neg: bool = False            # @!%p
    text: str = ""


@dataclass
class Label:
    name: str
    line: int


@dataclass
class VarDecl:
    space: str                   # global shared local const param reg
    type: str                    # b8 u32 f32 pred ...
    name: str
    count: int | None = None     # array length; None: scalar; 0: "[]" (extern dynamic shared)
    align: int | None = None
    init: list | None = None
    extern: bool = False
    vec: int = 1
    line: int = 0
    range_count: int | None = None   # "%r<6>" declares %r0..%r5


@dataclass
class Function:
    name: str
    entry: bool
    params: list[VarDecl]
    rets: list[VarDecl]
    body: list                   # Instr / Label / VarDecl (scoped decls flattened; names are unique)
    line: int
    directives: dict = field(default_factory=dict)
    declared_only: bool = False


@dataclass
class ParsedModule:
    version: str = ""
    target: str = ""
    address_size: int = 64
    globals: list[VarDecl] = field(default_factory=list)
    functions: dict[str, Function] = field(default_factory=dict)


# --- lexing ----------------------------------------------------------------------------------------------

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_TOKEN = re.compile(r"""[ \t\r]*(?:
    (?P<num>0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|0[xX][0-9a-fA-F]+U?|0[bB][01]+U?|[0-9]+U?)
  | (?P<word>[%$.A-Za-z_](?:[\w$.%]|::)*)
  | (?P<str>"[^"\n]*")
  | (?P<punct>[{}()\[\];,:@!+\-|<>=*])
)""", re.X)


def _lex(text: str):
    """(kind, value, line) tokens; comments become blanks that keep line numbers. Line by line with
    finditer (measured: about 2x a match() loop); a gap between matches is an unexpected character."""
    text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n") + " ", text)
    out = []
    append = out.append
    for line, src in enumerate(text.split("\n"), 1):
        src = src.rstrip(" \t\r")
        pos = 0
        for m in _TOKEN.finditer(src):
            if m.start() != pos:
                break
            kind = m.lastgroup
            append((kind, m.group(kind), line))
            pos = m.end()
        if pos != len(src):
            bad = src[pos:].lstrip(" \t\r")
            raise PtxError(f"unexpected character {bad[0]!r}", line=line, token=bad[:20].split()[0])
    return out


def parse_int(tok: str, line: int | None = None) -> int:
    t = tok.rstrip("U")
    try:
        if t[:2] in ("0x", "0X"):
            return int(t, 16)
        if t[:2] in ("0b", "0B"):
            return int(t[2:], 2)
        return int(t, 10)
    except ValueError:
        raise PtxError("expected an integer", line=line, token=tok) from None


# --- statements ------------------------------------------------------------------------------------------

class _Stream:
    def __init__(self, toks):
        self.toks, self.i = toks, 0
        self.eof = ("eof", "", toks[-1][2] if toks else 0)

    def peek(self, k=0):
        try:
            return self.toks[self.i + k]
        except IndexError:
            return self.eof

    def next(self):
        i = self.i
        self.i = i + 1
        try:
            return self.toks[i]
        except IndexError:
            return self.eof

    def integer(self) -> int:
        _, tok, line = self.next()
        return parse_int(tok, line)

    def expect(self, value):
        t = self.next()
        if t[1] != value:
            raise PtxError(f"expected {value!r}", line=t[2], token=t[1])
        return t

    def accept(self, value):
        if self.peek()[1] == value:
            self.i += 1
            return True
        return False


_SPACES = ("global", "shared", "local", "const", "param", "reg")
_ATTRS = (".visible", ".extern", ".weak", ".common")
_PERF_DIRECTIVES = (".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm", ".maxnreg", ".pragma",
                    ".noreturn", ".explicitcluster", ".reqnctapercluster", ".maxclusterrank", ".blocksareclusters")


def parse(text: str) -> ParsedModule:
    s = _Stream(_lex(text))
    mod = ParsedModule()
    while s.peek()[0] != "eof":
        kind, tok, line = s.peek()
        if tok == ".version":
            s.next(); mod.version = s.next()[1]
        elif tok == ".target":
            s.next(); mod.target = s.next()[1]
            while s.accept(","):
                s.next()
        elif tok == ".address_size":
            s.next(); mod.address_size = s.integer()
        elif tok in (".file", ".section"):
            _skip_statement(s)
        elif tok in _ATTRS or tok in (".entry", ".func") or tok[1:] in _SPACES:
            attrs = []
            while s.peek()[1] in _ATTRS:
                attrs.append(s.next()[1])
            if s.peek()[1] in (".entry", ".func"):
                fn = _parse_function(s, attrs)
                prev = mod.functions.get(fn.name)
                if prev is None or prev.declared_only:
                    mod.functions[fn.name] = fn
            else:
                decl = _parse_decl(s, extern=".extern" in attrs)
                s.expect(";")
                mod.globals.append(decl)
        else:
            raise PtxError("unexpected token at module scope", line=line, token=tok)
    return mod


def _skip_statement(s: _Stream):
    while s.next()[1] not in (";", "eof"):
        pass


def _parse_decl(s: _Stream, extern=False) -> VarDecl:
    """`.space [.align n] [.vN] .type name[<n>|[n]|[]] [= init]` (the trailing ';' is the caller's)."""
    kind, tok, line = s.next()
    space = tok[1:]
    if space not in _SPACES:
        raise PtxError("expected a state space", line=line, token=tok)
    align, vec, typ = None, 1, None
    while True:
        t = s.peek()[1]
        if t == ".align":
            s.next(); align = s.integer()
        elif t in (".v2", ".v4", ".v8"):
            s.next(); vec = int(t[2:])
        elif t == ".ptr":                      # LLVM: .param .u64 .ptr .global .align 1 name
            s.next()                           # (.space and .align N there describe the pointee, not the param)
            while s.peek()[1] in (".global", ".shared", ".const", ".local"):
                s.next()
            if s.peek()[1] == ".align":
                s.next(); s.integer()
        elif t.startswith(".") and typ is None:
            s.next(); typ = t[1:]
        else:
            break
    if typ is None:
        raise PtxError("declaration without a type", line=line, token=s.peek()[1])
    name_tok = s.next()
    if name_tok[0] != "word":
        raise PtxError("expected a name", line=name_tok[2], token=name_tok[1])
    decl = VarDecl(space, typ, name_tok[1], align=align, vec=vec, extern=extern, line=line)
    if s.accept("<"):
        decl.range_count = s.integer(); s.expect(">")
    while s.accept("["):
        if s.accept("]"):
            decl.count = 0
        else:
            n = s.integer(); s.expect("]")
            decl.count = n if decl.count is None else decl.count * n
    if s.accept("="):
        decl.init = _parse_init(s)
    return decl


def _parse_init(s: _Stream) -> list:
    out = []
    depth = 0
    while True:
        kind, tok, line = s.peek()
        if tok == "{":
            depth += 1; s.next()
        elif tok == "}":
            depth -= 1; s.next()
        elif tok == ",":
            s.next()
        elif tok == ";" and depth == 0:
            return out
        elif tok == "-":
            s.next()
            v = _number(s.next())
            if v.bits:
                raise PtxError("negated float bit literal", line=line, token=tok)
            out.append(Imm(-v.value))
        elif kind == "num":
            s.next(); out.append(_number((kind, tok, line)))
        elif kind == "word":   # address of another variable, generic(x)
            s.next()
            if tok == "generic":
                s.expect("("); name = s.next()[1]; s.expect(")")
                out.append(Sym(name))
            else:
                out.append(Sym(tok))
        else:
            raise PtxError("bad initializer", line=line, token=tok)
        if depth == 0 and s.peek()[1] == ";":
            return out


def _number(t):
    kind, tok, line = t
    try:
        if tok[:2] in ("0f", "0F"):
            return Imm(int(tok[2:], 16), "f32")
        if tok[:2] in ("0d", "0D"):
            return Imm(int(tok[2:], 16), "f64")
        if "." in tok:
            return Imm(float(tok))
    except ValueError:
        raise PtxError("malformed number", line=line, token=tok) from None
    return Imm(parse_int(tok, line))


def _parse_params(s: _Stream) -> list[VarDecl]:
    out = []
    s.expect("(")
    while not s.accept(")"):
        out.append(_parse_decl(s))
        s.accept(",")
    return out


def _parse_function(s: _Stream, attrs) -> Function:
    kind, tok, line = s.next()
    entry = tok == ".entry"
    rets = _parse_params(s) if (not entry and s.peek()[1] == "(") else []
    name = s.next()[1]
    params = _parse_params(s) if s.peek()[1] == "(" else []
    fn = Function(name, entry, params, rets, [], line)
    while s.peek()[1] in _PERF_DIRECTIVES:
        d = s.next()[1]
        vals = []
        while s.peek()[1] not in ("{", ";", "eof") and s.peek()[1] not in _PERF_DIRECTIVES:
            t = s.next()
            if t[1] != ",":
                vals.append(t[1])
        fn.directives[d] = vals
        s.accept(";")
    if s.accept(";"):
        fn.declared_only = True
        return fn
    s.expect("{")
    _parse_body(s, fn, depth=1)
    return fn


def _parse_body(s: _Stream, fn: Function, depth: int):
    while True:
        kind, tok, line = s.peek()
        if tok == "}":
            s.next()
            return
        if kind == "eof":
            raise PtxError(f"function {fn.name} is not closed", line=line, token="")
        if tok == "{":
            s.next()
            start = len(fn.body)
            _parse_body(s, fn, depth + 1)
            _scope(fn, start)
        elif tok[1:] in _SPACES and tok.startswith("."):
            decl = _parse_decl(s)
            more = [decl]
            while s.accept(","):        # .reg .b32 %a, %b<4>;
                d2 = VarDecl(decl.space, decl.type, s.next()[1], align=decl.align, vec=decl.vec, line=line)
                if s.accept("<"):
                    d2.range_count = s.integer(); s.expect(">")
                more.append(d2)
            s.expect(";")
            fn.body.extend(more)
        elif tok in (".pragma", ".loc", ".file"):
            _skip_statement(s)
        elif kind == "word" and s.peek(1)[1] == ":" and not tok.startswith("%"):
            s.next(); s.next()
            fn.body.append(Label(tok, line))
        else:
            fn.body.append(_parse_instr(s))


_SCOPES = [0]


def _scope(fn: Function, start: int):
    """Give the .reg/.param names declared in a { } block (inline asm, call sequences) names unique
    to the block, and rename their uses inside it, so blocks may reuse a name with another type."""
    items = fn.body[start:]
    local = {}
    for it in items:
        if isinstance(it, VarDecl) and it.space in ("reg", "param") and it.range_count is None \
                and not getattr(it, "scoped", False):
            _SCOPES[0] += 1
            new = f"{it.name}#{_SCOPES[0]}"
            local[it.name] = new
            it.name, it.scoped = new, True
    if not local:
        return

    def ren(a):
        if isinstance(a, Reg):
            return Reg(local.get(a.name, a.name))
        if isinstance(a, Addr):
            return Addr(ren(a.base) if a.base is not None else None, a.offset)
        if isinstance(a, Vec):
            return Vec(tuple(ren(x) for x in a.items))
        if isinstance(a, Pair):
            return Pair(tuple(ren(x) for x in a.items))
        if isinstance(a, tuple) and a and a[0] == "not":
            return ("not", ren(a[1]))
        return a
    for it in items:
        if isinstance(it, Instr):
            it.args = [ren(a) for a in it.args]
            if it.pred in local:
                it.pred = local[it.pred]


def _parse_instr(s: _Stream) -> Instr:
    kind, tok, line = s.peek()
    pred, neg = None, False
    if s.accept("@"):
        neg = s.accept("!")
        pred = s.next()[1]
    kind, tok, line = s.next()
    if kind != "word" or tok.startswith(("%", ".")):
        raise PtxError("expected an instruction", line=line, token=tok)
    op, *mods = tok.split(".")
    args = []
    if s.peek()[1] != ";":
        while True:
            args.append(_parse_operand(s))
            if s.accept(";"):
                break
            t = s.next()
            if t[1] != ",":
                raise PtxError(f"expected ',' or ';' after an operand of {tok}", line=t[2], token=t[1])
    else:
        s.next()
    return Instr(op, tuple(mods), args, line, pred, neg, tok)


def _parse_operand(s: _Stream):
    kind, tok, line = s.peek()
    if tok == "{":
        s.next()
        items = []
        while not s.accept("}"):
            items.append(_parse_operand(s))
            s.accept(",")
        return Vec(tuple(items))
    if tok == "[":
        s.next()
        base, off = None, 0
        if s.peek()[0] == "word":
            base = Reg(s.next()[1])
        elif s.peek()[0] == "num":
            off = s.integer()
        while s.peek()[1] in ("+", "-"):
            sign = -1 if s.next()[1] == "-" else 1
            if s.peek()[1] == "-":
                s.next(); sign = -sign
            off += sign * s.integer()
        s.expect("]")
        return Addr(base, off)
    if tok == "(":                      # call argument lists
        s.next()
        items = []
        while not s.accept(")"):
            items.append(_parse_operand(s))
            s.accept(",")
        return Vec(tuple(items))
    if tok == "-":
        s.next()
        v = _number(s.next())
        if v.bits:
            raise PtxError("negated float bit literal", line=line, token=tok)
        return Imm(-v.value)
    if tok == "!":                      # !%p as a source predicate
        s.next()
        return ("not", Reg(s.next()[1]))
    if kind == "num":
        s.next()
        return _number((kind, tok, line))
    if kind == "word":
        s.next()
        if tok == "_":
            return Sink()
        if s.peek()[1] == "|":
            s.next()
            other = s.next()[1]
            return Pair((Reg(tok), Reg(other)))
        if s.peek()[1] in ("+", "-") and not tok.startswith("%"):
            sign = -1 if s.next()[1] == "-" else 1
            return Sym(tok, sign * s.integer())
        if tok == "generic" and s.peek()[1] == "(":
            s.next(); inner = s.next()[1]; s.expect(")")
            return Sym(inner)
        return Reg(tok)
    raise PtxError("bad operand", line=line, token=tok)
