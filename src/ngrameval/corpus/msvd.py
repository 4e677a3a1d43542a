"""The MSR Video Description Corpus: read (CSV or one JSON object of clip -> descriptions), filter by
language and tier, cluster by clip, split by cluster, build training pairs and leave-one-out test sets,
and export them as plain text files that ``ngrameval score`` and ``ngrameval paraphrase`` read."""

from __future__ import annotations

import csv
import json
import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ngrameval.errors import InputError
from ngrameval.io.write import write_atomic

CSV_COLUMNS = ("VideoID", "Start", "End", "WorkerID", "Source", "AnnotationTime", "Language", "Description")
Clusters = dict[str, list["Description"]]


@dataclass(frozen=True)
class Description:
    """One description of one clip; ``where`` is ``file:line`` for error messages."""

    clip: str
    text: str
    language: str | None
    tier: str | None  # the CSV's Source column: "clean" (verified, Tier-2) or "unverified"
    worker: str | None
    where: str


def _read_csv(path: Path) -> list[Description]:
    try:
        handle = path.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror}") from None
    with handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
            if header is None:
                raise InputError(f"{path}: empty file, expected a header with {', '.join(CSV_COLUMNS)}")
            missing = [c for c in CSV_COLUMNS if c not in header]
            if missing:
                raise InputError(f"{path}:1: header lacks column(s) {', '.join(missing)}; got {', '.join(header)}")
            col = {c: header.index(c) for c in CSV_COLUMNS}
            out = []
            for row in reader:
                line = reader.line_num
                if len(row) != len(header):
                    raise InputError(f"{path}:{line}: expected {len(header)} fields, got {len(row)}")
                start, end = row[col["Start"]], row[col["End"]]
                if not (start.isdigit() and end.isdigit()):
                    raise InputError(f"{path}:{line}: Start and End must be whole seconds, got {start!r}, {end!r}")
                clip = f"{row[col['VideoID']]}_{start}_{end}"
                out.append(
                    Description(
                        clip,
                        row[col["Description"]],
                        row[col["Language"]],
                        row[col["Source"]],
                        row[col["WorkerID"]],
                        f"{path}:{line}",
                    )
                )
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: not valid UTF-8 ({exc.reason})") from None
        except csv.Error as exc:
            raise InputError(f"{path}:{reader.line_num}: malformed CSV ({exc})") from None
    return out


def _read_json(path: Path) -> list[Description]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not a JSON object of clip -> descriptions ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object of clip -> list of descriptions")
    out = []
    for clip, texts in data.items():
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise InputError(f"{path}: clip {clip!r} must map to a list of strings")
        out += [Description(clip, t, None, None, None, f"{path}:{clip}[{i}]") for i, t in enumerate(texts)]
    return out


