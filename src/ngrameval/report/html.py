"""The report as one self-contained HTML page: styles, a few lines of script (table sorting; the page reads
without it) and every figure (SVG written by :mod:`ngrameval.report.svg`) inline; a Content-Security-Policy forbids
every network request, so the page opens the same from a file:// URL or an e-mail attachment.

Every string from the inputs (system names, metric names, texts, paths) is HTML-escaped; every figure has
alt text and its numbers in a table next to it. Scores show x100 on the 0-1 scale (NIST on its own).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import math
from collections.abc import Callable, Sequence

import numpy as np

from ngrameval.meta.analysis import Bucketed, Example, NgramDiff, PairAnalysis, Token, WordAccuracy
from ngrameval.meta.correlate import Correlation
from ngrameval.meta.plane import Plane
from ngrameval.meta.report_data import HumanSection, ReportData
from ngrameval.meta.significance import MetricComparison
from ngrameval.report import html_figures
from ngrameval.report.svg import Figure
from ngrameval.report.tabular import p_text

_TESTS = {"ar": "paired approximate randomisation", "bs": "paired bootstrap resampling"}

_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#1b1b1b;
max-width:1180px;margin:0 auto;padding:0 1.2em 3em;background:#fff}
h1{font-size:1.6em;margin:.8em 0 .2em}h2{font-size:1.3em;border-bottom:2px solid #ddd;padding-bottom:.2em;
margin-top:2em}h3{font-size:1.1em;margin-top:1.5em}
code,.sig,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em}
.sig{color:#444;overflow-wrap:normal;word-break:normal;margin:.2em 0}pre{background:#f6f6f6;padding:.6em;
overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}
table{border-collapse:collapse;margin:.6em 0 1em;font-size:.9em}caption{text-align:left;font-weight:600;
padding:.3em 0;caption-side:top}
th,td{border:1px solid #d4d4d4;padding:.25em .55em;text-align:right;vertical-align:top}
th{background:#f2f4f7}td.l,th.l{text-align:left}table.sortable thead th{cursor:pointer}
thead th[data-dir=asc]::after{content:" \\25B2"}thead th[data-dir=desc]::after{content:" \\25BC"}
td.better{background:#d9f2dc}td.worse{background:#f9dcdc}td.self{background:#eee}td.best{outline:2px solid #c00}
.ci{color:#555;font-size:.85em;white-space:nowrap}.note{color:#555;font-size:.9em}.toc a{margin-right:1em}
figure{margin:1em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.88em;color:#333;max-width:900px}
details{margin:.4em 0 1em}summary{cursor:pointer;color:#0b4f8a}
.ex{border:1px solid #ddd;border-radius:4px;padding:.4em .7em;margin:.6em 0}.ex div{margin:.2em 0}
.ex .who{display:inline-block;min-width:9em;color:#555;font-size:.88em}
mark{background:none;padding:0 1px;border-radius:2px}mark.m1{background:#e6f0ff}mark.m2{background:#c4dcff}
mark.m3{background:#95c0ff}mark.m4{background:#5f9cf5}
.cols{display:flex;flex-wrap:wrap;gap:2em}.wide{overflow-x:auto;max-width:100%}
table.matrix{font-size:.78em}table.matrix td{white-space:nowrap}
table.grid{font-size:.75em}table.grid td,table.grid th{padding:.15em .3em;min-width:2.2em;text-align:center}
table.grid td.l,table.grid th.l{text-align:left;min-width:0}td.ns{color:#777}
.answer{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start}.answer>div{flex:1 1 22em}
.answer ul{margin:.3em 0;padding-left:1.2em}.answer h2{margin-top:.4em}.answer li{margin:.25em 0}
"""

