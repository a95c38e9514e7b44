"""Build HSA code objects from OpenCL C and HIP source with clang-19 and ld.lld-19 (`gputwin cc`).

`compile_file(path, arch)` / `compile_source(text, "opencl"|"hip", arch)` return the bytes of a code
object that `dev.load` takes; gputwin's device library (devlib/) supplies the built-ins. docs/cc.md.
"""
from gputwin.cc.build import BuildError, compile_file, compile_source, language_of

__all__ = ["BuildError", "compile_file", "compile_source", "language_of"]
