"""The recorder and replayer, on the emulator: recording MOCKNV and replaying it gives zero differences; a
planted difference is reported with instruction, lane inputs and both bit patterns; stale recordings are
refused with the reason."""
import io
import json
import pathlib

import numpy as np
import pytest

import shutil
import subprocess
import sys

from gputwin.cli import main
from gputwin.emu.nv.ptx import fidelity
from gputwin.hil import amd_programs, inputs, recording
from gputwin.hil.nv_programs import PROGRAMS
from gputwin.hil.record import find_recordings, ordered_programs, record, replay, replay_file

HW = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "hw"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    root = tmp_path_factory.mktemp("hw")
    lines = []
    paths = record("MOCKNV:sm_90", root / "sm_90", log=lines.append)
    return root, paths, lines


def _rewrite(path, out=None, **meta_changes):
    rec = recording.read(path)
    meta = {**rec.meta, **meta_changes}
    buf = io.BytesIO()
    np.savez_compressed(buf, out=rec.out if out is None else out, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8))
    path.write_bytes(buf.getvalue())


def test_recording_the_emulator_and_replaying_it_gives_no_difference(recorded):
    root, paths, _ = recorded
    assert len(paths) == len(PROGRAMS) and all(p.stat().st_size < 32 * 1024 for p in paths)
    assert replay(root, log=lambda s: None) == []


def test_recordings_carry_seed_program_hash_and_inputs_digest(recorded):
    _, paths, _ = recorded
    rec = recording.read(paths[0])
    m = rec.meta
    assert m["arch"] == "sm_90" and m["n"] == inputs.N == len(rec.out) and rec.out.dtype == np.uint32
    prog = recording.BY_OP["nv"][m["op"]]
    assert m["program"] == recording.program_hash(prog, "sm_90")
    assert m["inputs"] == inputs.digest(inputs.make(m["in_kind"], m["arity"], m["seed"], m["n"]))


def test_approximate_instructions_are_recorded_first(recorded):
    _, paths, _ = recorded
    levels = [recording.read(p).meta["fidelity"] for p in paths]
    first_exact = levels.index(fidelity.EXACT)
    assert first_exact > 0 and set(levels[:first_exact]) == {fidelity.APPROXIMATE}
    assert fidelity.APPROXIMATE not in levels[first_exact:]
    assert [p.op for p in ordered_programs("nv")][:1] == ["ex2.approx.f32"]
    assert [p.op for p in ordered_programs("amd")][:1] == ["v_exp_f32"]


def test_planted_difference_names_instruction_inputs_and_both_results(recorded, tmp_path):
    root, _, _ = recorded
    src = root / "sm_90" / "div.full.f32.npz"
    dst = tmp_path / "sm_90" / src.name
    dst.parent.mkdir()
    dst.write_bytes(src.read_bytes())
    rec = recording.read(dst)
    lane = 5
    planted = rec.out.copy()
    planted[lane] ^= 1
    _rewrite(dst, out=planted)
    (bad,) = replay(tmp_path, log=lambda s: None)
    ins = inputs.make("f32", 2, rec.meta["seed"])
    assert bad.op == "div.full.f32" and bad.lanes == 1
    assert bad.examples == [(lane, [int(ins[0][lane]), int(ins[1][lane])], int(planted[lane]), int(rec.out[lane]))]
    text = str(bad)
    assert f"lane {lane}" in text and f"hardware={int(planted[lane]):#010x}" in text
    assert f"emulator={int(rec.out[lane]):#010x}" in text and f"{int(ins[1][lane]):#010x}" in text
    assert main(["hil", "replay", str(tmp_path)]) == 1


@pytest.mark.parametrize("change,reason", [({"program": "0" * 16}, "program text changed"),
                                           ({"seed": 1}, "no longer regenerates the recorded inputs"),
                                           ({"op": "ex3.approx.f32"}, "no conformance program")])
def test_stale_recordings_are_refused_with_the_reason(recorded, tmp_path, change, reason):
    root, _, _ = recorded
    dst = tmp_path / "rcp.approx.f32.npz"
    dst.write_bytes((root / "sm_90" / dst.name).read_bytes())
    _rewrite(dst, **change)
    m = replay_file(dst, {})
    assert m is not None and reason in m.reason and reason in str(m)


def test_a_damaged_file_is_refused_naming_it(tmp_path):
    bad = tmp_path / "x.npz"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(ValueError, match=r"x\.npz: not a gputwin recording"):
        recording.read(bad)


def test_unknown_format_is_refused(recorded, tmp_path):
    root, _, _ = recorded
    dst = tmp_path / "x.npz"
    dst.write_bytes((root / "sm_90" / "sin.approx.f32.npz").read_bytes())
    _rewrite(dst, format=99)
    with pytest.raises(ValueError, match="recording format 99"):
        recording.read(dst)


def test_inputs_are_reproducible_and_start_with_the_hard_cases():
    a, b = inputs.make("f32", 1, 3), inputs.make("f32", 1, 3)
    assert np.array_equal(a[0], b[0]) and not np.array_equal(a[0], inputs.make("f32", 1, 4)[0])
    assert np.array_equal(a[0][:len(inputs.F32_HARD)], inputs.F32_HARD)
    x, y = inputs.make("f32", 2, 3)
    pairs = set(zip(x[:1024].tolist(), y[:1024].tolist()))
    assert (0x7F800000, 0x7F800000) in pairs and (0x00000000, 0x80000000) in pairs   # inf/inf, 0/-0
    triples = set(zip(*(a[:1024].tolist() for a in inputs.make("f32", 3, 3))))
    assert (0x7F800000, 0x00000000, 0x7FC00000) in triples and (0x00000001, 0x807FFFFF, 0x80000000) in triples


