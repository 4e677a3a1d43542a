"""Strict reading of inputs and atomic writing of outputs."""

from ngrameval.io.read import read_lines, read_refs
from ngrameval.io.write import write_atomic

__all__ = ["read_lines", "read_refs", "write_atomic"]