_JS = """document.querySelectorAll("table.sortable thead th").forEach(function(th){th.tabIndex=0;
function go(){var t=th.closest("table"),b=t.tBodies[0],i=Array.prototype.indexOf.call(th.parentNode.children,th),
asc=th.dataset.dir!=="asc";th.parentNode.querySelectorAll("th").forEach(function(h){delete h.dataset.dir;});
th.dataset.dir=asc?"asc":"desc";var rows=Array.prototype.slice.call(b.rows);rows.sort(function(x,y){
var a=x.cells[i],c=y.cells[i],u=a.getAttribute("data-v"),v=c.getAttribute("data-v");
var r=(u!==null&&v!==null)?parseFloat(u)-parseFloat(v):a.textContent.localeCompare(c.textContent);
return asc?r:-r;});rows.forEach(function(r){b.appendChild(r);});}
th.addEventListener("click",go);th.addEventListener("keydown",function(e){if(e.key==="Enter")go();});});"""


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def e(x: object) -> str:
    """``x`` as HTML text (quotes escaped too, so it is safe in attributes)."""
    return html.escape(str(x), quote=True)


def sig(text: str) -> str:
    """A signature as HTML that wraps only after its ``|`` separators (never inside a field)."""
    return "|<wbr>".join(e(part) for part in text.split("|"))


def _fmt(v: float | None, k: float, width: int) -> str:
    return "n/a" if v is None or math.isnan(v) else f"{v * k:.{width}f}"


def td(text: str, value: float | None = None, cls: str = "") -> str:
    """A cell of escaped ``text``; ``value`` is the number the table sorts by."""
    v = "" if value is None else f' data-v="{-1e300 if math.isnan(value) else float(value)!r}"'
    c = f' class="{cls}"' if cls else ""
    return f"<td{c}{v}>{e(text)}</td>"


def table(
    head: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "", sortable: bool = True, extra: str = ""
) -> str:
    """A table (in a box that scrolls sideways when wide); ``rows`` are lists of ready cells (:func:`td`),
    ``head`` plain texts (escaped here); ``extra``: more CSS classes."""
    cls = f' class="{("sortable " if sortable else "") + extra}"'
    heads = "".join(f'<th scope="col"{" class=l" if k == 0 else ""}>{e(h)}</th>' for k, h in enumerate(head))
    cap = f"<caption>{e(caption)}</caption>" if caption else ""
    body = "".join("<tr>" + "".join(r) + "</tr>" for r in rows)
    return f'<div class="wide"><table{cls}>{cap}<thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table></div>'


def figure(make: Callable[[], Figure], alt: str, caption: str) -> str:
    """A figure from ``make`` as inline SVG with ``alt`` as its accessible name and a caption (the numbers are in
    a table next to it)."""
    return f"<figure>{make().svg(alt)}<figcaption>{e(caption)}</figcaption></figure>"


def _k(fraction: bool) -> float:
    return 100.0 if fraction else 1.0


def _summary(data: ReportData, width: int) -> str:
    ms = data.metrics
    conf = f"{data.confidence * 100:g}%"
    head = ["system", *(h for m in ms for h in (f"{m.metric}{' x100' if m.fraction else ''}", f"{conf} CI"))]
    rows = []
    for i, name in enumerate(data.systems):
        cells = [td(name, cls="l")]
        for m in ms:
            s, k = m.systems[i], _k(m.fraction)
            cells.append(td(_fmt(s.score, k, width), s.score))
            cells.append(td(f"{_fmt(s.ci_low, k, width)}–{_fmt(s.ci_high, k, width)}", s.ci_low, "ci"))
        rows.append(cells)
    sigs = "".join(f'<p class="sig"><b>{e(m.metric)}</b>: {sig(s)}</p>' for m, s in zip(ms, data.score_signatures))
    n_conf = data.comparison.n_confidence if data.comparison else "?"
    if data.comparison and data.comparison.test == "bs":
        n_conf = data.comparison.n_resamples
    caption = (f"Corpus scores; {conf} bootstrap percentile intervals ({n_conf} resamples of the segments)."
               " Click a column heading to sort.")  # fmt: skip
    fig = figure(
        lambda: html_figures.scores_figure(ms, data.confidence),
        f"Dot plot of each system's score with its {conf} interval, one panel per metric; the numbers are in "
        "the table above.",
        f"Scores with {conf} bootstrap intervals, best system on top of each panel.",
    )
    return (f'<h2 id="scores">Scores</h2>{table(head, rows, caption)}'
            f"<h3>Signatures</h3><p class=note>Every setting that changes a number; as "
            f"<code>ngrameval score</code> prints it.</p>{sigs}{fig}")  # fmt: skip


