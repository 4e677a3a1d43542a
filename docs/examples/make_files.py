"""Write the input files that the documentation's examples name, made from the SummEval sample bundled with
ngrameval (20 documents x 16 systems, 11 references each, the experts' scores), so that every shell and Python
example of the docs runs as shown: ``python docs/examples/make_files.py DIR``, then run the examples in DIR.
``tests/test_docs.py`` does exactly that.

Files (one segment a line, documents in the sample's order):

* ``sys/M0`` ... ``sys/M23``: the 16 systems' summaries, named as the judgments name them;
  ``sys1.txt``, ``sys2.txt``, ``sys3.txt`` (= M0, M1, M2), ``base.txt`` (= M5), ``hyp.txt`` (= M0) and
  ``hyp.txt.gz`` (the same, gzip-compressed);
* ``ref.txt`` (= ``ref1.txt``, the first reference), ``ref2.txt`` (the second), ``refs.tsv`` (all 11, one field
  each), ``ids.txt`` (the document ids);
* ``summeval.jsonl``: the experts' scores (mean of 3, 1-5) per document and system, one JSON object a line with
  ``doc_id``, ``system``, ``coherence``, ``consistency``, ``fluency``, ``relevance`` (the layout of the full
  SummEval file that ``reproductions/prepare.py`` reads);
* ``para/``: a stand-in paraphrase set: ``src.txt`` (reference 1 of each document as the "source"),
  ``para1.txt`` and ``para2.txt`` (references 2 and 3 as two "systems"), ``refs.tsv`` (references 4-11);
* ``video_corpus.csv`` and ``msvd2sent.json``: stand-ins in the two MSVD layouts, each document a "clip" and
  each of its 11 references a "description" (CSV: language English, every row in the ``clean`` tier).

The stand-ins have the layout of the real data, not its meaning: numbers computed on them illustrate the commands.
"""

from __future__ import annotations

import csv
import gzip
import json
import sys
from pathlib import Path

from ngrameval.cli.demo import load_sample

CRITERIA = ("coherence", "consistency", "fluency", "relevance")


def _lines(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def make_files(out: Path) -> list[Path]:
    """Write the example files into ``out`` (created if needed); return the paths written."""
    from importlib import resources

    text = resources.files("ngrameval.data").joinpath("summeval_sample.jsonl").read_text("utf-8")
    docs = [json.loads(line) for line in text.splitlines()]
    systems, refs = load_sample()
    names = list(systems)
    ids = [str(doc["doc_id"]) for doc in docs]
    files: dict[str, list[str]] = {f"sys/{name}": systems[name] for name in names}
    files.update({"sys1.txt": systems["M0"], "sys2.txt": systems["M1"], "sys3.txt": systems["M2"]})
    files.update({"base.txt": systems["M5"], "hyp.txt": systems["M0"]})
    files.update({"ref.txt": [r[0] for r in refs], "ref1.txt": [r[0] for r in refs], "ref2.txt": [r[1] for r in refs]})
    files.update({"refs.tsv": ["\t".join(r) for r in refs], "ids.txt": ids})
    files["summeval.jsonl"] = [
        json.dumps({"doc_id": doc["doc_id"], "system": name, **{c: doc["systems"][name][c] for c in CRITERIA}})
        for doc in docs
        for name in names
    ]
    files.update({"para/src.txt": [r[0] for r in refs], "para/para1.txt": [r[1] for r in refs]})
    files.update({"para/para2.txt": [r[2] for r in refs], "para/refs.tsv": ["\t".join(r[3:]) for r in refs]})
    written = []
    for name, lines in files.items():
        _lines(out / name, lines)
        written.append(out / name)
    gz = out / "hyp.txt.gz"
    gz.write_bytes(gzip.compress("".join(f"{line}\n" for line in systems["M0"]).encode("utf-8"), mtime=0))
    with (out / "video_corpus.csv").open("w", encoding="utf-8", newline="") as handle:
        rows = csv.writer(handle)
        rows.writerow(["VideoID", "Start", "End", "WorkerID", "Source", "AnnotationTime", "Language", "Description"])
        for d, doc_refs in enumerate(refs):
            for k, ref in enumerate(doc_refs):
                rows.writerow([f"doc{d + 1:02d}", 0, 0, f"W{k + 1:02d}", "clean", 0, "English", ref])
    (out / "msvd2sent.json").write_text(json.dumps(dict(zip(ids, refs)), indent=0), encoding="utf-8")
    return [*written, gz, out / "video_corpus.csv", out / "msvd2sent.json"]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python docs/examples/make_files.py DIR")
    for path in make_files(Path(sys.argv[1])):
        print(path)
