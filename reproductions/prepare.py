"""Turn the public data sets of ``../shared/data`` into the plain files ``ngrameval`` reads (docs/reproductions.md).

    python reproductions/prepare.py summeval ../shared/data/summeval repro/summeval
    python reproductions/prepare.py realsumm ../shared/data/realsumm-texts repro/realsumm
    python reproductions/prepare.py e2e ../shared/data/e2e repro/e2e
    python reproductions/prepare.py wmt19 ../shared/data/wmt19 repro/wmt19
    python reproductions/prepare.py mrpc ../shared/data/mrpc repro/mrpc
    python reproductions/prepare.py d2t ../shared/data/bagel-sfhot-sfres repro/d2t

Each writes one file per system, named as the judgments name the system (so no ``--names`` is needed), one
segment a line; the references as TSV (one reference per field; E2E pads with empty fields, read with
``--missing-empty-refs``); ``ids.txt`` (the segment id of each line) and the judgments. Nothing is dropped
or reordered: every count is checked and printed; where the upstream data needs a decision it is said here.

* summeval: systems ``M0`` .. ``M23`` (100 documents, the order of first appearance), 11 references,
  ``source.txt`` (the article, newlines -> spaces), judgments = ``summeval.jsonl`` itself (wide layout).
* realsumm: 25 systems (``abs_<name>``, ``ext_<name>``: ``/`` is not allowed in a file name), ``<t> .. </t>``
  sentence tags removed (sentences joined by a space), one reference per document: the upstream dict's
  ``ref_summ`` (rows with ``text_variant == "common+dict"``; the systems scored with a re-tokenised copy
  of it are scored against this one here), judgments ``litepyramid.csv`` (system, doc_id, litepyramid).
* e2e: the 21 rated systems, each line as the official scorer reads it (stripped, mojibake ``Â£``/``Ã©``
  fixed, the blank separator lines of ``harv.tsv`` skipped) and checked to be 630 MRs in test-set order;
  judgments ``quality.csv`` / ``naturalness.csv`` in the long layout (system, mr_id, worker, score). The
  ratings are a 0-100 slider; 78 quality and 462 naturalness ratings lie outside it (105 .. 111111, typed
  into its box) and are left out; a worker who rated the same output of the same MR on two screens gets
  the mean of the two. Both counts are printed. The ratings are read by ``ngrameval.io.layouts`` (the slots
  layout), so ``-j human_ratings_quality.csv --judgments-layout slots ...`` reads the upstream file the same way.
* wmt19: per pair, copies of the outputs named ``<System>.<id>`` (the names of ``DA-syslevel.tsv``).
* d2t: BAGEL, SF-HOT, SF-RES (``bagel-sfhot-sfres``, Novikova et al. 2017): per set one "system" ``d2t``
  (every rated output, one a line, in file order), the distinct references as padded TSV (read with
  ``--missing-empty-refs``), ``ids.txt`` and ``ratings.csv`` (system, id, informativeness, naturalness,
  quality: the mean of 3 crowd ratings, 1-6) -- segment-level data, the system names are not public.
* mrpc: the 1,725 test pairs as one "system" ``mrpc`` (sentence 2), ``source.txt`` = sentence 1 (also the
  reference), ``labels.csv`` (system, pair, paraphrase 0/1): a paraphrase data set with human labels for
  Chen & Dolan's conditional correlation (their own rated MSVD paraphrases are not public).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
from collections import defaultdict
from pathlib import Path

from ngrameval.io.judgments import read_judgments_counted


def _write(path: Path, lines: list[str]) -> None:
    for i, line in enumerate(lines):
        if "\n" in line or "\r" in line:
            raise ValueError(f"{path}: line {i + 1} contains a line break")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def _jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def summeval(data: Path, out: Path) -> None:
    rows = _jsonl(data / "summeval.jsonl")
    docs = list(dict.fromkeys(str(r["doc_id"]) for r in rows))
    systems: dict[str, dict[str, str]] = defaultdict(dict)
    refs: dict[str, list[str]] = {}
    for r in rows:
        systems[str(r["system"])][str(r["doc_id"])] = str(r["summary"])
        refs[str(r["doc_id"])] = [str(x) for x in r["references"]]  # type: ignore[attr-defined]
    for name, by_doc in systems.items():
        _write(out / "sys" / name, [by_doc[d] for d in docs])
    _write(out / "refs.tsv", ["\t".join(refs[d]) for d in docs])
    _write(out / "ids.txt", docs)
    source = {str(r["doc_id"]): " ".join(str(r["source"]).split()) for r in _jsonl(data / "sources.jsonl")}
    _write(out / "source.txt", [source[d] for d in docs])
    shutil.copyfile(data / "summeval.jsonl", out / "summeval.jsonl")
    print(f"summeval: {len(systems)} systems x {len(docs)} documents, {len(refs[docs[0]])} references each")


def _untag(text: str) -> str:
    sentences = re.findall(r"<t> (.+?) </t>", text)
    return " ".join(sentences) if sentences else " ".join(text.split())


def realsumm(data: Path, out: Path) -> None:
    rows = _jsonl(data / "summaries.jsonl")
    docs = sorted({int(str(r["doc_id"])) for r in rows})
    ref: dict[int, str] = {}
    systems: dict[str, dict[int, str]] = defaultdict(dict)
    for r in rows:
        doc = int(str(r["doc_id"]))
        systems[str(r["system"]).replace("/", "_")][doc] = _untag(str(r["summary"]))
        if r["text_variant"] == "common+dict":
            ref.setdefault(doc, _untag(str(r["reference"])))
    missing = [d for d in docs if d not in ref]
    if missing:
        raise SystemExit(f"realsumm: no common reference for documents {missing}")
    for name, by_doc in systems.items():
        _write(out / "sys" / name, [by_doc[d] for d in docs])
    _write(out / "refs.tsv", [ref[d] for d in docs])
    _write(out / "ids.txt", [str(d) for d in docs])
    with (data / "litepyramid.tsv").open(encoding="utf-8") as f:
        judged = [
            (r["system"].replace("/", "_"), r["doc_id"], r["litepyramid_recall"])
            for r in csv.DictReader(f, delimiter="\t")
        ]
    _write(out / "litepyramid.csv", ["system,doc_id,litepyramid", *(",".join(j) for j in judged)])
    print(f"realsumm: {len(systems)} systems x {len(docs)} documents, {len(judged)} LitePyramid scores")


MOJIBAKE = (("Â£", "£"), ("Ł", "£"), ("Ã©", "é"), ("ã©", "é"))


def _e2e_line(text: str) -> str:
    for bad, good in MOJIBAKE:
        text = text.replace(bad, good)
    return text.strip()


def e2e(data: Path, out: Path) -> None:
    refs = _jsonl(data / "references_by_mr.jsonl")
    mrs = [str(r["mr"]) for r in refs]
    for path in sorted((data / "system_outputs_primary").glob("*.tsv")):
        with path.open(encoding="utf-8") as f:
            rows = [r for r in csv.reader(f, delimiter="\t") if r]
        body = rows[1:]
        if len(body) != len(mrs):
            raise SystemExit(f"{path}: {len(body)} outputs for {len(mrs)} MRs")
        _write(out / "sys" / path.stem, [_e2e_line(r[1]) for r in body])
    width = max(len(r["references"]) for r in refs)  # type: ignore[arg-type]
    _write(out / "refs.tsv", ["\t".join([*(str(x) for x in r["references"]), *[""] * (width - len(r["references"]))])  # type: ignore[attr-defined,arg-type]
                              for r in refs])  # fmt: skip
    _write(out / "ids.txt", [str(i + 1) for i in range(len(mrs))])
    for name, column in (("quality", "quality"), ("naturalness", "natur")):
        # the package's reader of E2E's layout (slots: sys1..5 / quality1..5), as `--judgments-layout slots
        # --system-column sys --score-columns quality --segment-column mr_id --judge-column _worker_id
        # --valid-scores 0,100 --repeated mean` reads it
        cells, counts = read_judgments_counted(
            str(data / f"human_ratings_{name}.csv"), layout="slots", system="sys", scores=[column],
            segment="mr_id", judge="_worker_id", valid=(0, 100), repeated="mean",
        )  # fmt: skip
        lines = [f"system,mr_id,worker,{name}"]
        lines += [f"{j.system},{j.segment},{j.judge},{j.score:g}" for j in cells]
        _write(out / f"{name}.csv", lines)
        print(f"e2e {name}: {counts.scores - counts.outside} ratings kept, {counts.outside} off the 0-100 scale left "
              f"out, {len(cells)} (system, MR, worker) cells, {counts.repeated} rated twice by the same worker (mean "
              "kept)")  # fmt: skip
    print(f"e2e: {len(list((out / 'sys').iterdir()))} systems x {len(mrs)} MRs, up to {width} references")


def wmt19(data: Path, out: Path) -> None:
    for lp_dir in sorted(p for p in data.iterdir() if p.is_dir()):
        lp = lp_dir.name
        outputs = sorted((lp_dir / "system-outputs").glob(f"newstest2019.*.{lp}"))
        for path in outputs:
            name = path.name[len("newstest2019.") : -len(f".{lp}")]
            (out / lp / "sys").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out / lp / "sys" / name)
        print(f"wmt19 {lp}: {len(outputs)} systems")


def d2t(data: Path, out: Path) -> None:
    for name in ("bagel", "sfhot", "sfres"):
        rows = _jsonl(data / f"{name}.jsonl")
        width = max(len(r["references"]) for r in rows)  # type: ignore[arg-type]
        refs = [[str(x) for x in r["references"]] for r in rows]  # type: ignore[attr-defined]
        _write(out / name / "sys" / "d2t", [str(r["output"]) for r in rows])
        _write(out / name / "refs.tsv", ["\t".join([*x, *[""] * (width - len(x))]) for x in refs])
        _write(out / name / "ids.txt", [str(r["id"]) for r in rows])
        header = "system,id,informativeness,naturalness,quality"
        lines = [f"d2t,{r['id']},{r['informativeness']},{r['naturalness']},{r['quality']}" for r in rows]
        _write(out / name / "ratings.csv", [header, *lines])
        print(f"d2t {name}: {len(rows)} rated outputs, 1 to {width} distinct references")


def mrpc(data: Path, out: Path) -> None:
    with (data / "msr_paraphrase_test.txt").open(encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    _write(out / "sys" / "mrpc", [r["#2 String"] for r in rows])
    _write(out / "source.txt", [r["#1 String"] for r in rows])
    _write(
        out / "labels.csv", ["system,pair,paraphrase", *(f"mrpc,{i + 1},{r['Quality']}" for i, r in enumerate(rows))]
    )
    print(f"mrpc: {len(rows)} test pairs, {sum(r['Quality'] == '1' for r in rows)} paraphrases")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", choices=("summeval", "realsumm", "e2e", "wmt19", "mrpc", "d2t"))
    parser.add_argument("data", type=Path, help="the data set's directory under ../shared/data")
    parser.add_argument("out", type=Path, help="output directory")
    args = parser.parse_args()
    run = {"summeval": summeval, "realsumm": realsumm, "e2e": e2e, "wmt19": wmt19, "mrpc": mrpc, "d2t": d2t}
    run[args.dataset](args.data, args.out)


if __name__ == "__main__":
    main()