def _bucket_figure(b: Bucketed) -> Figure:
    return html_figures.bucket_figure(b)


def _grid(m: MetricComparison, order: Sequence[str], k: float) -> str:
    """The significance grid: rows and columns in ranking order (columns numbered as the rows), each cell the
    row's score minus the column's (1 decimal), green where the row is significantly better, red where worse;
    the exact difference and adjusted p in the cell's tooltip."""
    tests = {(p.system_a, p.system_b): p for p in m.pairs}
    rows = []
    for i, a in enumerate(order):
        cells = [f'<td class="l">{i + 1}</td>', f'<td class="l">{e(a)}</td>']
        for b in order:
            if a == b:
                cells.append('<td class="self">·</td>')
                continue
            p = tests.get((a, b)) or tests[(b, a)]
            delta = (p.delta if p.system_a == a else -p.delta) * k
            better = (delta > 0) == m.higher_is_better
            cls = ("better" if better else "worse") if p.significant else "ns"
            tip = f"{a} − {b}: {delta:+.4g}, adjusted p = {p_text(p.p_adjusted)}"
            cells.append(f'<td class="{cls}" title="{e(tip)}">{delta:+.1f}</td>')
        rows.append("".join(cells))
    head = "".join(f'<th scope="col">{i + 1}</th>' for i in range(len(order)))
    return (f'<div class="wide"><table class="grid"><caption>{e(m.metric)}: significance grid (row − column; '
            "green: row significantly better, red: worse, grey: not significant; hover for p)</caption>"
            f'<thead><tr><th class="l">#</th><th class="l">system</th>{head}</tr></thead><tbody>'
            + "".join(f"<tr>{r}</tr>" for r in rows) + "</tbody></table></div>")  # fmt: skip


def _matrix(m: MetricComparison, width: int) -> str:
    """The compact significance grid (or, when no pair differs, one sentence saying so) and every pair's
    difference and p-values in a folded table."""
    assert m.ranking is not None
    order = [r.system for r in m.ranking]
    k = _k(m.fraction)
    pairs = [[td(p.system_a, cls="l"), td(p.system_b, cls="l"), td(f"{p.delta * k:+.{width}f}", p.delta),
              td(p_text(p.p_value), p.p_value), td(p_text(p.p_adjusted), p.p_adjusted),
              td("yes" if p.significant else "", cls="l")] for p in m.pairs]  # fmt: skip
    folded = table(["system A", "system B", "A − B", "p", "adjusted p", "significant"], pairs,
                   f"{m.metric}: pairwise differences and p-values")  # fmt: skip
    if not any(p.significant for p in m.pairs):
        low = min(p.p_adjusted for p in m.pairs)
        head = (f'<p class="note">{e(m.metric)}: no pair of systems differs significantly (smallest adjusted p = '
                f"{p_text(low)}).</p>")  # fmt: skip
    else:
        head = _grid(m, order, k)
    return f"{head}<details><summary>every pair: difference and p-values</summary>{folded}</details>"


