"""Builds the C kernels into a directory with extra compiler flags, without reading pyproject.toml.

    python tests/sanitize/build_ext.py OUT_DIR [FLAG ...]

writes OUT_DIR/ngrameval/_overlap*.so, _rouge*.so, _text*.so, _direct*.so and _ter*.so (``OUT_DIR=src``
rebuilds in place).
tests/sanitize/run.sh uses it for the AddressSanitizer/UBSan build.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from setuptools import Distribution, Extension

ROOT = Path(__file__).resolve().parents[2]
FLAGS = ["-O3", "-std=c99", "-Wall", "-Wextra", "-Wno-unused-parameter"]  # as setup.py


def build(out_dir: str, extra: list[str]) -> None:
    """Compiles the kernels with FLAGS + extra (also passed to the linker) into out_dir."""
    src = ROOT / "src" / "ngrameval"
    exts = [
        Extension(
            f"ngrameval.{name}",
            sources=[str(src / f"{name}.c")],
            depends=[str(src / "_hash.h"), str(src / "_lcs.h"), str(src / "_scan.h")],
            extra_compile_args=FLAGS + extra,
            extra_link_args=extra,
        )
        for name in ("_overlap", "_rouge", "_text", "_direct", "_ter")
    ]
    dist = Distribution({"ext_modules": exts})
    cmd = dist.get_command_obj("build_ext")
    cmd.build_lib = str(Path(out_dir).resolve())
    cmd.force = True
    with tempfile.TemporaryDirectory() as tmp:
        cmd.build_temp = tmp
        cmd.ensure_finalized()
        cmd.run()


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2:])
