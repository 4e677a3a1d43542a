"""WMT19 to-English: ngrameval's per-system scores beside the task's official ones (docs/reproductions.md).

    python reproductions/wmt19_official.py ../shared/data/wmt19 [--out repro/wmt19-official] [--pairs de-en,...]

For every system of ``published/wmt19-official-sys-scores.tsv`` (the values the task computed, copied with their
source into ``tests/data/published/``) it computes, with the installed ngrameval (re-running picks up any metric
change; nothing is cached across runs except the output table):

* ``ne_sacrebleu``: BLEU lower-cased, ``intl`` tokenizer -- the task's sacreBLEU signature
  ``BLEU+case.lc+...+smooth.exp+tok.intl`` (compared with the official ``sacreBLEU-BLEU``);
* ``ne_chrf``: chrF with beta = 3 (``chrf:beta=3``: cased, character 6-grams, no whitespace), x 100 -- compared with
  the official ``sacreBLEU-chrF`` (sacreBLEU 1.3.6 ``--chrf-beta 3``; beta = 2 does not fit: de-en uedin.6749 60.37
  vs 60.1258). sacreBLEU 1.3.6 counts a hypothesis's n-grams of an order the reference is too short to have
  (reference under 6 characters); 2.x, and so ngrameval, count 0 there -- 34 of the 90 systems have such a segment,
  7 of them differ at the 4th decimal, by at most 7.8e-5 (de-en uedin.6749 'Managed!' for 'Done!': 60.125863 vs
  60.1258);
* ``ne_bleu_13a``: sacreBLEU's default (13a, cased), the BLEU row of docs/reproductions.md's first table;
* ``ne_bleu_lc`` / ``ne_nist_lc``: BLEU / NIST lower-cased, ``intl``, XML entities decoded -- mteval-v13a
  ``--international-tokenization`` without ``-c`` on the SGML files (compared with the official ``BLEU`` / ``NIST``);
* ``ne_bleu_c`` / ``ne_nist_c``: the same cased (mteval-v13a ``-c``), to show the official values are lower-cased;
* de-en only, hypotheses for its official ``BLEU`` / ``NIST``: against the German source
  (``*_src``) and against the reference shifted by one line (``*_shift1``, a misalignment).

``--aligned-fraction`` (de/fi/lt/ru-en) tests one explanation of their official ``BLEU`` / ``NIST``, which are
below what the references give: that a fixed share of the segments was scored against the wrong reference
segment. Per system it mixes the reference -- a random fraction f of the segments (seed 0) keeps its own
reference, the rest get the reference n/2 lines away -- for f = 0, 0.1, ..., 1 and interpolates the f at which
mteval-style BLEU and NIST (as ``ne_bleu_lc`` / ``ne_nist_lc``) equal the official values; the hypothesis predicts
one f per pair, the same for BLEU and NIST and for every system. Writes ``<out>/aligned-fraction.tsv``.

Writes ``<out>/scores.tsv`` (one row per system, official and ngrameval columns) and ``<out>/correlations.tsv``
(Pearson r with the DA z-scores of ``DA-syslevel.tsv`` of the official ``BLEU`` column -- which must give the
published Table 3 row -- and of ngrameval's columns); ``--from-cache`` recomputes only the correlations.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

import ngrameval as ne
from ngrameval.meta.correlate import coefficient

PAIRS = ("de-en", "fi-en", "gu-en", "kk-en", "lt-en", "ru-en", "zh-en")
OFFICIAL = ("BLEU", "NIST", "sacreBLEU-BLEU", "chrF", "sacreBLEU-chrF")
CHRF3 = ne.parse_specs("chrf:beta=3")  # the task's sacreBLEU chrF (cased, beta = 3)
# official column -> ngrameval column and the decimals the official table gives
COMPARED = {"sacreBLEU-BLEU": "ne_sacrebleu", "sacreBLEU-chrF": "ne_chrf", "BLEU": "ne_bleu_lc", "NIST": "ne_nist_lc"}


def read_official(path: Path) -> list[dict[str, str]]:
    """The official table: one dict per system (lp, system, human_da_z, BLEU, NIST, sacreBLEU-BLEU, ...)."""
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


ENTITIES = (("&apos;", "'"), ("&quot;", '"'), ("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&"))


def decode_entities(text: str) -> str:
    """The five XML entities decoded, as the task's SGML files reached mteval (two systems' plain-text outputs
    hold them literally: zh-en Apprentice-c.6706, 614 lines; kk-en NRC-CNRC.6895, one line)."""
    for entity, char in ENTITIES:
        text = text.replace(entity, char)
    return text


def system_scores(hyps: Sequence[str], ref: Sequence[str], src: Sequence[str] | None) -> dict[str, float]:
    """ngrameval's scores of one system (see the module docstring for the column names)."""
    b: Callable[..., ne.Score] = ne.bleu
    n: Callable[..., ne.Score] = ne.nist
    sgml = [decode_entities(h) for h in hyps]
    row = {
        "ne_sacrebleu": b(hyps, ref, tokenize="intl", lowercase=True).score,
        "ne_chrf": 100 * ne.score({"s": hyps}, [[r] for r in ref], CHRF3)[0].score,
        "ne_bleu_13a": b(hyps, ref).score,
        "ne_bleu_c": b(sgml, ref, tokenize="intl").score,
        "ne_nist_c": n(sgml, ref, tokenize="intl").score,
        "ne_bleu_lc": b(sgml, ref, tokenize="intl", lowercase=True).score,
        "ne_nist_lc": n(sgml, ref, tokenize="intl", lowercase=True).score,
    }
    if src is not None:
        shifted = [*ref[1:], ref[0]]
        row |= {
            "ne_bleu_c_src": b(hyps, src, tokenize="intl").score,
            "ne_nist_c_src": n(hyps, src, tokenize="intl").score,
            "ne_bleu_c_shift1": b(hyps, shifted, tokenize="intl").score,
            "ne_nist_c_shift1": n(hyps, shifted, tokenize="intl").score,
        }
    return row


