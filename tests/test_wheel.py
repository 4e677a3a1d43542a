"""The Linux wheel: built from a copy of the sources (``pip wheel --no-deps --no-build-isolation``), it holds the
compiled kernels, every module, the typing files and all package data; installed into a fresh virtual environment
with no C compiler reachable, ``ngrameval --version`` and ``ngrameval score`` run and print the in-tree scores.

By default the fresh environment borrows the test environment's dependencies (a ``.pth`` line to its
site-packages: offline, ~1 min with the build); ``NGRAMEVAL_SLOW=1`` also runs the full form, which installs the
wheel with its dependencies from the package index into an environment of its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from ngrameval._version import __version__
from ngrameval.cli import main

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "ngrameval"
KERNELS = ("_overlap", "_rouge", "_text", "_ter")
SLOW = os.environ.get("NGRAMEVAL_SLOW") == "1"
HYPS = ["the cat sat on the mat .", "a dog barks at night", "birds sing in the old tree", ""]
REFS = ["the cat is on the mat .", "the dog barks at night", "old birds sing in a tree", "nothing"]
METRICS = "bleu,chrf,ter,nist,rouge-l,aev:mt-adequacy"

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="builds the Linux wheel")


def _expected_files() -> set[str]:
    """Every file of the package a wheel must hold: all but the C sources, built kernels and caches."""
    return {
        p.relative_to(PACKAGE.parent).as_posix()
        for p in PACKAGE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".c", ".h", ".so", ".pyc")
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the sources (no build products of the working tree carried over)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src-copy"
    skip = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "src", src / "src", ignore=skip)
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy2(ROOT / name, src / name)
    out = tmp / "dist"
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(src)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    assert res.returncode == 0, res.stderr
    (path,) = out.glob("ngrameval-*.whl")
    return path


@pytest.mark.slow
def test_wheel_holds_kernels_typing_files_and_package_data(wheel: Path) -> None:
    assert wheel.name.startswith(f"ngrameval-{__version__}-cp{sys.version_info[0]}{sys.version_info[1]}-")
    names = set(zipfile.ZipFile(wheel).namelist())
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    assert {f"ngrameval/{k}{suffix}" for k in KERNELS} <= names
    assert {f"ngrameval/{k}.pyi" for k in KERNELS} | {"ngrameval/py.typed"} <= names
    missing = _expected_files() - names
    assert not missing, f"not in the wheel: {sorted(missing)}"
    for data in ("ngrameval/collect/templates/base.html", "ngrameval/collect/migrations/script.py.mako",
                 "ngrameval/data/summeval_sample.jsonl", "ngrameval/data/smart_common_words.txt"):  # fmt: skip
        assert data in names
    assert any(n.startswith("ngrameval/collect/migrations/versions/") and n.endswith(".py") for n in names)
    assert not [n for n in names if n.endswith((".c", ".h"))]  # sources stay in the sdist
    assert "_ngrameval_cli.py" in names  # the command's entry point (outside the package: Ctrl-C during start-up)


def _fresh_venv(path: Path, borrow: bool) -> Path:
    """A new environment at ``path``; ``borrow``: the test environment's site-packages appended to its path
    (dependencies only: that directory's own .pth files, e.g. the editable install, are not processed)."""
    venv.EnvBuilder(with_pip=not borrow, clear=True).create(path)
    python = path / "bin" / "python"
    if borrow:
        site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
        Path(site, "borrowed-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def _without_compiler(env_bin: Path) -> dict[str, str]:
    """An environment whose PATH holds the fresh environment's scripts only, and CC/CXX that fail."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "NGRAMEVAL"))}
    env |= {"PATH": str(env_bin), "CC": "/bin/false", "CXX": "/bin/false", "LDSHARED": "/bin/false"}
    assert not any(shutil.which(cc, path=env["PATH"]) for cc in ("gcc", "cc", "clang", "c99"))
    return env


def _check_installed(wheel: Path, tmp: Path, borrow: bool) -> None:
    python = _fresh_venv(tmp / "venv", borrow)
    install = [str(python), "-m", "pip"] if not borrow else [sys.executable, "-m", "pip", "--python", str(python)]
    install += ["install", "-q", "--no-compile", "--only-binary", ":all:", *(["--no-deps", "--no-index"] if borrow
                else []), str(wheel)]  # fmt: skip
    env = _without_compiler(python.parent)
    res = subprocess.run(install, capture_output=True, text=True, timeout=900, env=env, check=False)
    assert res.returncode == 0, res.stderr
    where = subprocess.run([str(python), "-c", "import ngrameval; print(ngrameval.__file__)"], capture_output=True,
                           text=True, env=env, cwd=tmp, check=True).stdout  # fmt: skip
    assert where.startswith(str(tmp / "venv")), where  # the wheel's copy, not the working tree's
    exe = str(python.parent / "ngrameval")
    version = subprocess.run([exe, "--version"], capture_output=True, text=True, env=env, cwd=tmp, check=False)
    assert version.returncode == 0 and version.stdout.strip() == f"ngrameval {__version__}", version
    hyp, ref = tmp / "hyp.txt", tmp / "ref.txt"
    hyp.write_text("\n".join(HYPS) + "\n")
    ref.write_text("\n".join(REFS) + "\n")
    argv = ["score", str(hyp), "-r", str(ref), "-m", METRICS, "-f", "json", "-w", "6"]
    got = subprocess.run([exe, *argv], capture_output=True, text=True, env=env, cwd=tmp, check=False)
    assert got.returncode == 0, got.stderr
    in_tree = subprocess.run([sys.executable, "-c", "import sys; from ngrameval.cli import main; sys.exit(main())",
                              *argv], capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert got.stdout == in_tree
    assert main(["score", str(hyp), "-r", str(ref), "-m", "bleu", "-b"]) == 0  # the in-tree kernels still load


@pytest.mark.slow
def test_installed_wheel_runs_without_a_compiler(wheel: Path, tmp_path: Path) -> None:
    _check_installed(wheel, tmp_path, borrow=True)


@pytest.mark.slow
@pytest.mark.skipif(not SLOW, reason="slow: set NGRAMEVAL_SLOW=1 (installs the dependencies from the index)")
def test_installed_wheel_with_its_own_dependencies(wheel: Path, tmp_path: Path) -> None:
    _check_installed(wheel, tmp_path, borrow=False)
