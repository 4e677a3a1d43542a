"""BLEU and NIST equal mteval-v13a.pl / v14 on every golden run, system and segment level."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest

from ngrameval import BLEU, NIST, Preprocess, References, overlap_stats, tokenize_lines

ROOT = Path(__file__).parent / "golden" / "mteval"
RUNS = {
    # run -> (tokens run, inputs, references used)
    "v13a_ref1_cased": ("v13a_cased", "main", 1),
    "v13a_ref2_cased": ("v13a_cased", "main", 2),
    "v13a_ref4_cased": ("v13a_cased", "main", 4),
    "v13a_ref1_lc": ("v13a_lc", "main", 1),
    "v13a_ref2_lc": ("v13a_lc", "main", 2),
    "v13a_ref4_lc": ("v13a_lc", "main", 4),
    "v14_intl_cased": ("v14_intl_cased", "intl", 2),
    "v14_intl_lc": ("v14_intl_lc", "intl", 2),
    "v13a_on_intl_cased": ("v13a_on_intl_cased", "intl", 2),
}


def rows(name: str) -> list[dict[str, str]]:
    with open(ROOT / name, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def tokens(run: str) -> dict[str, list[str]]:
    """who -> mteval's tokenized segments in doc/segment order (the order of the plain-text files)."""
    out: dict[str, list[tuple[str, int, str]]] = defaultdict(list)
    for r in rows("tokens.tsv"):
        if r["run"] == run:
            out[r["who"]].append((r["doc"], int(r["seg"]), r["tokenized"]))
    return {who: [t for _, _, t in sorted(v)] for who, v in out.items()}


def plain(inputs: str, name: str) -> list[str]:
    return (ROOT / "inputs" / inputs / f"{name}.txt").read_text("utf-8").split("\n")[:-1]


@pytest.mark.parametrize("run", RUNS)
def test_scores_equal_mteval(run: str) -> None:
    tok_run, _, k = RUNS[run]
    toks = tokens(tok_run)
    refs = [list(seg) for seg in zip(*(toks[f"ref{j}"] for j in range(1, k + 1)))]
    systems = sorted(w for w in toks if w.startswith("S"))
    built = References.build(refs, Preprocess(tokenize="none"))
    all_stats = overlap_stats([toks[s] for s in systems], built, max_order=5, nist=True)
    bleu, nist = BLEU(smooth_method="mteval"), NIST()
    sys_rows = {r["system"]: r for r in rows("system.tsv") if r["run"] == run}
    seg_rows = [r for r in rows("segments.tsv") if r["run"] == run]
    order = sorted({(r["doc"], int(r["seg"])) for r in seg_rows})
    for name, stats in zip(systems, all_stats):
        want = sys_rows[name]
        assert float(bleu(stats.total())) == pytest.approx(float(want["BLEU_full"]), rel=1e-12)
        assert float(nist(stats.total())) == pytest.approx(float(want["NIST_full"]), rel=1e-12)
        assert f"{float(nist(stats.total())):.4f}" == want["NIST"]
        if want["hyp_words"]:  # v14 does not print it
            assert int(stats.total().hyp_len) == int(want["hyp_words"])
        seg_bleu, seg_nist = bleu(stats), nist(stats)
        for r in seg_rows:
            if r["system"] != name:
                continue
            i = order.index((r["doc"], int(r["seg"])))
            got = seg_bleu[i] if r["metric"] == "BLEU" else seg_nist[i]
            assert got == pytest.approx(float(r["score_full"]), rel=1e-11, abs=1e-12), (r["doc"], r["seg"], r["metric"])


def _differs(a: list[str], b: list[str]) -> list[int]:
    return [i for i, (x, y) in enumerate(zip(a, b)) if x != y]


@pytest.mark.parametrize(
    ("tok_run", "inputs", "tokenize", "lowercase", "expected_diffs"),
    [
        ("v13a_cased", "main", "13a", False, {20}),  # doc3/1: SGML entities (README quirk 2)
        ("v13a_lc", "main", "13a", True, {20, 32}),  # + doc4/3: mteval lower-cases ASCII only
        ("v14_intl_cased", "intl", "intl", False, set()),
        ("v14_intl_lc", "intl", "intl", True, set()),
        ("v13a_on_intl_cased", "intl", "13a", False, set()),
    ],
)
def test_our_tokenizers_reproduce_mteval(tok_run, inputs, tokenize, lowercase, expected_diffs) -> None:  # type: ignore[no-untyped-def]
    toks = tokens(tok_run)
    diffs: set[int] = set()
    for who, want in toks.items():
        ours = [" ".join(t) for t in tokenize_lines(plain(inputs, who), tokenize, lowercase)]
        assert len(ours) == len(want)
        diffs.update(_differs(ours, want))
    assert diffs == expected_diffs
