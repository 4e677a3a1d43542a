"""``ngrameval report``: the HTML holds the numbers of ``score``/``compare``, escapes every input, needs no network
(a real Chromium proves it), and the plots are right (fixed colour scale, values in cells, no global state)."""

from __future__ import annotations

import html
import json
import os
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from ngrameval.cli import main
from ngrameval.cli.demo import sample_documents
from ngrameval.meta import analysis as an
from ngrameval.meta.plane import Plane
from ngrameval.meta.report_data import ReportOptions, build_report
from ngrameval.metrics.registry import parse_specs
from ngrameval.report.html import render_html
from ngrameval.report.tabular import p_text
from ngrameval.text.pipeline import Preprocess

SYSTEMS = ("M0", "M11", "M20", "M22", "M8")
FAST = ["--paired-ar-n", "999", "--confidence-n", "300", "--correlation-confidence-n", "100"]


class Tables(HTMLParser):
    """Every table of a page as (caption, rows of cell texts); and the alt text of every image or SVG figure."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[list[str]]]] = []
        self.alts: list[str | None] = []
        self._cell: list[str] | None = None
        self._caption: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append(("", []))
        elif tag == "tr":
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "caption":
            self._caption = []
        elif tag in ("img", "svg"):
            self.alts.append(dict(attrs).get("alt" if tag == "img" else "aria-label"))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][1][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "caption" and self._caption is not None:
            self.tables[-1] = ("".join(self._caption), self.tables[-1][1])
            self._caption = None

    def handle_data(self, data: str) -> None:
        for part in (self._cell, self._caption):
            if part is not None:
                part.append(data)


def parse(page: str) -> Tables:
    t = Tables()
    t.feed(page)
    return t


def table(page: Tables, caption: str) -> list[list[str]]:
    return next(rows for cap, rows in page.tables if cap.startswith(caption))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five SummEval systems, 20 documents, 11 references, expert relevance per (system, document)."""
    d = tmp_path_factory.mktemp("summeval")
    docs = sample_documents()
    for name in SYSTEMS:
        (d / name).write_text("".join(doc["systems"][name]["summary"] + "\n" for doc in docs), "utf-8")
    for k in range(11):
        (d / f"ref{k}").write_text("".join(doc["references"][k] + "\n" for doc in docs), "utf-8")
    (d / "source").write_text("".join(doc["references"][0] + "\n" for doc in docs), "utf-8")
    rows = [f"{s},{i + 1},{doc['systems'][s]['relevance']}" for i, doc in enumerate(docs) for s in SYSTEMS]
    (d / "judgments.csv").write_text("system,segment,relevance\n" + "\n".join(rows) + "\n", "utf-8")
    return d


def _args(d: Path) -> list[str]:
    return [*(str(d / s) for s in SYSTEMS), "-r", *(str(d / f"ref{k}") for k in range(11)), "-m", "bleu,rouge-l"]


@pytest.fixture(scope="module")
def report(inputs: Path) -> Path:
    out = inputs / "report.html"
    judged = ["-j", str(inputs / "judgments.csv"), "--score-columns", "relevance", "--segment-column", "segment",
              "--scale", "1,5", "--names", *SYSTEMS, "--source", str(inputs / "source")]  # fmt: skip
    assert main(["report", *_args(inputs), *FAST, *judged, "-o", str(out)]) == 0
    return out


