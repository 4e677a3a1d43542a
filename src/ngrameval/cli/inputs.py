"""What the subcommands read and print alike: metric specs, systems and references, judgments, external
scores, output."""

from __future__ import annotations

import argparse
import glob
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ngrameval.cli.options import parse_floats
from ngrameval.errors import ConfigError, InputError
from ngrameval.io import read_lines, read_refs, write_atomic
from ngrameval.io.read import STDIN, read_ids
from ngrameval.metrics.registry import (
    MetricSpec,
    ignored_options,
    parse_specs,
)
from ngrameval.text.pipeline import Preprocess

if TYPE_CHECKING:
    from ngrameval.io.judgments import Judgment
    from ngrameval.meta.correlate import HumanScores


def decimals(args: argparse.Namespace, default: int) -> int:
    """``-w``: the decimals of text output; unset, the command's own default (scores 2, correlations 3, plane 1)."""
    return default if args.width is None else int(args.width)


def emit(text: str, output: str | None) -> None:
    """Write ``text`` to ``output`` (atomically), or to standard output when None."""
    if output:
        write_atomic(output, text)
    else:
        sys.stdout.write(text)


def metric_specs(args: argparse.Namespace, text: str) -> list[MetricSpec]:
    """The metric specs of ``text`` with the text and ROUGE options of the command line as defaults."""
    pre = Preprocess(args.tokenize, args.lowercase, args.stopwords, args.stem, args.normalize)
    rouge = {"profile": args.rouge_profile, "alpha": args.rouge_alpha}
    rouge.update(length_limit=args.length_limit, byte_limit=args.byte_limit)
    rouge.update(sentences=args.rouge_sentences, stats=args.rouge_stats)
    if args.rouge_multi:
        rouge["multi"] = args.rouge_multi
    specs = parse_specs(text, pre, rouge)
    for spec in specs:  # an option that does not apply is said, not silently ignored
        for option, reason in ignored_options(spec, pre):
            warnings.warn(f"{option} does not apply to {spec.metric.display_name()}: {reason}", UserWarning, 2)
    return specs


def scoring_inputs(
    args: argparse.Namespace, specs: list[MetricSpec] | None = None
) -> tuple[list[MetricSpec], list[list[str]], dict[str, list[str]], list[str] | None]:
    """Metric specs (``specs`` when the caller made them already), references, systems and (if given) the source of
    ``score`` and ``compare``."""
    specs = metric_specs(args, args.metrics) if specs is None else specs
    if not args.refs:
        raise InputError("give the references with -r/--refs (one file per reference, or TSV with --tsv)")
    refs = read_refs(args.refs, tsv=args.tsv, empty_is_missing=args.missing_empty_refs)
    systems = read_systems(args.systems, len(refs), f"the references ({args.refs[0]}) have", args.names,
                            args.strip_names)  # fmt: skip
    if args.sentence_separator:
        sep = args.sentence_separator
        refs = [[r.replace(sep, "\n") for r in rs] for rs in refs]
        systems = {name: [h.replace(sep, "\n") for h in hyps] for name, hyps in systems.items()}
    source = None
    if args.source:
        source = read_lines(args.source)
        if len(source) != len(refs):
            raise InputError(
                f"{args.source} has {len(source)} lines but the references ({args.refs[0]}) have {len(refs)}"
            )
    return specs, refs, systems, source


def resample_jobs(args: argparse.Namespace) -> int | None:
    """Threads for resampling: ``--jobs`` when given, else 1 — the weighted sums are matrix products that numpy's
    BLAS already spreads over the cores (measured on 2 cores: 2 threads 0.84x of 1; benchmarks/bench_scale.py)."""
    return 1 if args.jobs is None else int(args.jobs)