def _ranking(m: MetricComparison, data: ReportData, width: int) -> str:
    assert m.ranking is not None
    k = _k(m.fraction)
    ci = {s.system: s for s in m.systems}
    rows = [[td(str(r.rank_low) if r.rank_low == r.rank_high else f"{r.rank_low}–{r.rank_high}", r.rank_low),
             td(r.system, cls="l"), td(_fmt(r.score, k, width), r.score),
             td(f"{_fmt(ci[r.system].ci_low, k, width)}–{_fmt(ci[r.system].ci_high, k, width)}", None, "ci"),
             td(r.groups, cls="l")] for r in m.ranking]  # fmt: skip
    conf = f"{data.confidence * 100:g}% CI"
    return table(["rank", "system", f"{m.metric}{' x100' if m.fraction else ''}", conf, "group"], rows,
                 f"{m.metric}: ranking with significance groups")  # fmt: skip


def _significance(data: ReportData, width: int) -> str:
    c = data.comparison
    if c is None:
        return '<h2 id="significance">Significance</h2><p class="note">One system: nothing to compare.</p>'
    n = f"{c.n_resamples} {'trials' if c.test == 'ar' else 'resamples'}"
    corr = "uncorrected" if c.correction == "none" else f"{c.correction}-adjusted over all pairs"
    out = [
        '<h2 id="significance">Significance between every pair of systems</h2>',
        f"<p>{e(_TESTS[c.test])} ({e(n)}, seed {c.seed}); p-values {e(corr)}; significant at α = {c.alpha:g}. "
        "▲/▼ (and green/red): the row system is significantly better/worse than the column system. "
        "Rank: 1 + systems significantly better … n − systems significantly worse; systems sharing a group letter "
        "do not differ significantly, systems with no letter in common do (compact letter display of the pairwise "
        "tests, Piepho 2004).</p>",
    ]
    for m in c.metrics:
        out += [f"<h3>{e(m.metric)}</h3>", '<div class="cols">', _ranking(m, data, width), "</div>",
                _matrix(m, width), f'<p class="sig">{sig(m.signature)}</p>']  # fmt: skip
    return "".join(out)


def _corr_cell(c: Correlation) -> str:
    if math.isnan(c.value):
        return td("n/a", math.nan)
    return td(f"{c.value:.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}]", c.value)


def _correlations(sec: HumanSection) -> str:
    out = []
    for level in dict.fromkeys(c.level for c in sec.correlations):
        block = [c for c in sec.correlations if c.level == level]
        coefs = list(dict.fromkeys(c.coefficient for c in block))
        metrics = list(dict.fromkeys(c.metric for c in block))
        cell = {(c.metric, c.coefficient): c for c in block}
        f = block[0]
        rows = [[td(m, cls="l"), *(_corr_cell(cell[m, k]) for k in coefs)] for m in metrics]
        cap = (f"{level} level (n = {f.n}{'' if level == 'system' else ', every judged segment'}): coefficient "
               f"[{f.confidence * 100:g}% bootstrap interval, {f.n_resamples} resamples, seed {f.seed}]")  # fmt: skip
        out.append(table(["metric", *coefs], rows, cap))
    negated = list(dict.fromkeys(c.metric for c in sec.correlations if c.negated))
    if negated:
        out.append(
            f'<p class="note">{e(", ".join(negated))}: lower is better; scores negated before correlating '
            "and testing (as mt-metrics-eval does), so a positive value means agreement with people.</p>"
        )
    return "".join(out)


def _differences(sec: HumanSection) -> str:
    if not sec.differences:
        return ""
    d0 = sec.differences[0]
    rows = [[td(d.metric_a, cls="l"), td(d.metric_b, cls="l"), td(f"{d.value_a:.3f}", d.value_a),
             td(f"{d.value_b:.3f}", d.value_b), td(f"{d.r_ab:.3f}", d.r_ab),
             td(p_text(d.williams_p), d.williams_p), td(p_text(d.permutation_p), d.permutation_p)]
            for d in sec.differences]  # fmt: skip
    cap = (f"Is metric A's {d0.coefficient} with people higher than B's? ({d0.level} level, n = {d0.n}; "
           f"Williams' test for Pearson; permutation test, {d0.n_resamples} trials, seed {d0.seed})")  # fmt: skip
    head = ["metric A", "metric B", f"{d0.coefficient} A", f"{d0.coefficient} B", "r(A, B)", "Williams p",
            "permutation p"]  # fmt: skip
    return table(head, rows, cap)