def run(data: Path, pairs: Sequence[str], limit: int | None = None) -> list[dict[str, str]]:
    """Official rows of ``pairs`` extended with ngrameval's columns (``limit``: at most this many systems a pair)."""
    rows = []
    official = read_official(data / "published" / "wmt19-official-sys-scores.tsv")
    for lp in pairs:
        short = lp.replace("-", "")
        ref = _lines(data / lp / f"newstest2019-{short}-ref.en")
        src = _lines(data / lp / f"newstest2019-{short}-src.{lp[:2]}") if lp == "de-en" else None
        for row in [r for r in official if r["lp"] == lp][:limit]:
            hyps = _lines(data / lp / "system-outputs" / f"newstest2019.{row['system']}.{lp}")
            if len(hyps) != len(ref):
                raise SystemExit(f"{lp} {row['system']}: {len(hyps)} lines for {len(ref)} references")
            rows.append(row | {k: repr(v) for k, v in system_scores(hyps, ref, src).items()})
    return rows


def equal(row: dict[str, str], official: str, ours: str) -> bool:
    """ngrameval's value rounded to the decimals of the official one equals it."""
    decimals = len(row[official].partition(".")[2])
    return f"{float(row[ours]):.{decimals}f}" == row[official]


MISMATCHED = ("de-en", "fi-en", "lt-en", "ru-en")
GRID = np.linspace(0.0, 1.0, 11)


