"""The documentation site: it builds with ``mkdocs build --strict``, the generated CLI reference names every option
of every subcommand, and the examples of every page run (python blocks executed; bash/sh commands and console
``$`` lines run through the shell) in a directory holding the files ``docs/examples/make_files.py`` writes from
the bundled SummEval sample. A block whose first line is ``# needs: ...`` is not run (it says what it needs)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.parts and "examples" not in p.parts)
README = ROOT / "README.md"
# the README's examples run as the pages' do, on the same files
EXAMPLE_PAGES = [*PAGES, README]
README_MAX_LINES = 300
SETUP_COMMANDS = (  # the README's two set-up commands: the demo, and the suite as .ci/run runs it
    "python3 -m venv .venv && .venv/bin/pip install -q . && .venv/bin/ngrameval demo --report demo-report.html",
    ".ci/system-packages && python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]'"
    " && .venv/bin/python -m pytest -n auto",
)
NEEDS = "# needs:"
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```\s*$", re.M | re.S)
RUN = ("python", "bash", "sh", "console")


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def blocks(page: Path) -> list[tuple[str, str | None, str]]:
    """(language, title or None, body) of every fenced block of a page, in order."""
    out = []
    for lang, attrs, body in FENCE.findall(page.read_text(encoding="utf-8")):
        title = re.search(r'title="([^"]+)"', attrs)
        out.append((lang, title[1] if title else None, body))
    return out


def commands(lang: str, body: str) -> list[str]:
    """The shell commands of a block: bash/sh lines with continuations joined; console lines after ``$ ``."""
    if lang == "console":
        return [line[2:] for line in body.splitlines() if line.startswith("$ ")]
    joined = re.sub(r"\\\n\s*", " ", body)
    return [line for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@pytest.fixture(scope="module")
def example_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("docs-files")
    written = _load(DOCS / "examples" / "make_files.py", "make_files").make_files(out)
    assert all(p.is_file() and p.stat().st_size > 0 for p in written)
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    return out


@pytest.mark.slow
def test_mkdocs_build_strict(site: Path) -> None:
    # pages are name.html (use_directory_urls: false), so links work when the site is opened from files
    for page in ("index.html", "cli.html", "api/ngrameval.html", "guides/mt.html"):
        assert (site / page).is_file(), page
    cli = (site / "cli.html").read_text(encoding="utf-8")
    assert "ngrameval corpus export" in cli and "--paired-bs-n" in cli
    api = (site / "api" / "ngrameval.html").read_text(encoding="utf-8")
    for name in ("ngrameval.bleu", "ngrameval.score", "ngrameval.Score", "ngrameval.Preprocess"):
        assert f'id="{name}"' in api, name
    changelog = (site / "changelog.html").read_text(encoding="utf-8")
    assert "Deprecated" in changelog and "--sig-level" in changelog
    index = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="guides/mt.html"' in index and "unpkg.com" not in index  # no script from the network
    assert (site / "search" / "search_index.js").is_file()  # the offline plugin's inlined index


CHROMIUM = "/usr/bin/chromium"


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"no Chromium at {CHROMIUM}")
def test_site_works_from_files(site: Path) -> None:
    """Opened from file://: a guide link opens its page, search finds pages (the Worker shim), and code blocks
    wrap instead of scrolling in an 800 px window."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (Python package)")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto((site / "index.html").as_uri())
            page.get_by_role("link", name="Machine translation (from sacreBLEU)").first.click()
            page.wait_for_load_state()
            assert page.url.endswith("/guides/mt.html") and "Machine translation" in page.title()
            page.goto((site / "index.html").as_uri())
            page.keyboard.press("s")  # Material's shortcut: focus the search box
            page.keyboard.type("paired bootstrap")
            page.wait_for_selector(".md-search-result__item", timeout=20_000)
            assert page.locator(".md-search-result__item").count() > 0
            narrow = browser.new_page(viewport={"width": 800, "height": 900})
            narrow.goto((site / "guides" / "mt.html").as_uri())
            overflow = narrow.evaluate(
                "Math.max(0, ...[...document.querySelectorAll('pre > code')].map(c => c.scrollWidth - c.clientWidth))"
            )
            assert overflow <= 1
            assert not errors, errors
        finally:
            browser.close()


def _subparsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    out = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += _subparsers(sub)
    return out


