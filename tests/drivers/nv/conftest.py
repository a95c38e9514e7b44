import pathlib

import pytest

FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "drivers" / "nv"


@pytest.fixture(scope="session")
def ptx():
    """PTX text per arch, built by nvcc from fixtures/drivers/nv/kernels.cu (build.sh)."""
    return {arch: (FIXTURES / f"kernels_{arch.replace('_', '')}.ptx").read_text() for arch in ("sm_90", "sm_80")}