def aligned_fraction(hyps: Sequence[str], ref: Sequence[str], bleu: float, nist: float) -> tuple[float, float]:
    """The share f of segments scored against their own reference (the rest against the line n/2 away) at which
    lower-cased ``intl`` BLEU and NIST on the entity-decoded hypotheses equal ``bleu`` and ``nist``."""
    n = len(ref)
    order = np.random.default_rng(0).permutation(n)
    sgml = [decode_entities(h) for h in hyps]
    curve = []
    for f in GRID:
        own = np.zeros(n, dtype=bool)
        own[order[: round(f * n)]] = True
        mixed = [ref[i] if own[i] else ref[(i + n // 2) % n] for i in range(n)]
        b = ne.bleu(sgml, mixed, tokenize="intl", lowercase=True).score
        s = ne.nist(sgml, mixed, tokenize="intl", lowercase=True).score
        curve.append((b, s))
    bs, ss = (np.array(v) for v in zip(*curve, strict=True))
    return float(np.interp(bleu, np.sort(bs), GRID[np.argsort(bs)])), float(
        np.interp(nist, np.sort(ss), GRID[np.argsort(ss)])
    )


def aligned_fractions(data: Path, out: Path) -> None:
    """``aligned_fraction`` of every de/fi/lt/ru-en system into ``<out>/aligned-fraction.tsv``; per-pair summary."""
    official = read_official(data / "published" / "wmt19-official-sys-scores.tsv")
    lines = ["lp\tsystem\tBLEU\tNIST\tf_bleu\tf_nist"]
    for lp in MISMATCHED:
        ref = _lines(data / lp / f"newstest2019-{lp.replace('-', '')}-ref.en")
        fs = []
        for row in [r for r in official if r["lp"] == lp]:
            hyps = _lines(data / lp / "system-outputs" / f"newstest2019.{row['system']}.{lp}")
            fb, fn = aligned_fraction(hyps, ref, float(row["BLEU"]), float(row["NIST"]))
            fs.append((fb, fn))
            lines.append(f"{lp}\t{row['system']}\t{row['BLEU']}\t{row['NIST']}\t{fb:.3f}\t{fn:.3f}")
        fb_all, fn_all = (np.array(v) for v in zip(*fs, strict=True))
        span = {
            k: f"{v.min():.3f}-{v.max():.3f} (median {np.median(v):.3f})"
            for k, v in (("BLEU", fb_all), ("NIST", fn_all))
        }
        print(f"{lp}: {len(fs)} systems, f from BLEU {span['BLEU']}, from NIST {span['NIST']}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "aligned-fraction.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")


CORRELATED = ("BLEU", "ne_bleu_13a", "ne_bleu_lc", "sacreBLEU-BLEU", "ne_sacrebleu")


def correlations(
    rows: Sequence[dict[str, str]], da: Path, columns: Sequence[str] = CORRELATED
) -> dict[str, dict[str, float]]:
    """Pearson r with the DA z-scores of ``DA-syslevel.tsv`` (ngrameval's coefficient), per pair and column."""
    with da.open(encoding="utf-8") as f:
        z = {(r["lp"], r["system"]): float(r["da_z"]) for r in csv.DictReader(f, delimiter="\t")}
    out: dict[str, dict[str, float]] = {}
    for lp in dict.fromkeys(r["lp"] for r in rows):
        rr = [r for r in rows if r["lp"] == lp]
        y = np.array([z[lp, r["system"]] for r in rr])
        out[lp] = {c: coefficient(np.array([float(r[c]) for r in rr]), y, "pearson")[0] for c in columns}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="../shared/data/wmt19")
    parser.add_argument("--out", type=Path, default=Path("repro/wmt19-official"))
    parser.add_argument("--pairs", default=",".join(PAIRS))
    parser.add_argument("--from-cache", action="store_true", help="reuse <out>/scores.tsv")
    parser.add_argument("--aligned-fraction", action="store_true", help="only the de/fi/lt/ru-en alignment test")
    args = parser.parse_args()
    if args.aligned_fraction:
        aligned_fractions(args.data, args.out)
        return
    if args.from_cache:
        with (args.out / "scores.tsv").open(encoding="utf-8") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
    else:
        rows = run(args.data, args.pairs.split(","))
    columns = list(dict.fromkeys(k for r in rows for k in r))
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "scores.tsv").open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, columns, delimiter="\t", restval="", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    for official, ours in COMPARED.items():
        by_lp = {
            lp: sum(equal(r, official, ours) for r in rows if r["lp"] == lp)
            for lp in dict.fromkeys(r["lp"] for r in rows)
        }
        detail = ", ".join(f"{lp} {k}/{sum(r['lp'] == lp for r in rows)}" for lp, k in by_lp.items())
        worst = max(abs(float(r[ours]) - float(r[official])) for r in rows)
        print(f"{official} = {ours} to the decimals given: {sum(by_lp.values())}/{len(rows)} ({detail});"
              f" largest |difference| {worst:.6f}", file=sys.stderr)  # fmt: skip
    corr = correlations(rows, args.data / "DA-syslevel.tsv")
    with (args.out / "correlations.tsv").open("w", encoding="utf-8") as f:
        f.write("lp\tsystems\t" + "\t".join(CORRELATED) + "\n")
        for lp, by_col in corr.items():
            n = sum(r["lp"] == lp for r in rows)
            f.write(f"{lp}\t{n}\t" + "\t".join(f"{by_col[c]:.4f}" for c in CORRELATED) + "\n")
    print((args.out / "correlations.tsv").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
