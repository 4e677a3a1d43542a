"""The floor plan of issue 30 for the rooms it moved: ``ngrameval.report`` renders and computes nothing, ``io``
has no import circle, and the moved modules left the package root (their old paths: tests/test_moved_modules.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import ngrameval

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "ngrameval"

# the floors below the report that compute (functions there run metrics, tests or searches)
COMPUTING = ("ngrameval.api", "ngrameval.corpus", "ngrameval.meta", "ngrameval.metrics", "ngrameval.ngrams")


def imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every ``from module import name`` of a source file, lazy ones inside functions too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
            for a in n.names]  # fmt: skip


def module_name(path: Path) -> str:
    return ".".join(("ngrameval", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")


def test_the_moved_modules_left_the_package_root() -> None:
    for old in ngrameval.MOVED:
        path = PACKAGE / old.removeprefix("ngrameval.").replace(".", "/")
        assert not path.with_suffix(".py").exists() and not (path / "__init__.py").exists(), old


def test_report_renders_and_never_computes() -> None:
    """Every module of ``ngrameval.report`` takes finished results: from the computing floors it imports only
    the results' types and constants (capitalised names), never a function."""
    bad = [
        (module_name(p), module, name)
        for p in sorted((PACKAGE / "report").glob("*.py"))
        for module, name in imports(p)
        if module.startswith(COMPUTING) and not name[0].isupper()
    ]
    assert not bad


def test_report_and_io_import_only_downward() -> None:
    """``io`` imports nothing above it (no metrics, API, meta, report or CLI); ``report`` nothing above it (no
    collect or CLI)."""
    above = {
        "io": ("ngrameval.metrics", "ngrameval.api", "ngrameval.corpus", "ngrameval.meta", "ngrameval.scale",
               "ngrameval.distributed", "ngrameval.report", "ngrameval.collect", "ngrameval.cli"),
        "report": ("ngrameval.collect", "ngrameval.cli"),
    }  # fmt: skip
    bad = [
        (module_name(p), module)
        for room, up in above.items()
        for p in sorted((PACKAGE / room).glob("*.py"))
        for module, _ in imports(p)
        if module.startswith(up)
    ]
    assert not bad


def test_io_has_no_import_circle() -> None:
    """No module of ``ngrameval.io`` imports one that imports it back (``judgments`` and ``layouts`` did)."""
    edges = {
        module_name(p): {
            m if m != "ngrameval.io" else f"{m}.{name}" for m, name in imports(p) if m.startswith("ngrameval.io")
        }
        for p in (PACKAGE / "io").glob("*.py")
        if p.name != "__init__.py"
    }

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in edges.get(start, ()))

    assert not [m for m in edges if reaches(m, m, set())]
