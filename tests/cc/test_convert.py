"""OpenCL C's conversions with saturation and explicit rounding (convert_<type>[_sat][_rte|_rtz|_rtp|_rtn]) and
the half-float loads and stores, from gputwin's device library, bit for bit against numpy: every source and
destination type, every suffix, every vector width, on edge cases (NaN, infinities, signed zeros, ties,
subnormals, the limits of each type and one past them) and random bit patterns."""
import numpy as np
import pytest

from gputwin import cc
from tests.cc.conftest import ARCHS

INTS = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16, "int": np.int32,
        "uint": np.uint32, "long": np.int64, "ulong": np.uint64}
FPS = {"half": np.float16, "float": np.float32, "double": np.float64}
TYPES = {**INTS, **FPS}
MODES = ("_rte", "_rtz", "_rtp", "_rtn")
INT_SUFFIXES = ("", *MODES, "_sat", *(f"_sat{m}" for m in MODES))
FP_SUFFIXES = ("", *MODES)
WIDTHS = (1, 2, 3, 4, 8, 16)
N = 768                         # elements converted by each conversion: a multiple of every width
LANES = 64                      # one wave64
ROUND = {"_rte": np.rint, "_rtz": np.trunc, "_rtp": np.ceil, "_rtn": np.floor}


def _conversions(src: str):
    """(destination, suffix, vector width) for every conversion from `src`: scalars, and every vector width
    on a few of them (the vector forms convert element by element through the same code), taking turns
    with each source type so that over all sources every kind of conversion is seen as a vector."""
    combos = [(d, s) for d in INTS for s in INT_SUFFIXES] + [(d, s) for d in FPS for s in FP_SUFFIXES]
    start = list(TYPES).index(src)
    vec = {(start + 13 * j) % len(combos): w for j, w in enumerate(WIDTHS[1:])}
    return [(d, s, vec.get(k, 1)) for k, (d, s) in enumerate(combos)]


def _kernel(src: str, n: int) -> tuple[str, list[int]]:
    """One kernel applying every conversion from `src` to x[0..n), each into its own stretch of `out`; the
    LANES work-items stride over the vectors (the emulator's cost is per wave instruction, not per lane)."""
    lines, offsets, off = [], [], 0
    for dst, suf, w in _conversions(src):
        offsets.append(off)
        o = f"(__global {dst} *)(out + {off})"
        if w == 1:
            body = f"({o})[e] = convert_{dst}{suf}(x[e]);"
        else:
            body = f"vstore{w}(convert_{dst}{w}{suf}(vload{w}(e, x)), e, {o});"
        lines.append(f"  for (size_t e = i; e < {n // w}; e += {LANES}) {{ {body} }}")
        off += n * np.dtype(TYPES[dst]).itemsize
    return ("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
            f"__kernel void conv(__global uchar *out, __global const {src} *x) {{\n  size_t i = get_global_id(0);\n"
            + "\n  #pragma clang loop unroll(disable)\n".join([""] + lines)[1:] + "\n}\n"), offsets + [off]


def _inputs(src: str, rng, n: int) -> np.ndarray:
    with np.errstate(over="ignore"):              # the limits of the wider types are infinite in half
        return _edges_and_randoms(src, rng, n)