def _plane(p: Plane) -> str:
    rows = []
    for i, n in enumerate(p.orders):
        cells = [td(f"N = {n}", cls="l")]
        for j, a in enumerate(p.alphas):
            v = p.values[i, j]
            best = (n, a) == (p.best_order, p.best_alpha)
            cells.append(td(("n/a" if np.isnan(v) else f"{v * 100:.1f}") + (" (best)" if best else ""), None,
                            "best" if best else ""))  # fmt: skip
        rows.append(cells)
    grid = table(["N \\ alpha", *(f"{a:g}" for a in p.alphas)], rows,
                 f"{p.coefficient} x100 of AEv(alpha, N) with {p.criterion} at system level ({p.n_systems} systems)",
                 sortable=False)  # fmt: skip
    alt = (
        f"Heat map of {p.coefficient} x100 for AEv(alpha, N), alpha {p.alphas[0]:g} to {p.alphas[-1]:g}, N "
        f"{min(p.orders)} to {max(p.orders)}; best alpha = {p.best_alpha:g}, N = {p.best_order} "
        f"({p.best_value * 100:.1f}), outlined in red. The values are in the table next to it."
    )
    cap = (
        f"The (alpha, N) plane for {p.criterion}: best member AEv(alpha={p.best_alpha:g}, N={p.best_order}), "
        f"{p.coefficient} = {p.best_value * 100:.1f}. Colours span this plane's values (lowest to highest)."
    )
    chart = figure(lambda: html_figures.plane_chart(p), alt, cap)
    return (f"{chart}<details open><summary>plane values</summary>{grid}</details>"
            f'<p class="sig">{sig(p.signature)}</p>')  # fmt: skip


def _human(sec: HumanSection, data: ReportData, index: int, width: int) -> str:
    h = sec.human
    out = [f'<h2 id="human-{index}">Human judgments: {e(h.criterion)}</h2>',
           f"<p>{h.judgments} judgments; {h.missing} {'systems' if h.segment is None else '(system, segment) cells'}"
           " without one. Human scores are means over judges (and segments).</p>",
           _correlations(sec), _differences(sec)]  # fmt: skip
    if sec.plane is not None:
        out += [f'<h3 id="plane-{index}">The evaluation plane</h3>', _plane(sec.plane)]
    scores = {m.metric: np.array([s.score for s in m.systems]) for m in data.metrics}
    fractions = {m.metric: m.fraction for m in data.metrics}
    lower = [m.metric for m in data.metrics if not m.higher_is_better]
    rows = [[td(s, cls="l"), td(_fmt(h.system[i], 1.0, 3), h.system[i]),
             *(td(_fmt(scores[m][i], _k(fractions[m]), width), scores[m][i]) for m in scores)]
            for i, s in enumerate(h.systems)]  # fmt: skip
    tbl = table(["system", f"human {h.criterion}", *scores], rows, "The points of the scatter plots")
    alt = (
        f"Scatter plots, one per metric, of each system's metric score against its mean human {h.criterion}; "
        "the points are listed in the table below."
    )
    out += ["<h3>Metrics against people, per system</h3>",
            figure(lambda: html_figures.human_figure(h, scores, fractions, lower), alt,
                   f"Each point is a system: mean human {h.criterion} (x) and the metric's corpus score (y); a label "
                   "that would overlap another is left out (every point is in the table below)."),
            f"<details><summary>points</summary>{tbl}</details>"]  # fmt: skip
    out += [f'<p class="note">{e(n)}</p>' for n in sec.notes]
    return "".join(out)


