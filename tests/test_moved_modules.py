"""Modules that moved keep their old import path for one minor release (docs/deprecations.md): the old path
imports with a FutureWarning naming the new one and forwards every name, public and private, to it."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

import ngrameval


def _fresh_import(name: str) -> tuple[object, list[warnings.WarningMessage]]:
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[loaded]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        __import__(name)  # as an import statement does: the warning names this line, not importlib's
    return sys.modules[name], caught


@pytest.mark.parametrize("old", sorted(ngrameval.MOVED))
def test_every_moved_module_still_imports_with_a_warning(old: str) -> None:
    new = importlib.import_module(ngrameval.MOVED[old])
    module, caught = _fresh_import(old)
    assert [w.category for w in caught] == [FutureWarning], old
    assert ngrameval.MOVED[old] in str(caught[0].message) and "0.2.0" in str(caught[0].message)
    names = [k for k in vars(new) if not k.startswith("__")]
    assert names and all(getattr(module, k) is getattr(new, k) for k in names)


def test_the_alias_machinery_on_a_package_and_its_submodule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ngrameval.MOVED, "ngrameval.old_meta", "ngrameval.meta")
    monkeypatch.setitem(ngrameval.MOVED, "ngrameval.old_meta.old_plane", "ngrameval.meta.plane")
    _, caught = _fresh_import("ngrameval.old_meta.old_plane")  # the package alias first, then its submodule
    assert [str(w.message).split()[0] for w in caught] == ["ngrameval.old_meta", "ngrameval.old_meta.old_plane"]
    assert all(w.filename == __file__ for w in caught)  # the warning points at the importing line
    from ngrameval.meta.plane import Plane

    assert sys.modules["ngrameval.old_meta.old_plane"].Plane is Plane  # type: ignore[attr-defined]
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ngrameval.old_meta.never_was")
    for name in ("ngrameval.old_meta", "ngrameval.old_meta.old_plane"):
        del sys.modules[name]