def test_tables_hold_the_numbers_of_score_and_compare(
    inputs: Path, report: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = parse(report.read_text("utf-8"))
    capsys.readouterr()
    assert main(["score", *_args(inputs), "-f", "json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    summary = {r[0]: r[1:] for r in table(page, "Corpus scores")[1:]}
    for s in scores:
        col = 0 if s["metric"] == "BLEU" else 2
        assert summary[s["system"]][col] == f"{s['score']:.2f}"
    sigs = report.read_text("utf-8").replace("|<wbr>", "|")  # signatures wrap only after their separators
    assert all(s["signature"] in sigs for s in scores)  # every metric's signature, as score prints it
    assert main(["compare", *_args(inputs), *FAST[:4], "-f", "json"]) == 0
    comp = json.loads(capsys.readouterr().out)
    for m in comp["metrics"]:
        ranking = table(page, f"{m['metric']}: ranking")
        by_system = {r[1]: r for r in ranking[1:]}
        for s in m["systems"]:
            assert by_system[s["system"]][3] == f"{s['ci_low']:.2f}–{s['ci_high']:.2f}"
        for r in m["ranking"]:
            assert by_system[r["system"]][4] == r["groups"]
        pairs = {(r[0], r[1]): r[2:] for r in table(page, f"{m['metric']}: pairwise")[1:]}
        for p in m["pairs"]:
            got = pairs[p["system_a"], p["system_b"]]
            assert got[:3] == [f"{p['delta']:+.2f}", p_text(p["p_value"]), p_text(p["p_adjusted"])]
            assert got[3] == ("yes" if p["significant"] else "")
        assert m["signature"] in sigs


def test_sections_figures_and_alt_text(report: Path) -> None:
    html = report.read_text("utf-8")
    page = parse(html)
    for section in ("scores", "significance", "human-0", "analysis", "paraphrase"):
        assert f'id="{section}"' in html
    assert page.alts and all(a for a in page.alts)  # every figure has alt text
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" class="chart"') == len(page.alts) >= 7  # 2 by length
    assert "<img" not in html and "matplotlib" not in html  # drawn directly: no plotting library involved
    assert table(page, "system level")[1][0] == "BLEU"
    assert table(page, "r2 x100 of AEv(alpha, N)")  # the plane's values as text
    assert re.search(r"\(best\)", html) and "matched by M0" in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing to fetch


def test_hostile_names_and_texts_are_escaped() -> None:
    evil = '<script>alert("x")</script>'
    systems = {evil: ["a <b>cat</b> sat & " + evil, "the dog"], "ok'\"": ["a cat sat", "the </table> dog"]}
    refs = [["a cat sat on the mat"], ["the dog ran"]]
    data = build_report(systems, refs, parse_specs("bleu", Preprocess()),
                        options=ReportOptions(n_resamples=99, n_confidence=50), title=evil, command=evil)  # fmt: skip
    html = render_html(data)
    assert "<script>alert" not in html and "</table> dog" not in html and "<b>cat" not in html
    assert html.count("<script>") == 1  # the page's own (sorting), allowed by its hash in the CSP
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html and "ok&#x27;&quot;" in html
    csp = re.search(r'Content-Security-Policy" content="([^"]+)"', html)
    assert csp and "default-src 'none'" in csp.group(1) and "unsafe-inline" not in csp.group(1)


def test_single_system_report_has_intervals_and_no_tests() -> None:
    data = build_report({"only": ["a cat sat"] * 4}, [["a cat sat on"]] * 4, parse_specs("bleu", Preprocess()),
                        options=ReportOptions(n_confidence=50))  # fmt: skip
    assert data.comparison is None and data.metrics[0].systems[0].ci_low <= data.metrics[0].systems[0].score
    assert "nothing to compare" in render_html(data)


def test_planes_of_every_criterion_from_one_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """Several criteria: the plane counts the systems once; a criterion that cannot have a plane (a judged system
    without output) says why, and the others keep theirs."""
    import importlib

    from ngrameval.meta.correlate import HumanScores

    plane_module = importlib.import_module("ngrameval.meta.plane")  # ngrameval.meta.plane is also a function

    calls = []
    counted = plane_module.corpus_totals

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return counted(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(plane_module, "corpus_totals", counting)
    systems = {"a": ["a cat", "the dog"], "b": ["a cat sat", "the dog ran"], "c": ["a cat sat on", "a dog ran off"]}
    refs = [["a cat sat on the mat"], ["the dog ran off"]]
    humans = [HumanScores(name, ("a", "b", "c"), np.array(v), None, 3, 0)
              for name, v in (("fluency", [1.0, 2.0, 4.0]), ("adequacy", [3.0, 1.0, 2.0]))]  # fmt: skip
    options = ReportOptions(n_confidence=20, n_resamples=20, n_corr_resamples=20)
    data = build_report(systems, refs, parse_specs("bleu", Preprocess()), humans=humans, options=options)
    assert len(calls) == 1 and all(isinstance(h.plane, Plane) for h in data.humans)
    assert [h.plane.criterion for h in data.humans if h.plane] == ["fluency", "adequacy"]
    calls.clear()
    missing = HumanScores("coherence", ("a", "b", "z"), np.array([1.0, 2.0, 3.0]), None, 3, 0)
    data = build_report(systems, refs, parse_specs("bleu", Preprocess()), humans=[humans[0], missing], options=options)
    assert isinstance(data.humans[0].plane, Plane) and data.humans[1].plane is None
    assert any("(alpha, N) plane: no output for judged system(s) z" in n for n in data.humans[1].notes)


def test_matches_agree_with_counting_in_python() -> None:
    systems = {"a": ["the cat sat on the mat", "a b a b a", ""], "b": ["the cat the cat", "a a a", "x y"]}
    refs = [["the cat sat", "on the mat the cat"], ["a b", "b a b"], ["x"]]
    enc = an.encode(systems, refs, Preprocess())
    orders = an.matches(enc.hyps, enc.refs, enc.seg)
    for m in orders:
        for s, hyps in enumerate(systems.values()):
            got: Counter[str] = Counter()
            for g, k in zip(m.hyp_gid[s].tolist(), m.matched[s].tolist()):
                start = int(m.first[g])
                got[" ".join(enc.words[t] for t in m.tokens[start : start + m.order].tolist())] += k
            want: Counter[str] = Counter()
            for hyp, rs in zip(hyps, refs):
                grams = Counter(" ".join(hyp.split()[i : i + m.order]) for i in range(len(hyp.split()) - m.order + 1))
                for g, c in grams.items():
                    best = max(Counter(" ".join(r.split()[i : i + m.order])
                                       for i in range(len(r.split()) - m.order + 1))[g] for r in rs)  # fmt: skip
                    want[g] += min(c, best)
            assert +got == +want, (m.order, s)
    better_a, better_b = an.ngram_differences(orders, 0, 1, enc.words)
    assert better_a and all(d.matched_a > d.matched_b for d in better_a)
    assert all(d.matched_b > d.matched_a for d in better_b)


def test_plane_figure_fixed_scale_values_in_cells_no_global_state(tmp_path: Path) -> None:
    matplotlib = pytest.importorskip("matplotlib")  # plane --plot draws PNG/PDF with it (the report does not)
    from ngrameval.report.plane import plane_csv, plane_figure, plot_plane

    backend = matplotlib.get_backend()
    values = np.array([[0.2, 0.3], [0.25, 0.31]])
    p = Plane("q", "r2", (0.0, 1.0), (2, 1), values, 1.0, 1, 0.31, 5, "sig")
    fig = plane_figure(p, fixed=True)
    ax = fig.axes[0]
    assert ax.images[0].norm.vmin == 0 and ax.images[0].norm.vmax == 100  # R^2 on 0-100, not the data's range
    assert sorted(t.get_text() for t in ax.texts) == ["20.0", "25.0", "30.0", "31.0"]
    fitted = plane_figure(p).axes[0].images[0].norm  # the default: the colours span the values (20 to 31)
    assert (fitted.vmin, fitted.vmax) == pytest.approx((20.0, 31.0))
    signed = plane_figure(Plane("q", "pearson", (0.0, 1.0), (2, 1), values, 1.0, 1, 0.31, 5, "sig"), fixed=True)
    assert (signed.axes[0].images[0].norm.vmin, signed.axes[0].images[0].norm.vmax) == (-100, 100)
    plot_plane(p, str(tmp_path / "p.png"))
    assert (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")
    assert matplotlib.get_backend() == backend
    assert plane_csv(p).splitlines()[1:3] == ["q,r2,2,0,0.2,0", "q,r2,2,1,0.3,0"]


CHROMIUM = "/usr/bin/chromium"


@pytest.mark.browser
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"no Chromium at {CHROMIUM} (apt-get install chromium)")
def test_report_in_chromium_offline(report: Path, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (Python package)")
    requests: list[str] = []
    problems: list[str] = []
    with sync_api.sync_playwright() as pw:
        flags = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"]
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=flags)
        try:
            context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda exc: problems.append(str(exc)))
            page.route(re.compile(r"^(?!file:|data:).*"), lambda route: route.abort())  # block, and they are recorded
            page.goto(report.as_uri())
            for heading in ("Scores", "Significance between every pair of systems", "Human judgments: relevance",
                            "Analysis", "Paraphrase: BLEU and PINC"):  # fmt: skip
                assert page.get_by_role("heading", name=heading, exact=True).is_visible()
            charts = page.locator("figure svg.chart")
            assert charts.count() >= 7
            sizes = [
                charts.nth(i).evaluate("s => [s.getBBox().width, s.getBBox().height]") for i in range(charts.count())
            ]
            assert all(w > 100 and h > 100 for w, h in sizes), sizes  # every chart drawn
            labels = page.locator("figure svg.chart text.label")  # the scatter plots' point labels, as drawn
            boxes = labels.evaluate_all(
                "ts => ts.map(t => { const b = t.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; })"
            )
            assert boxes and not [
                (a, b)
                for i, a in enumerate(boxes)
                for b in boxes[i + 1 :]
                if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
            ]
            first = page.locator("table.sortable", has_text="Corpus scores").first
            before = first.locator("tbody tr td").first.inner_text()
            first.locator("thead th").nth(1).click()
            first.locator("thead th").nth(1).click()  # descending: the best BLEU first
            top = first.locator("tbody tr td").first.inner_text()
            best = page.locator("table", has_text="BLEU: ranking").locator("tbody tr td").nth(1).inner_text()
            assert top == best and before
            shots = Path(os.environ.get("NGRAMEVAL_SCREENSHOTS", tmp_path))
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / "report-top.png"))
            page.locator("#human-0").scroll_into_view_if_needed()
            page.screenshot(path=str(shots / "report-human.png"))
        finally:
            browser.close()
    assert requests == [report.as_uri()], requests  # the page itself, nothing else
    assert not problems, problems


# ---------------------------------------------------------------- a report that opens with its answer (issue 28)


def test_first_screen_answers_before_the_sections(report: Path) -> None:
    page = report.read_text("utf-8")
    answer = page[page.index('<section id="answer">') : page.index("</section>")]
    assert page.index('<section id="answer">') < page.index('<h2 id="scores">')
    assert "Ranking by BLEU" in answer and 'href="#significance"' in answer
    assert 'href="#human-0"' in answer and 'href="#plane-0"' in answer and 'id="plane-0"' in page
    first = parse(answer)
    ranking = table(first, "Ranking by BLEU")
    assert ranking[0] == ["rank", "system", "BLEU x100", "95% CI", "group"] and len(ranking) == 1 + len(SYSTEMS)
    best = re.search(r"Agrees best with people on .*?<b>([^<]+)</b>, system-level pearson ([0-9.-]+)", answer)
    assert best is not None
    values = {r[0]: r[1] for r in table(parse(page), "system level")[1:]}  # the correlation table of the section
    top = max(values, key=lambda m: float(values[m].split()[0]))
    assert best.group(1) == top and values[top].startswith(best.group(2))


def test_command_is_folded_relative_and_only_what_was_set(report: Path) -> None:
    page = report.read_text("utf-8")
    block = re.search(r"<details><summary>Command</summary><pre>(.*?)</pre></details>", page, re.S)
    assert block is not None
    command = html.unescape(block.group(1))
    assert str(report.parent) not in command  # paths relative to the page
    assert "M0 " in command and "--paired-ar-n 999" in command  # set: kept
    assert "--correction" not in command and "--seed" not in command  # defaults: left out


def test_significance_grid_is_coloured_and_says_when_nothing_differs() -> None:
    from ngrameval.meta.significance import MetricComparison, PairTest, RankEntry, SystemScore
    from ngrameval.report.html import _matrix

    systems = tuple(SystemScore(s, v, v, v, v) for s, v in (("a", 0.3), ("b", 0.2), ("c", 0.1)))
    ranking = tuple(RankEntry(s.system, s.score, 1, 3, "a") for s in systems)

    def comparison(sig: bool) -> MetricComparison:
        pairs = tuple(PairTest(x.system, y.system, x.score, y.score, x.score - y.score, 0.01, 0.03 if sig else 0.4,
                               sig, None) for i, x in enumerate(systems) for y in systems[i + 1:])  # fmt: skip
        return MetricComparison("BLEU", "", True, systems, pairs, ranking)

    none = _matrix(comparison(False), 2)
    assert "no pair of systems differs significantly (smallest adjusted p = 0.4000)" in none
    assert 'class="grid"' not in none and "every pair" in none
    grid = _matrix(comparison(True), 2)
    cells = re.findall(r'<td class="(better|worse|ns|self)"', grid)
    assert cells.count("better") == 3 and cells.count("worse") == 3 and cells.count("self") == 3  # both halves
    assert 'title="a − b: +10, adjusted p = 0.0300"' in grid


def test_scatter_labels_do_not_collide() -> None:
    from ngrameval.meta.correlate import HumanScores
    from ngrameval.report.html_figures import human_figure
    from ngrameval.report.svg import Label

    rng = np.random.default_rng(0)
    names = tuple(f"system-{i:02d}.long-name" for i in range(16))
    x = rng.normal(0, 0.05, 16)
    y = 0.4 + x + rng.normal(0, 0.01, 16)  # a tight cluster, as WMT19 de-en
    fig = human_figure(HumanScores("da", names, x, None, 16, 0), {"BLEU": y}, {"BLEU": True})
    boxes = [m.box for m in fig.panels[0].marks if isinstance(m, Label)]
    assert 0 < len(boxes) < 16  # some fit, the rest are left out (every point is in the table)
    assert all(not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3])
               for i, a in enumerate(boxes) for b in boxes[i + 1 :])  # fmt: skip
    assert all(b[0] >= 0 and b[2] <= fig.width and b[1] >= 0 and b[3] <= fig.height for b in boxes)
    svg = fig.svg("scatter")
    assert svg.count('class="label"') == len(boxes) and svg.count('class="pt"') == 16
    assert "<title>system-00.long-name: human" in svg  # hover shows each point's values