def _bucket_table(b: Bucketed, width: int) -> str:
    k = _k(b.fraction)
    rows = [[td(s, cls="l"), *(td(_fmt(v, k, width), v) for v in row)] for s, row in zip(b.systems, b.values)]
    head = ["system", *(f"{lab} ({n} seg.)" for lab, n in zip(b.labels, b.counts))]
    return table(head, rows, f"{b.metric}{' x100' if b.fraction else ''} by {b.by} (tokens)")


def _words_table(w: WordAccuracy) -> str:
    rows = []
    for i, s in enumerate(w.systems):
        cells = [td(s, cls="l")]
        for j in range(len(w.labels)):
            f = w.fmeasure[i, j]
            cells.append(td(_fmt(f, 100, 1), f))
        rows.append(cells)
    head = ["system", *(f"{lab} ({n} ref. tokens)" for lab, n in zip(w.labels, w.ref_tokens))]
    return table(head, rows, "word F-measure x100 by the word's frequency in the references")


def _ngram_table(items: Sequence[NgramDiff], a: str, b: str, caption: str) -> str:
    rows = [[td(d.ngram, cls="l"), td(str(d.order), d.order), td(str(d.matched_a), d.matched_a),
             td(str(d.matched_b), d.matched_b)] for d in items]  # fmt: skip
    return table(["n-gram", "n", f"matched by {a}", f"matched by {b}"], rows, caption)


def _tokens(tokens: Sequence[Token]) -> str:
    return " ".join(e(t.text) if not t.matched else
                    f'<mark class="m{t.matched}" title="in a matched {t.matched}-gram">{e(t.text)}</mark>'
                    for t in tokens)  # fmt: skip


def _example(x: Example, p: PairAnalysis, width: int) -> str:
    k = _k(p.fraction)
    return (f'<div class="ex"><div><span class="who">segment {x.segment}</span></div>'
            f'<div><span class="who">reference</span> {e(x.reference)}</div>'
            f'<div><span class="who">{e(p.system_a)} ({_fmt(x.score_a, k, width)})</span> {_tokens(x.hyp_a)}</div>'
            f'<div><span class="who">{e(p.system_b)} ({_fmt(x.score_b, k, width)})</span> {_tokens(x.hyp_b)}</div>'
            "</div>")  # fmt: skip


def _pair(p: PairAnalysis, width: int) -> str:
    a, b = p.system_a, p.system_b
    return "".join([
        f"<h3>{e(a)} vs {e(b)}</h3>",
        '<div class="cols">',
        _ngram_table(p.better_a, a, b, f"n-grams {a} matches more often than {b}"),
        _ngram_table(p.better_b, a, b, f"n-grams {b} matches more often than {a}"),
        "</div>",
        f"<details open><summary>segments where {e(a)} scores higher on sentence {e(p.metric)}</summary>",
        "".join(_example(x, p, width) for x in p.examples_a) or "<p class=note>none</p>",
        "</details>",
        f"<details open><summary>segments where {e(b)} scores higher on sentence {e(p.metric)}</summary>",
        "".join(_example(x, p, width) for x in p.examples_b) or "<p class=note>none</p>",
        "</details>",
    ])  # fmt: skip


def _analysis(data: ReportData, width: int) -> str:
    out = ['<h2 id="analysis">Analysis</h2>',
           f'<p class="note">Tokens as <code>{e(data.analysis_text)}</code> (no stemming or stop-word removal, '
           "so the words are readable); matches are clipped by the most frequent reference as in BLEU.</p>",
           "<h3>Scores by sentence length</h3>"]  # fmt: skip
    for i, b in enumerate(data.lengths):
        out.append(_bucket_table(b, width))
        if i < 4:
            alt = f"Line chart of {b.metric} per system across buckets of {b.by}; the numbers are in the table above."
            draw = functools.partial(_bucket_figure, b)
            cap = f"{b.metric} per {b.by} bucket; the segment count of each bucket under its label."
            out.append(figure(draw, alt, cap))
    if data.words is not None:
        w = data.words
        out += [
            "<h3>Word accuracy by reference frequency</h3>",
            _words_table(w),
            figure(
                lambda: html_figures.word_figure(w),
                "Line chart of word F-measure per system across word-frequency buckets; the numbers are in "
                "the table above.",
                "Word F-measure by how often the word occurs in the references.",
            ),
        ]
    if data.pairs:
        out += ['<h3>N-grams and examples</h3><p class="note">Hypothesis words are highlighted by the longest '
                'reference n-gram they are part of: <mark class="m1">1</mark> <mark class="m2">2</mark> '
                '<mark class="m3">3</mark> <mark class="m4">4 or more</mark>. N-grams ranked by compare-mt\'s '
                "smoothed share (m<sub>A</sub> + 1) / (m<sub>A</sub> + m<sub>B</sub> + 2).</p>"]  # fmt: skip
        out += [_pair(p, width) for p in data.pairs]
    return "".join(out)


