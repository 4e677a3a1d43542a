"""Builds the C kernels; everything else is declared in pyproject.toml."""

from setuptools import Extension, setup

FLAGS = ["-O3", "-std=c99", "-Wall", "-Wextra", "-Wno-unused-parameter"]

setup(
    ext_modules=[
        Extension(
            f"ngrameval.{name}",
            sources=[f"src/ngrameval/{name}.c"],
            depends=["src/ngrameval/_hash.h"],
            extra_compile_args=FLAGS,
        )
        for name in ("_overlap", "_rouge", "_text", "_ter")
    ]
)
