"""Builds the C kernels; everything else is declared in pyproject.toml."""

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

FLAGS = ["-O3", "-std=c99", "-Wall", "-Wextra", "-Wno-unused-parameter"]  # GCC and Clang (Linux, macOS)
HEADERS = ["src/ngrameval/_hash.h", "src/ngrameval/_lcs.h", "src/ngrameval/_scan.h", "src/ngrameval/_lines.h"]
MSVC_FLAGS = ["/O2", "/std:c11"]  # Windows wheels (the kernels are plain C99 with GCC builtins guarded)


class BuildExt(build_ext):
    """The compiler's own spelling of the flags."""

    def build_extensions(self) -> None:
        flags = MSVC_FLAGS if self.compiler.compiler_type == "msvc" else FLAGS
        for ext in self.extensions:
            ext.extra_compile_args = flags
        super().build_extensions()


setup(
    ext_modules=[
        Extension(f"ngrameval.{name}", sources=[f"src/ngrameval/{name}.c"], depends=HEADERS)
        for name in ("_overlap", "_rouge", "_text", "_direct", "_ter")
    ],
    cmdclass={"build_ext": BuildExt},
)