def system_paths(paths: Sequence[str]) -> list[str]:
    """The system files to read: none means standard input (unless it is a terminal), a file given twice is read
    once (as sacreBLEU does), with a warning."""
    if not paths:
        if sys.stdin is None or sys.stdin.isatty():
            raise InputError(
                "no system file given (and standard input is a terminal); note that -r/--refs takes every file "
                "after it: write 'SYSTEM... -r REF...', or end the references with --"
            )
        return [STDIN]
    out: list[str] = []
    seen: set[tuple[int, int] | str] = set()
    for path in paths:
        try:
            st = os.stat(path)
            key: tuple[int, int] | str = (st.st_dev, st.st_ino) if path != STDIN else STDIN
        except OSError:
            key = path  # missing: reading it reports the error
        if key in seen:
            warnings.warn(f"{path}: given twice; scored once", UserWarning, stacklevel=2)
            continue
        seen.add(key)
        out.append(path)
    return out


def _shared(words: Sequence[str]) -> int:
    """How many leading characters all ``words`` share."""
    return next((k for k, chars in enumerate(zip(*words)) if len(set(chars)) > 1), min(map(len, words)))


def system_names(names: Sequence[str], given: Sequence[str] | None, strip: bool) -> list[str]:
    """The systems' names: ``given`` (--names, one per file, distinct), or the file names without the prefix and
    suffix they all share when ``strip`` (--strip-names: newstest2019.X.de-en -> X)."""
    if given:
        if len(given) != len(names):
            raise InputError(f"--names gives {len(given)} names for {len(names)} system files")
        twice = next((g for k, g in enumerate(given) if g in given[:k]), None)
        if twice is not None:
            raise InputError(f"--names: {twice!r} given twice; every system needs its own name")
        return list(given)
    if not strip or len(names) < 2:
        return list(names)
    head, tail = _shared(names), _shared([x[::-1] for x in names])
    cut = [x[head : len(x) - tail] for x in names]
    return cut if all(cut) and len(set(cut)) == len(cut) else list(names)


def system_namer(args: argparse.Namespace) -> Callable[[Sequence[str]], list[str]]:
    """The system names of ``--scheduler``'s shard patterns as one machine names its files (:func:`file_names`: a
    file or a directory by its name; a glob, which has no one-machine equivalent, as typed), under the command's
    ``--names``/``--strip-names``."""
    return lambda paths: system_names(list(file_names(paths, patterns=True)), args.names, args.strip_names)


def read_systems(
    paths: Sequence[str], n: int, against: str, names: Sequence[str] | None = None, strip: bool = False
) -> dict[str, list[str]]:
    """System name -> lines of the files ``paths`` (none: standard input), each of ``n`` lines (else an error
    saying ``against`` has n), named by ``names`` or by their file names (stripped with ``strip``)."""
    systems: dict[str, list[str]] = {}
    for name, path in file_names(system_paths(paths)).items():
        lines = read_lines(path)
        if len(lines) != n:
            hint = "" if paths else STDIN_HINT
            shown = "standard input" if path == STDIN else path
            raise InputError(f"{shown} has {len(lines)} lines but {against} {n}{hint}")
        systems[name] = lines
    return dict(zip(system_names(list(systems), names, strip), systems.values(), strict=True))


STDIN_HINT = " (no system file given, so it was read from standard input; -r takes every file after it)"


def file_names(paths: Sequence[str], patterns: bool = False) -> dict[str, str]:
    """System name -> path: the file name (``stdin`` for ``-``), primed when two files share it; with ``patterns``
    a glob pattern keeps its whole text."""
    out: dict[str, str] = {}
    for path in paths:
        name = "stdin" if path == STDIN else path if patterns and glob.has_magic(path) else Path(path).name
        while name in out:
            name += "'"
        out[name] = path
    return out


