"""The floor plan of issue 30 for the rooms it moved: ``ngrameval.report`` renders and computes nothing, ``io``
has no import circle, the moved modules left the package root, and every old import path still works with one
``DeprecationWarning`` naming the new one (docs/deprecations.md)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "ngrameval"

# old path -> (new path, a name both give)
MOVED = {
    "ngrameval.paraphrase": ("ngrameval.corpus.paraphrase", "pinc"),
    "ngrameval.validate": ("ngrameval.text.validate", "MAX_ORDER"),
    "ngrameval.demo": ("ngrameval.cli.demo", "load_sample"),
    "ngrameval.tabular": ("ngrameval.report.tabular", "p_text"),
    "ngrameval.meta.mtme_report": ("ngrameval.report.mtme", "summary_text"),
    "ngrameval.report.html_data": ("ngrameval.meta.report_data", "build_report"),
}
# the floors below the report that compute (functions there run metrics, tests or searches)
COMPUTING = ("ngrameval.api", "ngrameval.corpus", "ngrameval.meta", "ngrameval.metrics", "ngrameval.ngrams")


def imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every ``from module import name`` of a source file, lazy ones inside functions too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
            for a in n.names]  # fmt: skip


def module_name(path: Path) -> str:
    return ".".join(("ngrameval", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_still_works_with_one_deprecation_warning(old: str) -> None:
    new, name = MOVED[old]
    code = (
        "import importlib, warnings\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    old = importlib.import_module({old!r})\n"
        f"    first, again = getattr(old, {name!r}), getattr(old, {name!r})\n"
        f"    exec('from {old} import {name}')\n"
        f"assert first is again is getattr(importlib.import_module({new!r}), {name!r})\n"
        "print([(w.category.__name__, str(w.message)) for w in caught if 'ngrameval' in str(w.message)])\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    expected = [("DeprecationWarning", f"{old} is deprecated and will be removed in 0.2.0: import {new}")]
    assert run.stdout.strip() == repr(expected)


def test_an_old_path_imports_nothing_until_used() -> None:
    """``import ngrameval`` stays light: the stand-ins load their module (here the demo's, which needs scipy for
    its significance tests) only when a name is asked for, and probes of dunder names do not count as use."""
    code = (
        "import sys, warnings; warnings.simplefilter('error')\n"
        "import ngrameval, ngrameval.demo\n"
        "assert not hasattr(ngrameval.demo, '__file__')\n"
        "assert 'ngrameval.cli.demo' not in sys.modules and 'scipy' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_the_moved_modules_left_the_package_root() -> None:
    for old in MOVED:
        assert not (PACKAGE / (old.removeprefix("ngrameval.").replace(".", "/") + ".py")).exists(), old


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