def _edges_and_randoms(src: str, rng, n: int) -> np.ndarray:
    t = TYPES[src]
    if src in INTS:
        info = np.iinfo(t)
        edges = [info.min, info.max, 0, 1, -1, 2]
        for lim in INTS.values():                       # every type's limits and one past them
            li = np.iinfo(lim)
            edges += [li.min - 1, li.min, li.max, li.max + 1]
        for p in (24, 25, 53, 54, 62):                  # where float and double stop being exact: ties and halves
            edges += [(1 << p) + k for k in range(-3, 4)] + [-(1 << p) - k for k in range(4)]
        edges = [e for e in edges if info.min <= e <= info.max]
        rand = rng.integers(0, 256, n * t().itemsize, dtype=np.uint8).view(t)
        small = rng.integers(max(info.min, -300), min(info.max, 300), n).astype(t)
    else:
        fi = np.finfo(t)
        edges = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997,
                 fi.max, -fi.max, fi.tiny, -fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal]
        for lim in INTS.values():
            li = np.iinfo(lim)
            for v in (float(li.min), float(li.max) + 1):
                edges += [v, np.nextafter(t(v), t(0)), np.nextafter(t(v), t(-v or -1)), v - 0.5, v + 0.5, v - 1, v + 1]
        if src == "double":                             # ties and overflow of the rounding to float
            f = np.float64(np.finfo(np.float32).max)
            ulp = np.spacing(np.float32(1.0)).astype(np.float64)
            edges += [1 + ulp / 2, 1 + 1.5 * ulp, -1 - ulp / 2, 1 + ulp / 3, f * (1 + 2 ** -25), f * (1 + 2 ** -24),
                      -f * (1 + 2 ** -24), 2.0 ** -149, 2.0 ** -150, 3 * 2.0 ** -151, 2.0 ** -151, -2.0 ** -150,
                      1e-300, -1e-300, 1e300, -1e300, 2.0 ** -126 * (1 - 2 ** -25)]
        rand = rng.integers(0, 256, n * t().itemsize, dtype=np.uint8).view(t)
        small = (rng.integers(-700, 700, n) / 2 + rng.standard_normal(n) * (rng.random(n) < 0.5)).astype(t)
    edges = np.array(edges, dtype=object).astype(t) if src in INTS else np.array(edges, dtype=t)
    x = np.concatenate([edges, small[: n // 2], rand])[:n]
    return x


def _nudge(f: np.ndarray, exact_hi: np.ndarray, exact_lo: np.ndarray, mode: str, neg: np.ndarray) -> np.ndarray:
    """The round-to-nearest result `f` moved one step to where `mode` puts it: exact_hi/lo say f is above or
    below the exact value."""
    down = exact_hi & ((mode == "_rtn") | ((mode == "_rtz") & ~neg))
    up = exact_lo & ((mode == "_rtp") | ((mode == "_rtz") & neg))
    f = f.copy()
    f[down] = np.nextafter(f[down], f.dtype.type(-np.inf))
    f[up] = np.nextafter(f[up], f.dtype.type(np.inf))
    return f


def reference(dst: str, src: str, suf: str, x: np.ndarray, width: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """What convert_<dst><width><suf> gives for each element of x, and which elements OpenCL defines (without
    _sat, an out-of-range float -> integer conversion is implementation-defined)."""
    D, sat = TYPES[dst], "_sat" in suf
    mode = suf.replace("_sat", "") or ("_rtz" if dst in INTS else "_rte")
    defined = np.ones(x.shape, bool)
    with np.errstate(all="ignore"):
        if dst in INTS:
            info = np.iinfo(D)
            if src in INTS:
                want = x.astype(D)                      # modulo 2^bits without _sat, as C's cast
                if sat:
                    xl = x.astype(np.longdouble)
                    want[xl < info.min], want[xl > info.max] = info.min, info.max
                return want, defined
            r = ROUND[mode](x.astype(np.float64))
            inside = (r >= info.min) & (r < 2.0 ** (info.bits - (info.min < 0)))
            want = np.zeros(x.shape, D)
            want[inside] = r[inside].astype(D)
            if sat:
                want[r < info.min], want[r >= 2.0 ** (info.bits - (info.min < 0))] = info.min, info.max
            else:   # and LLVM may let an out-of-range element spill into its neighbours in the vector
                defined = inside.reshape(-1, width).all(1).repeat(width)
            return want, defined
        f = x.astype(D)                                 # numpy's conversions round to nearest even
        if mode == "_rte" or np.dtype(D).itemsize >= np.dtype(TYPES[src]).itemsize and src in FPS:
            return f, defined
        wide = np.longdouble if src in INTS else np.float64
        fl, xl = f.astype(wide), x.astype(wide)
        return _nudge(f, fl > xl, fl < xl, mode, xl < 0), defined


def assert_same_bits(got: np.ndarray, want: np.ndarray, what: str):
    if want.dtype.kind == "f":                          # NaNs: any NaN
        nan = np.isnan(want)
        assert np.isnan(got[nan]).all(), what
        got, want = got[~nan], want[~nan]
    bad = np.flatnonzero(got.view(f"u{got.itemsize}") != want.view(f"u{want.itemsize}"))
    assert bad.size == 0, f"{what}: {bad.size} differ, first at {bad[:4]}: got {got[bad[:4]]} want {want[bad[:4]]}"


@pytest.mark.parametrize("src", list(TYPES))
def test_every_conversion_from(toolchain, devices, rng, src):
    arch = ARCHS[list(TYPES).index(src) % len(ARCHS)]   # the source types take turns over the archs
    dev = devices(arch)
    n = N
    source, offsets = _kernel(src, n)
    prg = dev.load(cc.compile_source(source, "opencl", arch, wave64=True), "conv")
    x = _inputs(src, rng, n)
    bx, bo = dev.alloc(x.nbytes), dev.alloc(offsets[-1])
    dev.copyin(bx, x)
    prg(bo, bx, grid=1, block=LANES)
    out = np.empty(offsets[-1], np.uint8)
    dev.copyout(out, bo)
    dev.synchronize()
    for (dst, suf, w), off in zip(_conversions(src), offsets):
        got = out[off:off + n * np.dtype(TYPES[dst]).itemsize].view(TYPES[dst])
        want, defined = reference(dst, src, suf, x, w)
        assert_same_bits(got[defined], want[defined], f"convert_{dst}{w if w > 1 else ''}{suf}({src}) on {arch}")


HALF_STORES = [(t, s, w, a) for t in ("float", "double") for s in FP_SUFFIXES for w, a in ((1, ""), (3, "a"))]   # a: vstorea
HALF_STORES += [("float", "_rtp", w, "") for w in (2, 4, 8, 16)] + [("double", "_rtn", 16, "a")]
HALF_CL = r"""
__kernel void load_all(__global float *f, __global float *g, __global const half *h, __constant half *c) {
  size_t i = get_global_id(0);
  for (size_t e = i; e < 65536; e += get_global_size(0)) f[e] = vload_half(e, h);
  if (i < 4096) vstore16(vload_half16(i, h), i, g);          /* and the vector loads */
  if (i < 8) vstore3(vloada_half3(i, h), i, g + 65536);     /* aligned: 3 of every 4 */
  if (i < 8) vstore3(vload_half3(i, c), i, g + 65600);
}
"""


def _half_store_kernel(n: int) -> str:
    lines = []
    for k, (t, suf, w, a) in enumerate(HALF_STORES):
        slot = 4 if a and w == 3 else w            # vstorea_half3 stores 3 of every 4
        v = f"vload{w}(e, {t[0]})" if w > 1 else f"{t[0]}[e]"
        lines.append(f"  for (size_t e = i; e < {n // slot}; e += {LANES}) "
                     f"vstore{a}_half{w if w > 1 else ''}{suf}({v}, e, h + {k * n});")
    return ("__kernel void store(__global half *h, __global const float *f, __global const double *d) {\n"
            "  size_t i = get_global_id(0);\n" + "\n".join(lines) + "\n}\n")


def _half_inputs(rng, n: int) -> np.ndarray:
    """Doubles around every kind of rounding to half: ties, subnormals, overflow, and doubles whose bits below
    float's precision decide the rounding (a conversion through float would round twice)."""
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 65504, 65519.99, 65520, -65520, 65536, 1e10, 2.0 ** -24, 2.0 ** -25,
             -2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -26, 2.0 ** -14, 2.0 ** -14 - 2.0 ** -25, 1 + 2.0 ** -11,
             1 + 3 * 2.0 ** -11, -1 - 2.0 ** -11, 1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -11 - 2.0 ** -40,
             2.0 ** -25 + 2.0 ** -60, 1e-300, 0.1, -0.1, 1 / 3]
    scaled = rng.standard_normal(n) * 2.0 ** rng.integers(-30, 18, n)
    bits = rng.integers(0, 1 << 62, n).astype(np.uint64).view(np.float64) * rng.choice([1, -1], n)
    return np.concatenate([edges, scaled[: n // 2], bits])[:n]


def _to_half(x: np.ndarray, mode: str) -> np.ndarray:
    with np.errstate(all="ignore"):
        h = x.astype(np.float16)                    # numpy rounds float and double to half directly, to nearest
        if mode in ("", "_rte"):
            return h
        hl, xl = h.astype(np.float64), x.astype(np.float64)
        return _nudge(h, hl > xl, hl < xl, mode, xl < 0)


@pytest.mark.parametrize("arch", ["gfx1201"])
def test_vload_vstore_half(toolchain, devices, rng, arch):
    dev = devices(arch)
    every = np.arange(65536, dtype=np.uint16)
    bh, bf, bg = dev.alloc(every.nbytes), dev.alloc(4 * 65536), dev.alloc(4 * 65636)
    dev.copyin(bh, every)
    dev.load(cc.compile_source(HALF_CL, "opencl", arch, wave64=True), "load_all")(bf, bg, bh, bh, grid=64,
                                                                                                 block=64)
    f, g = np.empty(65536, np.float32), np.empty(65636, np.float32)
    dev.copyout(f, bf)
    dev.copyout(g, bg)
    want = every.view(np.float16).astype(np.float32)
    assert_same_bits(f, want, "vload_half of every half")
    assert_same_bits(g[:65536], want, "vload_half16")
    assert_same_bits(g[65536:65560], want[:32].reshape(8, 4)[:, :3].reshape(-1), "vloada_half3")
    assert_same_bits(g[65600:65624], want[:24], "vload_half3 from __constant")

    n = N
    d = _half_inputs(rng, n)
    fl = d.astype(np.float32)
    bd, bfl, bout = dev.alloc(8 * n), dev.alloc(4 * n), dev.alloc(2 * n * len(HALF_STORES))
    dev.copyin(bd, d)
    dev.copyin(bfl, fl)
    dev.copyin(bout, np.full(n * len(HALF_STORES), 0x5555, np.uint16))
    dev.load(cc.compile_source(_half_store_kernel(n), "opencl", arch, wave64=True), "store")(bout, bfl, bd, grid=1,
                                                                                              block=LANES)
    out = np.empty(n * len(HALF_STORES), np.uint16)
    dev.copyout(out, bout)
    dev.synchronize()
    for k, (t, suf, w, a) in enumerate(HALF_STORES):
        got = out[k * n:(k + 1) * n]
        src = fl if t == "float" else d
        if a and w == 3:                            # 3 halfs in every 4, the 4th untouched
            assert (got.reshape(-1, 4)[:, 3] == 0x5555).all()
            got, src = got.reshape(-1, 4)[:, :3].reshape(-1), src[: n // 4 * 3]
        assert_same_bits(got.view(np.float16), _to_half(src, suf), f"vstore{a}_half{w}{suf}({t}) on {arch}")
