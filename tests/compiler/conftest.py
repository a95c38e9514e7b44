"""Compiler tests compile into a per-session cache directory, never the user's ~/.cache/gputwin."""
import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _compile_cache_dir(tmp_path_factory):
    old = os.environ.get("GPUTWIN_CACHE_DIR")
    os.environ["GPUTWIN_CACHE_DIR"] = str(tmp_path_factory.mktemp("gputwin-cache"))
    yield
    if old is None:
        os.environ.pop("GPUTWIN_CACHE_DIR", None)
    else:
        os.environ["GPUTWIN_CACHE_DIR"] = old