def test_cli_reference_names_every_option() -> None:
    from ngrameval.cli import build_parser

    hook = _load(DOCS / "hooks" / "cli_reference.py", "cli_reference")
    parser = build_parser()
    page = hook.generate(parser)
    sections = re.split(r"^#{2,3} `", page, flags=re.M)
    by_command = {s.split("`", 1)[0]: s for s in sections[1:]}
    for sub in _subparsers(parser):
        assert sub.prog in by_command, sub.prog
        section = by_command[sub.prog]
        for action in sub._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            for option in action.option_strings:
                assert f"`{option}`" in section, (sub.prog, option)
            if not action.option_strings:
                assert f"`{action.metavar or action.dest}`" in section, (sub.prog, action.dest)
            if action.choices:
                for choice in action.choices:
                    assert f"`{choice}`" in section, (sub.prog, action.dest, choice)
            if action.default not in (None, False, argparse.SUPPRESS) and not isinstance(action.default, list):
                assert f"`{action.default}`" in section, (sub.prog, action.dest, action.default)
    # the marker of the page is what the hook fills
    assert hook.MARKER in (DOCS / "cli.md").read_text(encoding="utf-8")


def test_every_block_runs_or_says_what_it_needs() -> None:
    for page in EXAMPLE_PAGES:
        for lang, _, body in blocks(page):
            if lang in RUN:
                first = body.lstrip().splitlines()[0] if body.strip() else ""
                assert first.startswith(NEEDS) or commands(lang, body) or lang == "python", (page, body[:80])
                if first.startswith(NEEDS):
                    assert len(first) > len(NEEDS) + 5, (page, first)


def _page_id(page: Path) -> str:
    return page.name if page == README else str(page.relative_to(DOCS))


@pytest.mark.parametrize("page", EXAMPLE_PAGES, ids=[_page_id(p) for p in EXAMPLE_PAGES])
@pytest.mark.slow
def test_page_examples_run(page: Path, example_files: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    shutil.copytree(example_files, work)
    found = blocks(page)
    for _, title, body in found:
        if title:
            (work / title).write_text(body, encoding="utf-8")
    runnable = [(lang, body) for lang, _, body in found if lang in RUN and not body.lstrip().startswith(NEEDS)]
    if not runnable:
        pytest.skip("no runnable examples on this page")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env["MPLBACKEND"] = "Agg"
    namespace: dict[str, object] = {"__name__": "__docs__"}
    cwd = Path.cwd()
    for lang, body in runnable:
        if lang == "python":
            os.chdir(work)
            try:
                exec(compile(body, f"{page.name}:python", "exec"), namespace)
            finally:
                os.chdir(cwd)
            continue
        for command in commands(lang, body):
            run = subprocess.run(
                ["bash", "-o", "pipefail", "-c", command],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert run.returncode == 0, f"{page.name}: {command}\n{run.stderr[-2000:]}"
            assert "error" not in run.stderr.lower(), f"{page.name}: {command}\n{run.stderr[-2000:]}"


def test_readme_is_a_short_tour() -> None:
    """The README stays a tour of at most 300 lines: the set-up commands as .ci/run runs them, one example per
    audience (run by test_page_examples_run), the rest on the docs pages it links to."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    lines = text.splitlines()
    for command in SETUP_COMMANDS:
        assert command in lines, command
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ".ci/system-packages" in ci and ".venv/bin/pip install -q -e '.[test]'" in ci
    assert ".venv/bin/python -m pytest -n auto\n" in ci
    python_blocks = sum(lang == "python" for lang, _, _ in blocks(README))
    shell_blocks = sum(lang in ("bash", "console") and not body.startswith(NEEDS) for lang, _, body in blocks(README))
    assert python_blocks >= 1 and shell_blocks >= 6  # MT, summarisation, paraphrase, meta, collection, scale-out


@pytest.mark.slow  # builds the site
def test_readme_links_into_the_site(site: Path) -> None:
    """Every link of the README into docs/ names a page that exists and, with an anchor, a heading or row of it."""
    links = re.findall(r"\]\((docs/[^)#\s]+)(?:#([^)\s]+))?\)", README.read_text(encoding="utf-8"))
    assert len(links) >= 20
    for path, anchor in links:
        assert (ROOT / path).exists(), path
        if anchor:
            assert path.endswith(".md"), path
            html = (site / path.removeprefix("docs/")).with_suffix(".html").read_text(encoding="utf-8")
            assert f'id="{anchor}"' in html, f"{path}#{anchor}"
