"""Human judgments, correlations (levels, groupings, bootstrap intervals) and the (alpha, N) plane."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from scipy import stats

import ngrameval as ne
from ngrameval.cli import main
from ngrameval.cli.demo import load_sample
from ngrameval.errors import InputError
from ngrameval.io.judgments import read_judgments
from ngrameval.meta.correlate import aggregate, coefficient, correlate
from ngrameval.meta.plane import plane
from ngrameval.meta.resample import bootstrap_counts
from ngrameval.report.plane import plane_text, plot_plane


def summeval_rows(tmp_path: Path) -> tuple[str, dict[str, list[str]], list[list[str]], list[str]]:
    """The bundled SummEval sample as a wide JSONL judgment file (doc id, system, four criteria)."""
    systems, refs = load_sample()
    rng = np.random.default_rng(0)
    docs = [f"d{i}" for i in range(len(refs))]
    path = tmp_path / "judgments.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for k, name in enumerate(systems):
            for d in docs:
                rec = {"system": name, "doc": d, "quality": float(rng.integers(1, 6)) + k / 8, "flat": 3}
                fh.write(json.dumps(rec) + "\n")
    return str(path), systems, refs, docs


def test_read_and_aggregate_long_and_wide(tmp_path: Path) -> None:
    long = tmp_path / "long.csv"
    long.write_text("sys,seg,judge,crit,val\na,1,j1,q,1\na,1,j2,q,3\na,2,j1,q,5\nb,1,j1,q,2\nb,2,j1,q,\n")
    js = read_judgments(str(long), system="sys", segment="seg", judge="judge", criterion="crit", scores=["val"])
    assert len(js) == 4  # the empty score is a missing judgment
    h = aggregate(js, "q", ["a", "b"], ["1", "2"], scale=(1, 5))
    np.testing.assert_allclose(h.segment, [[0.25, 1.0], [0.25, np.nan]])
    np.testing.assert_allclose(h.system, [0.625, 0.25])
    assert h.missing == 1 and h.judgments == 4
    wide = tmp_path / "wide.tsv"
    wide.write_text("lp\tsystem\tda\tflu\nde-en\ta\t0.5\t1\nfi-en\ta\t9\t9\nde-en\tb\t-0.2\t2\n")
    js = read_judgments(str(wide), scores=["da", "flu"], where={"lp": "de-en"})
    assert {(j.system, j.criterion, j.score) for j in js} == {("a", "da", 0.5), ("a", "flu", 1), ("b", "da", -0.2),
                                                               ("b", "flu", 2)}  # fmt: skip
    assert aggregate(js, "da", ["a", "b", "c"]).missing == 1  # c has no judgment: reported, NaN


@pytest.mark.parametrize(
    ("content", "kwargs", "message"),
    [
        ("system,score\na,1\na,2\n", {}, r"j\.csv:3: duplicate judgment \(same as line 2\)"),
        ("system,score\na,lots\n", {}, r"j\.csv:2: column 'score': expected a number, got 'lots'"),
        ("system,score\na,nan\n", {}, "expected a finite number"),
        ("sys,score\na,1\n", {}, r"j\.csv:2: no column 'system'; columns: sys, score"),
        ("system,score\n", {}, "no judgment read"),
    ],
)
def test_bad_judgments(tmp_path: Path, content: str, kwargs: dict[str, str], message: str) -> None:
    path = tmp_path / "j.csv"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        read_judgments(str(path), **kwargs)  # type: ignore[arg-type]


def test_aggregate_errors(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text("system,segment,score\na,1,1\nz,1,2\n")
    js = read_judgments(str(path), segment="segment")
    with pytest.raises(InputError, match="unknown system"):
        aggregate(js, "score", ["a", "b"], ["1"])
    with pytest.raises(InputError, match="segment '1' is not one of"):
        aggregate([j for j in js if j.system == "a"], "score", ["a"], ["7"])
    with pytest.raises(InputError, match="criteria found: score"):
        aggregate(js, "fluency", ["a", "z"], ["1"])


def test_coefficients_are_scipys() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.random(12), rng.random(12)
    assert coefficient(x, y, "pearson") == pytest.approx(tuple(map(float, stats.pearsonr(x, y))))
    assert coefficient(x, y, "r2")[0] == pytest.approx(float(stats.pearsonr(x, y)[0]) ** 2)
    assert coefficient(x, y, "spearman")[0] == pytest.approx(float(stats.spearmanr(x, y)[0]))
    assert coefficient(x, y, "kendall-c")[0] == pytest.approx(float(stats.kendalltau(x, y, variant="c")[0]))
    assert np.isnan(coefficient(x[:2], y[:2], "pearson")[0]) and np.isnan(coefficient(np.ones(5), y[:5], "r2")[0])


@pytest.mark.slow
def test_system_level_correlation_and_its_bootstrap(tmp_path: Path) -> None:
    """Corpus BLEU per system equals sacreBLEU's; each bootstrap resample recomputes corpus BLEU and the human
    system means from the same resampled segments (checked against text-level resampling for a few)."""
    path, systems, refs, docs = summeval_rows(tmp_path)
    names = list(systems)
    human = aggregate(read_judgments(path, segment="doc", scores=["quality"]), "quality", names, docs)
    rows = ne.measure(systems, refs, ne.parse_specs("bleu", ne.Preprocess()))
    (c,) = correlate(rows, human, coefficients=["pearson"], n_resamples=50, seed=3)
    streams = [[r[i] for r in refs] for i in range(11)]
    bleu = np.array([sacrebleu.corpus_bleu(systems[s], streams).score / 100 for s in names])
    assert c.value == pytest.approx(float(stats.pearsonr(bleu, human.system)[0]), abs=1e-12)
    # the first resample, by hand: segment counts, sacreBLEU on the repeated texts, human means over them
    w = bootstrap_counts(np.random.default_rng(3), 50, len(docs))[0]
    pick = [i for i, k in enumerate(w) for _ in range(k)]
    x = [sacrebleu.corpus_bleu([systems[s][i] for i in pick], [[st[i] for i in pick] for st in streams]).score
         for s in names]  # fmt: skip
    y = human.segment[:, pick].mean(axis=1)  # type: ignore[index]
    first = float(stats.pearsonr(x, y)[0])
    assert c.ci_low <= c.value <= c.ci_high and c.undefined == 0 and c.n == 16
    (again,) = correlate(rows, human, coefficients=["pearson"], n_resamples=1, seed=3)
    assert again.ci_low == pytest.approx(first, abs=1e-9)


def test_segment_level_groupings(tmp_path: Path) -> None:
    path, systems, refs, docs = summeval_rows(tmp_path)
    names = list(systems)
    human = aggregate(read_judgments(path, segment="doc", scores=["quality"]), "quality", names, docs)
    rows = ne.measure(systems, refs, ne.parse_specs("bleu:eff=yes", ne.Preprocess()))
    sent = np.stack([ne.bleu(systems[s], refs, eff=True).sentences for s in names])  # type: ignore[misc]
    y = human.segment
    assert y is not None
    (none,) = correlate(rows, human, level="segment", coefficients=["spearman"], n_resamples=20)
    assert none.value == pytest.approx(float(stats.spearmanr(sent.ravel(), y.ravel())[0]))
    (item,) = correlate(rows, human, level="segment", grouping="item", coefficients=["pearson"], n_resamples=20)
    per_item = [stats.pearsonr(sent[:, i], y[:, i])[0] for i in range(len(docs))]
    assert item.value == pytest.approx(float(np.mean(per_item))) and item.p_value is None
    (by_sys,) = correlate(rows, human, level="segment", grouping="system", coefficients=["pearson"], n_resamples=20)
    assert by_sys.value == pytest.approx(float(np.mean([stats.pearsonr(sent[k], y[k])[0] for k in range(16)])))


def test_plane_one_count_equals_separate_aev_scores(tmp_path: Path) -> None:
    path, systems, refs, docs = summeval_rows(tmp_path)
    human = aggregate(read_judgments(path, segment="doc", scores=["quality"]), "quality", list(systems), docs)
    pre = ne.Preprocess(lowercase=True, stopwords="smart", stem=True)
    p = plane(systems, refs, human, pre=pre)
    assert p.values.shape == (4, 11) and p.orders == (4, 3, 2, 1)
    for n, a in ((4, 0.0), (1, 0.3), (2, 1.0)):
        x = [
            ne.aev(systems[s], refs, alpha=a, n=n, lowercase=True, stopwords="smart", stem=True).score for s in systems
        ]
        expected = float(stats.pearsonr(x, human.system)[0]) ** 2
        assert p.values[p.orders.index(n), p.alphas.index(a)] == pytest.approx(expected, abs=1e-12)
    assert p.best_value == pytest.approx(float(np.nanmax(p.values)))
    text = plane_text(p)
    assert text.splitlines()[1].split()[:3] == ["N", "\\", "alpha"] and "[" in text
    plot_plane(p, str(tmp_path / "plane.png"))
    assert (tmp_path / "plane.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_correlate_and_plane_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, systems, refs, docs = summeval_rows(tmp_path)
    files = []
    for name, outs in systems.items():
        f = tmp_path / f"{name}.txt"
        f.write_text("\n".join(outs) + "\n", encoding="utf-8")
        files.append(str(f))
    ref_tsv = tmp_path / "refs.tsv"
    ref_tsv.write_text("\n".join("\t".join(r) for r in refs) + "\n", encoding="utf-8")
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(docs) + "\n")
    common = ["-r", str(ref_tsv), "--tsv", "-j", path, "--segment-column", "doc", "--segment-ids", str(ids),
              "--names", *systems]  # fmt: skip
    code = main(["correlate", *files, *common, "--score-columns", "quality", "-m", "bleu,nist", "-f", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    recs = json.loads(out)
    assert {(r["metric"], r["coefficient"]) for r in recs} == {
        (m, k) for m in ("BLEU", "NIST") for k in ("pearson", "r2", "spearman", "kendall-b")
    }
    code = main(["plane", *files, *common, "--score-columns", "quality", "--plot", str(tmp_path / "p.png")])
    out, err = capsys.readouterr()
    assert code == 0 and "best: alpha = " in out and (tmp_path / "p.png").exists()
    code = main(["plane", *files, *common, "--score-columns", "quality", "--coefficients", "r2,kendall-b", "-f", "json",
                 "--plot", str(tmp_path / "q.svg")])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert [p["coefficient"] for p in json.loads(out)] == ["r2", "kendall-b"]
    assert (tmp_path / "q.quality.r2.svg").exists() and (tmp_path / "q.quality.kendall-b.svg").exists()
    assert main(["plane", *files, *common, "--score-columns", "quality", "-w", "4"]) == 0
    assert re.search(r"\b\d+\.\d{4}\b", capsys.readouterr().out)
    csv_args = ["--score-columns", "quality", "--coefficients", "r2,pearson", "-f", "csv"]
    assert main(["plane", *files, *common, *csv_args]) == 0
    table = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert table[0] == ["criterion", "coefficient", "N", "alpha", "value", "best"]
    assert len(table) == 1 + 2 * 4 * 11 and {r[1] for r in table[1:]} == {"r2", "pearson"}
    assert sum(r[5] == "1" for r in table[1:]) == 2  # one best cell per plane
    with pytest.warns(UserWarning, match="pearson undefined"):  # a constant criterion
        assert main(["correlate", *files, *common, "--score-columns", "flat"]) == 0
    capsys.readouterr()
    wrong = [*common[: -len(systems)], *(f"x{k}" for k in range(len(systems)))]
    code = main(["correlate", *files, *wrong, "--score-columns", "quality"])
    _, err = capsys.readouterr()
    assert code == 2 and "judgments.jsonl:1: unknown system 'M0'" in err


@pytest.mark.parametrize("name", ["pearson", "r2", "spearman", "kendall-b"])
def test_resampled_coefficients_equal_scipy_one_by_one(name: str) -> None:
    """The vectorised bootstrap of correlate() gives scipy's coefficient for each resample (ties, constants)."""
    from ngrameval.meta.correlate import coefficient, resampled_coefficients

    rng = np.random.default_rng(3)
    for n in (3, 7, 200):
        x = rng.integers(0, 4, n).astype(float)
        for y in (x * 0.5 + rng.normal(size=n), np.ones(n), rng.integers(0, 3, n).astype(float)):
            idx = rng.integers(0, n, size=(40, n))
            got = resampled_coefficients(x, y, idx, name)
            want = np.array([coefficient(x[i], y[i], name)[0] for i in idx])
            assert np.array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["pearson", "r2", "spearman", "kendall-b"])
def test_row_coefficients_equal_scipy_row_by_row(name: str) -> None:
    """The system-level bootstrap's coefficients, one row a resample (NaN where a system has no judgment in it),
    are scipy's for each row: ties, constant rows (0.1 three times: its mean is not 0.1 in floating point), fewer
    than 3 judged systems."""
    from ngrameval.meta.correlate import coefficient, row_coefficients

    rng = np.random.default_rng(5)
    for n in (2, 3, 5, 17, 40):
        for trial in range(12):
            a = rng.integers(0, 4, (30, n)).astype(float) if trial % 2 else rng.normal(size=(30, n))
            b = rng.normal(size=(30, n)) if trial % 3 else rng.integers(0, 3, (30, n)).astype(float)
            if trial % 4 == 0:
                b[rng.random((30, n)) < 0.4] = np.nan
            b[:3] = 0.1
            got = row_coefficients(a, b, name)
            want = np.array([coefficient(u[~np.isnan(v)], v[~np.isnan(v)], name)[0] for u, v in zip(a, b)])
            assert np.array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], rtol=1e-10, atol=1e-12)