def read_corpus(path: str | Path) -> list[Description]:
    """Descriptions in file order from the MSVD CSV (``.csv``) or the clip -> descriptions JSON."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file")
    return _read_json(p) if p.suffix.lower() == ".json" else _read_csv(p)


def select(descs: Sequence[Description], language: str | None = None, tier: str | None = None) -> list[Description]:
    """Keep the descriptions in ``language`` and ``tier`` (None: any); case-insensitive."""
    if tier is not None and any(d.tier is None for d in descs):
        raise InputError("this corpus has no tier column (the JSON form); give tier=None")
    return [
        d
        for d in descs
        if (language is None or (d.language or "English").lower() == language.lower())
        and (tier is None or (d.tier or "").lower() == tier.lower())
    ]


def cluster(descs: Sequence[Description]) -> Clusters:
    """Clip -> its descriptions, clips and descriptions in file order."""
    out: Clusters = {}
    for d in descs:
        out.setdefault(d.clip, []).append(d)
    return out


@dataclass(frozen=True)
class ClusterStats:
    clusters: int
    descriptions: int
    per_cluster_min: int
    per_cluster_median: float
    per_cluster_mean: float
    per_cluster_max: int
    singletons: int
    tiers: tuple[tuple[str, int], ...]
    languages: tuple[tuple[str, int], ...]


def cluster_stats(clusters: Mapping[str, Sequence[Description]]) -> ClusterStats:
    """Descriptions per cluster and tier/language counts."""
    sizes = [len(v) for v in clusters.values()] or [0]
    flat = [d for v in clusters.values() for d in v]
    return ClusterStats(
        len(clusters),
        len(flat),
        min(sizes),
        float(statistics.median(sizes)),
        float(np.mean(sizes)),
        max(sizes),
        sum(s == 1 for s in sizes),
        tuple(Counter(d.tier or "n/a" for d in flat).most_common()),
        tuple(Counter(d.language or "n/a" for d in flat).most_common()),
    )


def split(
    clusters: Mapping[str, Sequence[Description]], test_fraction: float = 0.1, seed: int = 0
) -> tuple[list[str], list[str]]:
    """(train clips, test clips): a seeded random ``test_fraction`` of whole clusters goes to test."""
    if not 0 <= test_fraction <= 1:
        raise InputError(f"test fraction must be in [0, 1], got {test_fraction}")
    clips = list(clusters)
    n_test = round(len(clips) * test_fraction)
    test = set(np.random.default_rng(seed).permutation(len(clips))[:n_test].tolist())
    return [c for i, c in enumerate(clips) if i not in test], [c for i, c in enumerate(clips) if i in test]


def training_pairs(
    clusters: Mapping[str, Sequence[Description]], clips: Sequence[str], k: int | None, seed: int = 0
) -> list[tuple[str, str]]:
    """(source, target) pairs: each description paired with ``k`` other members of its cluster drawn
    at random (seeded), or with all of them when ``k`` is None (Chen & Dolan's 1, 5, 10, all)."""
    rng = np.random.default_rng(seed)
    pairs = []
    for clip in clips:
        texts = [d.text for d in clusters[clip]]
        for i, t in enumerate(texts):
            others = [j for j in range(len(texts)) if j != i]
            if k is not None and k < len(others):
                others = sorted(rng.choice(others, size=k, replace=False).tolist())
            pairs += [(t, texts[j]) for j in others]
    return pairs


def make_test_set(
    clusters: Mapping[str, Sequence[Description]], clips: Sequence[str], include_source: bool = False
) -> tuple[list[str], list[list[str]], list[str]]:
    """(sources, references, clip of each source): every description once as the source, the other
    members of its cluster (and itself with ``include_source``) as its references. A cluster of one
    has no references: it is an error, named, rather than a silently missing test item."""
    sources, refs, owner = [], [], []
    for clip in clips:
        texts = [d.text for d in clusters[clip]]
        if len(texts) < 2:
            raise InputError(f"clip {clip} has a single description ({clusters[clip][0].where}): no references")
        for i, t in enumerate(texts):
            sources.append(t)
            refs.append([*texts[:i], *texts[i + 1 :], *([t] if include_source else [])])
            owner.append(clip)
    return sources, refs, owner


def _check_one_line(descs: Sequence[Description]) -> None:
    for d in descs:
        if "\n" in d.text or "\r" in d.text or "\t" in d.text:
            raise InputError(f"{d.where}: description holds a tab or line break; it cannot be exported one a line")


def export_names(pairs: Sequence[int | None]) -> list[str]:
    """The file names :func:`export` writes for these pairings, in order."""
    tags = ["all" if k is None else str(k) for k in pairs]
    return [f"train.{t}.{e}" for t in tags for e in ("src", "tgt")] + ["test.src", "test.refs.tsv", "test.clips"]


def export(
    clusters: Mapping[str, Sequence[Description]],
    out_dir: str | Path,
    *,
    test_fraction: float = 0.1,
    seed: int = 0,
    pairs: Sequence[int | None] = (1, 5, 10, None),
    include_source: bool = False,
) -> tuple[list[Path], list[str]]:
    """Write the split: ``train.{k}.src/.tgt`` per pairing, ``test.src``, ``test.refs.tsv`` (references
    tab-separated, for ``--tsv``), ``test.clips``. Returns the paths written (each atomically) and the
    clips left out because they have one description (no partner, no reference), for the caller to report.
    Training files of other pairings left in ``out_dir`` by an earlier export are removed once every file is
    written (:func:`stale_exports`), so the folder holds one split."""
    _check_one_line([d for v in clusters.values() for d in v])
    singletons = [c for c, v in clusters.items() if len(v) < 2]
    clusters = {c: v for c, v in clusters.items() if len(v) >= 2}
    train, test = split(clusters, test_fraction, seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    contents: list[list[str]] = []
    for k in pairs:
        pr = training_pairs(clusters, train, k, seed)
        contents += [[a for a, _ in pr], [b for _, b in pr]]
    sources, refs, owner = make_test_set(clusters, test, include_source)
    contents += [sources, ["\t".join(r) for r in refs], owner]
    written = []
    for name, lines in zip(export_names(pairs), contents, strict=True):
        write_atomic(out / name, "".join(f"{ln}\n" for ln in lines))
        written.append(out / name)
    for stale in stale_exports(out, pairs):
        stale.unlink()
    return written, singletons


_TRAIN_FILE = re.compile(r"train\.(?:\d+|all)\.(?:src|tgt)")


def stale_exports(out_dir: str | Path, pairs: Sequence[int | None]) -> list[Path]:
    """The training files (``train.K.src``/``.tgt``, ``K`` a count or ``all``) in ``out_dir`` that an export of
    ``pairs`` does not write: left by an earlier export with other ``--pairs``, in name order."""
    keep = set(export_names(pairs))
    out = Path(out_dir)
    return sorted(p for p in out.iterdir() if _TRAIN_FILE.fullmatch(p.name) and p.name not in keep and p.is_file())