def _paraphrase(data: ReportData, width: int) -> str:
    r = data.paraphrase
    assert r is not None
    metrics = list(dict.fromkeys(s.metric for s in r.scores))
    cell = {(s.system, s.metric): s for s in r.scores}
    rows = [[td(n, cls="l"), *(td(_fmt(cell[n, m].score, 100, width), cell[n, m].score) for m in metrics)]
            for n in data.systems]  # fmt: skip
    signatures = dict.fromkeys(s.signature for s in r.scores if "|" in s.signature)  # not the combinations' notes
    sigs = "".join(f'<p class="sig">{e(s)}</p>' for s in signatures)
    bleu = np.array([cell[n, "BLEU"].score for n in data.systems])
    pinc = np.array([cell[n, "PINC"].score for n in data.systems])
    fig = figure(
        lambda: html_figures.bleu_pinc_figure(data.systems, bleu, pinc),
        "Scatter plot of each system's PINC (x) and BLEU (y) x100 over contour lines of their geometric "
        "mean; the numbers are in the table above.",
        "Paraphrase systems: adequacy (BLEU) against novelty (PINC); grey lines: sqrt(BLEU x PINC).",
    )
    return (
        f'<h2 id="paraphrase">Paraphrase: BLEU and PINC</h2>'
        f"{table(['system', *(m + ' x100' for m in metrics)], rows, 'Chen & Dolan (2011) scores')}{sigs}{fig}"
    )


def _best_metric(sec: HumanSection) -> Correlation | None:
    """The metric whose system-level correlation (first coefficient) with the criterion is highest."""
    block = [c for c in sec.correlations if c.level == "system" and not math.isnan(c.value)]
    if not block:
        return None
    first = block[0].coefficient
    return max((c for c in block if c.coefficient == first), key=lambda c: c.value)