def test_cli_record_needs_out_and_refuses_devices_without_programs(tmp_path, capsys):
    with pytest.raises(SystemExit, match="--out DIR is required"):
        main(["hil", "record", "--dev", "MOCKNV"])
    assert main(["hil", "record", "--dev", "CPU", "--out", str(tmp_path)]) == 2
    assert "conformance programs exist for NVIDIA and AMD GPUs" in capsys.readouterr().err
    assert main(["hil", "record", "--dev", "MOCKNV", "--backend", "cuda", "--out", str(tmp_path)]) == 2
    assert "records a real NVIDIA GPU" in capsys.readouterr().err


def test_cuda_backend_without_cuda_bindings_says_what_to_install(tmp_path, capsys, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_cuda(name, *a, **k):
        if name.startswith("cuda"):
            raise ImportError("No module named 'cuda'")
        return real_import(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", no_cuda)
    assert main(["hil", "record", "--dev", "NV", "--backend", "cuda", "--out", str(tmp_path)]) == 2
    assert "pip install 'gputwin[cuda]'" in capsys.readouterr().err


ARCH_SPECS = ["MOCKNV:sm_80", "MOCKAMD:gfx1100", "MOCKAMD:gfx1201", "MOCKAMD:gfx942"]


@pytest.mark.parametrize("spec", ARCH_SPECS)
def test_round_trip_on_every_emulated_arch(spec, tmp_path):
    arch = spec.split(":")[1]
    paths = record(spec, tmp_path / arch, log=lambda s: None)
    vendor = "nv" if spec.startswith("MOCKNV") else "amd"
    assert len(paths) == len(recording.PROGRAMS[vendor])
    assert main(["hil", "replay", str(tmp_path)]) == 0
    # the programs compute what they claim, lane by lane: an exact add against numpy on ordinary operands
    add = recording.read(tmp_path / arch / ("add.rn.f32.npz" if vendor == "nv" else "v_add_f32.npz"))
    a, b = (x.view(np.float32) for x in inputs.make("f32", 2, add.meta["seed"]))
    with np.errstate(all="ignore"):
        want = (a + b).astype(np.float32)
    normal = lambda x: np.isfinite(x) & ((x == 0) | (np.abs(x) >= np.finfo(np.float32).tiny))   # noqa: E731
    ordinary = normal(a) & normal(b) & normal(want)
    assert ordinary.sum() > 3000
    assert np.array_equal(add.out[ordinary], want[ordinary].view(np.uint32))
    if vendor == "nv":        # 64-bit lanes: div.rn.f64 against numpy's correctly rounded division
        div = recording.read(tmp_path / arch / "div.rn.f64.npz")
        x, y = (v.view(np.float64) for v in inputs.make("f64", 2, div.meta["seed"]))
        with np.errstate(all="ignore"):
            q = x / y
        ok = np.isfinite(q) & (np.abs(q) >= np.finfo(np.float64).tiny) & (y != 0)
        assert div.out.dtype == np.uint64 and ok.sum() > 3000
        assert np.array_equal(div.out[ok], q[ok].view(np.uint64))


def test_planted_difference_in_a_64_bit_lane_prints_64_bit_patterns(recorded, tmp_path):
    root, _, _ = recorded
    dst = tmp_path / "rsqrt.approx.f64.npz"
    dst.write_bytes((root / "sm_90" / dst.name).read_bytes())
    rec = recording.read(dst)
    planted = rec.out.copy()
    planted[0] ^= np.uint64(1 << 63)
    _rewrite(dst, out=planted)
    m = replay_file(dst, {})
    assert m is not None and m.lanes == 1
    assert f"hardware={int(planted[0]):#018x} emulator={int(rec.out[0]):#018x}" in str(m)


@pytest.mark.skipif(shutil.which("llvm-mc-19") is None or shutil.which("ld.lld-19") is None,
                    reason="needs llvm-mc-19 and ld.lld-19")
def test_committed_amd_code_objects_are_built_from_the_programs():
    tool = pathlib.Path(__file__).resolve().parents[2] / "tools" / "hil_build_amd.py"
    run = subprocess.run([sys.executable, str(tool), "--check"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert amd_programs.code_object("gfx942")[:4] == b"\x7fELF"


HW_RECORDINGS = find_recordings(HW)


@pytest.mark.parametrize("path", HW_RECORDINGS or [None], ids=lambda p: str(p.relative_to(HW)) if p else "none")
def test_hardware_recording_replays_bit_exact(path):
    if path is None:
        pytest.skip("no hardware recordings under fixtures/hw yet (gputwin hil record --dev NV, docs/hil.md)")
    m = replay_file(path, {})
    assert m is None, str(m)


def test_inventory_lists_recorded_instructions_per_arch(recorded, tmp_path):
    root, paths, _ = recorded
    assert recording.inventory(root) == {"sm_90": sorted(p.op for p in PROGRAMS)}
    assert recording.inventory(tmp_path) == {}


def test_backends_are_named_and_cuda_takes_only_real_nv_specs():
    from gputwin.hil.runners import open_runner
    with pytest.raises(ValueError, match="records a real NVIDIA GPU"):
        open_runner("MOCKNV", "cuda")
    with pytest.raises(ValueError, match="unknown backend 'hip'"):
        open_runner("NV", "hip")