def judgments_from(args: argparse.Namespace, dataset: str | None = None) -> list[Judgment]:
    """The judgments of ``-j`` read with the judgment options (only the rows of ``dataset`` with --set-column)."""
    from ngrameval.io.judgments import read_judgments

    where = dict(_key_value(w) for w in getattr(args, "where", None) or [])
    if dataset is not None:
        where[args.set_column] = dataset
    if getattr(args, "mqm_weights", None) is not None and args.judgments_layout != "mqm":
        raise ConfigError(
            f"--mqm-weights weighs MQM errors: it needs --judgments-layout mqm (got {args.judgments_layout})"
        )
    if args.judgments_layout in ("mqm", "esa"):
        return _span_judgments(args, where)
    if args.judgments_layout == "preferences":
        from ngrameval.cli.preferences import preference_judgments

        return preference_judgments(args, where)

    return read_judgments(
        args.judgments,
        system=args.system_column,
        scores=[c for c in args.score_columns.split(",") if c] if args.score_columns else None,
        segment=args.segment_column,
        judge=args.judge_column,
        criterion=args.criterion_column,
        where=where,
        layout=args.judgments_layout,
        annotators=args.annotators,
        valid=parse_low_high("--valid-scores", args.valid_scores) if args.valid_scores else None,
        repeated=args.repeated,
    )


def _span_judgments(args: argparse.Namespace, where: dict[str, str]) -> list[Judgment]:
    """--judgments-layout mqm/esa: every (segment, rater) score of a span file (segments named doc:doc_id)."""
    from ngrameval.io.spans import read_spans
    from ngrameval.meta.mqm import esa_segment_scores, mqm_segment_scores, to_judgments

    if where:
        raise ConfigError(f"--judgments-layout {args.judgments_layout}: --where and --set-column are not supported")
    spans = read_spans(args.judgments)
    if args.judgments_layout == "esa":
        return to_judgments(esa_segment_scores(spans), "esa")
    weights = mqm_weights(args.mqm_weights, spans, args.judgments)
    return to_judgments(mqm_segment_scores(spans, weights), "mqm")


def parse_mqm_weights(text: str) -> tuple[dict[str, float], set[str]]:
    """``--mqm-weights``: comma-separated ``SEVERITY[/CATEGORY[/SUB]]=WEIGHT`` and ``google`` (mt-metrics-eval's
    weights, :data:`ngrameval.meta.mqm.MQM_WEIGHTS`), later entries over earlier ones; (the weights, the keys
    given by name). A one-line :class:`ConfigError` naming the option for anything else."""
    from ngrameval.meta.mqm import MQM_WEIGHTS, weight

    out: dict[str, float] = {}
    named: set[str] = set()
    for item in text.split(","):
        if item.strip().lower() == "google":
            out.update(MQM_WEIGHTS)
            continue
        key, sep, value = item.rpartition("=")
        if not sep:
            raise ConfigError(f"--mqm-weights: expected SEVERITY[/CATEGORY]=WEIGHT or google, got {item.strip()!r}")
        name, number = weight(key, value, "--mqm-weights")
        if name in named:
            raise ConfigError(f"--mqm-weights: {key.strip()!r} is given twice")
        named.add(name)
        out[name] = number
    return out, named


def mqm_weights(text: str | None, spans: Sequence[Any], path: str) -> dict[str, float]:
    """The weights of ``--mqm-weights`` (None: mt-metrics-eval's) checked against the errors of ``spans`` (read
    from ``path``): a severity of the option that no error of the file has is an error (a misspelt name), and so
    is an error that no weight covers; without the option such an error weighs 0 as in mt-metrics-eval, with a
    warning that names it."""
    from ngrameval.meta.mqm import MQM_WEIGHTS, unweighted

    weights, named = (dict(MQM_WEIGHTS), set()) if text is None else parse_mqm_weights(text)
    present = {s.severity.strip().lower() for s in spans if s.is_error}
    unknown = sorted({k.split("/")[0] for k in named} - present)
    if unknown:
        raise ConfigError(
            f"--mqm-weights: severity {', '.join(map(repr, unknown))} does not occur in {path} "
            f"(its severities: {', '.join(sorted(present)) or 'none'})"
        )
    missing = unweighted(spans, weights)
    if missing:
        what = "; ".join(
            f"{sev!r} ({len(rows)} error{'s' if len(rows) > 1 else ''}, the first at {path}:{rows[0].line})"
            for sev, rows in missing.items()
        )
        if text is not None:
            raise ConfigError(f"--mqm-weights: no weight for {what}: give each severity one (e.g. Critical=10)")
        example = next(iter(missing))
        warnings.warn(
            f"no MQM weight for {what}: weighed 0 (as mt-metrics-eval does); give one with --mqm-weights "
            f"(e.g. --mqm-weights google,{example.capitalize()}=10)",
            UserWarning,
            stacklevel=2,
        )
    return weights