def _answer(data: ReportData, width: int) -> str:
    """The first screen: the ranking under the first metric (interval, rank range, letter groups), which metric
    agrees best with each human criterion and the best (alpha, N) cell, each linking to its section."""
    m = data.metrics[0]
    k = _k(m.fraction)
    by = {s.system: s for s in m.systems}
    # one system: no ranking, its score alone; else (rank range, system, letters) in ranking order
    entries = [(f"{r.rank_low}" if r.rank_low == r.rank_high else f"{r.rank_low}–{r.rank_high}", r.system, r.groups)
               for r in m.ranking or ()] or [("1", s.system, "") for s in m.systems]  # fmt: skip
    rows = []
    for i, (ranks, name, groups) in enumerate(entries):
        s = by[name]
        rows.append([td(ranks, float(i)), td(name, cls="l"), td(_fmt(s.score, k, width), s.score),
                     td(f"{_fmt(s.ci_low, k, width)}–{_fmt(s.ci_high, k, width)}", s.ci_low, "ci"),
                     *([td(groups, cls="l")] if m.ranking else [])])  # fmt: skip
    conf = f"{data.confidence * 100:g}% CI"
    direction = "" if m.higher_is_better else ", lower is better"
    head = ["rank", "system", f"{m.metric}{' x100' if m.fraction else ''}", conf, *(["group"] if m.ranking else [])]
    caption = f"Ranking by {m.metric}{direction}" + (": systems sharing a letter do not differ significantly"
                                                      if m.ranking else "")  # fmt: skip
    facts = []
    c = data.comparison
    if c is not None and m.ranking:
        n_sig = sum(p.significant for p in m.pairs)
        facts.append(f'<li><a href="#significance">{n_sig} of {len(m.pairs)} pairs</a> differ significantly under '
                     f"{e(m.metric)} ({e(_TESTS[c.test])}, {e(c.correction)}, α = {c.alpha:g}).</li>")  # fmt: skip
    for i, sec in enumerate(data.humans):
        best = _best_metric(sec)
        if best is not None:
            facts.append(f'<li>Agrees best with people on <a href="#human-{i}">{e(sec.human.criterion)}</a>: '
                         f"<b>{e(best.metric)}</b>, system-level {e(best.coefficient)} {best.value:.3f} "
                         f'<span class="ci">[{best.ci_low:.3f}, {best.ci_high:.3f}]</span>.</li>')  # fmt: skip
        if sec.plane is not None:
            p = sec.plane
            facts.append(f'<li>Best <a href="#plane-{i}">(α, N) cell</a> for {e(sec.human.criterion)}: '
                         f"AEv(α = {p.best_alpha:g}, N = {p.best_order}), {e(p.coefficient)} x100 = "
                         f"{p.best_value * 100:.1f}.</li>")  # fmt: skip
    others = ", ".join(e(x.metric) for x in data.metrics[1:])
    if others:
        facts.append(f'<li>Also scored: {others} (<a href="#scores">all scores</a>).</li>')
    return (
        f'<section id="answer"><div class="answer"><div>{table(head, rows, caption)}</div>'
        f"<div><h2>In short</h2><ul>{''.join(facts)}</ul></div></div></section>"
    )


def render_html(data: ReportData, width: int = 2) -> str:
    """The whole page for ``data``; ``width`` decimals for scores."""
    sections = [_summary(data, width), _significance(data, width)]
    toc = [("scores", "Scores"), ("significance", "Significance")]
    for i, sec in enumerate(data.humans):
        sections.append(_human(sec, data, i, width))
        toc.append((f"human-{i}", f"Human: {sec.human.criterion}"))
    if data.lengths or data.words is not None or data.pairs:  # none from statistics without their texts
        sections.append(_analysis(data, width))
        toc.append(("analysis", "Analysis"))
    if data.paraphrase is not None:
        sections.append(_paraphrase(data, width))
        toc.append(("paraphrase", "Paraphrase"))
    refs = "/".join(map(str, data.n_refs))
    csp = f"default-src 'none'; img-src data:; style-src {_hash(_CSS)}; script-src {_hash(_JS)}"
    nav = "".join(f'<a href="#{i}">{e(t)}</a>' for i, t in toc)
    head = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="generator" content="ngrameval {e(data.version)}">'
            f"<title>{e(data.title)}</title><style>{_CSS}</style></head><body>")  # fmt: skip
    intro = (f"<h1>{e(data.title)}</h1><p>{len(data.systems)} systems × {data.n_segments} segments, "
             f"{e(refs)} reference(s) per segment. Scores x100 on the 0–1 scale.</p>"
             + (f'<p class="note">{e(data.absent)}</p>' if data.absent else "")
             + f'<nav class="toc">{nav}</nav>' + _answer(data, width)
             + (f"<details><summary>Command</summary><pre>{e(data.command)}</pre></details>" if data.command
                else ""))  # fmt: skip
    foot = (
        f'<hr><p class="note">Made by ngrameval {e(data.version)}. Self-contained: no script, style, font or '
        "image is fetched from anywhere, and the page forbids it.</p>"
    )
    return head + intro + "".join(sections) + foot + f"<script>{_JS}</script></body></html>\n"