def test_bucket_lines_distinct_colours_and_no_tiny_buckets() -> None:
    from ngrameval.report.html_figures import MIN_BUCKET, bucket_figure
    from ngrameval.report.svg import Line

    b = an.Bucketed("BLEU", "mean reference length", ("<10", "10-19", ">=20"), (40, 30, 1),
                    tuple(f"s{i}" for i in range(16)), np.full((16, 3), 0.3), True)  # fmt: skip
    fig = bucket_figure(b)
    panel = fig.panels[0]
    colours = {m.colour for m in panel.marks if isinstance(m, Line)}
    assert len(colours) == 16 and [c for _, c in fig.legend] == [m.colour for m in panel.marks if isinstance(m, Line)]
    assert [t for _, t in panel.x.ticks] == ["<10\n(40)", "10-19\n(30)"]  # 1 < MIN_BUCKET left out
    assert MIN_BUCKET > 1 and "left out" in panel.x.title
    assert ">&lt;10</text>" in fig.svg() and ">(40)</text>" in fig.svg()  # the count on a line of its own


def test_plane_chart_fixed_scale_values_in_cells_best_outlined() -> None:
    from ngrameval.report.html_figures import plane_chart
    from ngrameval.report.svg import Cells, colour_at

    values = np.array([[0.2, 0.3], [0.25, 0.31]])
    p = Plane("q", "r2", (0.0, 1.0), (2, 1), values, 1.0, 1, 0.31, 5, "sig")
    fixed = plane_chart(p, fixed=True)
    (cells,) = fixed.panels[0].marks
    assert isinstance(cells, Cells) and fixed.colourbar is not None
    assert fixed.colourbar[:3] == (0, 100, "viridis")  # R^2 on 0-100, not the data's range
    assert sorted(t for row in cells.texts for t in row) == ["20.0", "25.0", "30.0", "31.0"]
    assert cells.outline == (1, 1) and cells.colours[0][0] == colour_at("viridis", 0.2)
    fitted = plane_chart(p)
    assert fitted.colourbar is not None and fitted.colourbar[:2] == pytest.approx((20.0, 31.0))
    assert fitted.panels[0].marks[0].colours[0][0] == colour_at("viridis", 0.0)  # type: ignore[union-attr]
    signed = plane_chart(Plane("q", "pearson", (0.0, 1.0), (2, 1), values, 1.0, 1, 0.31, 5, "sig"), fixed=True)
    assert signed.colourbar is not None and signed.colourbar[:3] == (-100, 100, "RdBu_r")
    assert 'class="best"' in fixed.svg() and fixed.svg().count('class="cell"') == 4


def test_signatures_wrap_only_at_their_separators() -> None:
    from ngrameval.report.html import sig

    assert sig("BLEU|nrefs:1|tok:13a") == "BLEU|<wbr>nrefs:1|<wbr>tok:13a"
    from ngrameval.report.html import _CSS

    assert "word-break:break-all" not in _CSS and ".ci{" in _CSS and "white-space:nowrap" in _CSS.split(".ci{")[1][:60]