def parse_low_high(option: str, text: str) -> tuple[float, float]:
    """``LOW,HIGH`` (``--scale``, ``--valid-scores``): two finite numbers, or a one-line error naming the option."""
    values = parse_floats(option, text)
    if len(values) != 2:
        raise InputError(f"{option}: expected LOW,HIGH (e.g. 1,5), got {text!r}")
    return values[0], values[1]


def judged_systems(
    args: argparse.Namespace, systems: dict[str, list[str]]
) -> tuple[dict[str, list[str]], list[HumanScores]]:
    """The systems (named by --names or --strip-names when read), and the human scores of every criterion read
    with the judgment options."""
    return systems, judged(args, list(systems), len(next(iter(systems.values()))))


def judged(args: argparse.Namespace, names: list[str], n: int) -> list[HumanScores]:
    """The human scores of every criterion read with the judgment options, for the systems ``names`` of ``n``
    segments each."""
    from ngrameval.meta.correlate import aggregate

    judgments = judgments_from(args)
    segments = None
    if args.segment_column or any(j.segment is not None for j in judgments):  # summeval: always per document
        segments = read_ids(args.segment_ids) if args.segment_ids else [str(i) for i in range(1, n + 1)]
        if len(segments) != n:
            raise InputError(f"{args.segment_ids} has {len(segments)} ids but the outputs have {n} lines")
    scale = parse_low_high("--scale", args.scale) if args.scale else None
    criteria = list(dict.fromkeys(j.criterion for j in judgments))
    return [aggregate(judgments, c, names, segments, scale) for c in criteria]


def _key_value(text: str) -> tuple[str, str]:
    key, eq, value = text.partition("=")
    if not eq:
        raise InputError(f"--where: expected COLUMN=VALUE, got {text!r}")
    return key, value


def external_scores_from(args: argparse.Namespace, dataset: str | None = None) -> list[Any]:
    """The metrics of every --scores file (the rows of ``dataset`` with --set-column); a file's segment column is
    --segment-column when it has that column (else it holds system-level scores)."""
    from ngrameval.io.scores import columns, lower_is_better, read_scores

    where = dict(_key_value(w) for w in args.where or [])
    if dataset is not None:
        where[args.set_column] = dataset
    found = []
    for path in args.scores or []:
        cols = columns(path)[1]
        found += read_scores(path, system=args.system_column, metric=args.scores_metric_column,
                             where={k: v for k, v in where.items() if k in cols} or None,
                             segment=args.segment_column if args.segment_column in cols else None)  # fmt: skip
    lower = [n for v in args.lower_is_better for n in v.split(",") if n.strip()]
    return lower_is_better(found, [n.strip() for n in lower], "--lower-is-better")


_INPUTS = ("systems", "refs", "source", "judgments", "preferences", "segment_ids", "ratings", "corpus", "stopwords")


def input_paths(args: argparse.Namespace) -> list[str]:
    """Every file a command reads (its positional and option arguments), to refuse writing over one."""
    paths: list[str] = []
    for name in _INPUTS:
        value = getattr(args, name, None)
        if isinstance(value, str):
            paths.append(value)
        elif isinstance(value, list):
            paths += [v for v in value if isinstance(v, str)]
    return paths
