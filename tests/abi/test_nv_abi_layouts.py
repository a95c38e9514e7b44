"""gputwin.abi.nv_* against what NVIDIA's headers say (fixtures/abi/nv_layouts.json, made by compiling a probe
against open-gpu-kernel-modules 580.105.08 and reading open-gpu-doc: tools/gen_nv_abi_layouts.py)."""
import ctypes
import json
import pathlib

import pytest

from gputwin.abi import nv_methods, nv_qmd
from tools.gen_nv_abi_layouts import constants, structs

DATA = json.loads((pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "abi" / "nv_layouts.json").read_text())
STRUCTS = structs()


def test_every_struct_is_in_the_fixture():
    assert sorted(STRUCTS) == sorted(DATA["structs"])


@pytest.mark.parametrize("name", sorted(STRUCTS))
def test_struct_size_and_every_field_offset_match_the_header(name):
    st, want = STRUCTS[name], DATA["structs"][name]
    assert ctypes.sizeof(st) == want["size"]
    assert {f: getattr(st, f).offset for f, *_ in st._fields_} == want["fields"]


def test_constants_named_after_header_macros_have_their_values():
    ours = constants()
    checked = {k: v for k, v in ours.items() if k in DATA["macros"]}
    assert len(checked) >= 150                       # most names are the header's own
    assert {k: v for k, v in checked.items() if DATA["macros"][k] != v} == {}


@pytest.mark.parametrize("name", sorted(DATA["method_macros"]))
def test_method_offsets_match_both_class_headers(name):
    for macro in DATA["method_macros"][name]:
        if macro in DATA["macros"]:                  # e.g. SET_SEMAPHORE_PAYLOAD_UPPER exists on C8B5 only
            assert getattr(nv_methods, name) == DATA["macros"][macro], macro
    assert any(m in DATA["macros"] for m in DATA["method_macros"][name])


def test_qmd_fields_match_clc6c0qmd():
    assert {k: list(v) for k, v in nv_qmd.FIELDS.items()} == DATA["qmd_v03_00"]
