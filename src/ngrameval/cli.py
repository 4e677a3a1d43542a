"""The command line: thin functions per subcommand; the only place that prints errors and exits."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import math
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ngrameval import progress
from ngrameval._version import __version__
from ngrameval.api import Scores, measure, scores_of
from ngrameval.corpus import Description, cluster, cluster_stats, export, human_baseline, read_corpus, select
from ngrameval.corpus.msvd import export_names
from ngrameval.errors import ConfigError, InputError, MissingDependencyError, UndefinedMetricWarning
from ngrameval.io import read_lines, read_refs, write_atomic
from ngrameval.io.judgments import LAYOUTS, REPEATED, Judgment
from ngrameval.io.read import STDIN, read_ids, read_ratings
from ngrameval.io.write import check_not_input, dumps_json
from ngrameval.metrics.registry import (
    ROUGE_PROFILES,
    ROUGE_STATS,
    MetricSpec,
    ignored_options,
    parse_specs,
    valid_names,
)
from ngrameval.metrics.rouge import MULTI
from ngrameval.ngrams.stats import MetricRows
from ngrameval.report.render import FORMATS, TABLE_FORMATS, render, score_only
from ngrameval.text.normalize import NORMS, normalize_texts
from ngrameval.text.pipeline import Preprocess
from ngrameval.text.sentences import SPLITTERS
from ngrameval.text.tokenize import TOKENIZERS

if TYPE_CHECKING:
    from ngrameval.meta.correlate import HumanScores
    from ngrameval.meta.resample import FloatArray
    from ngrameval.paraphrase import ParaphraseResult

# meta.agreement.KRIPPENDORFF_LEVELS, spelled out so that the parser does not import scipy (pinned by a test)
KRIPPENDORFF_CHOICES = ("auto", "none", "interval", "ratio", "ordinal", "nominal")


class _Parser(argparse.ArgumentParser):
    """argparse without prefix abbreviations (``-t`` is not ``-tok``) whose errors are one line with exit 2,
    like every other error of the command line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        command = self.prog.partition(" ")[2]  # "ngrameval corpus export" -> "corpus export"
        self.exit(2, f"ngrameval: error: {command + ': ' if command else ''}{message} (see {self.prog} --help)\n")

    def _get_option_tuples(self, option_string: str) -> list[Any]:
        # argparse matches single-dash prefixes even with allow_abbrev=False (-t -> -tok, -l -> -lc); keep only
        # a short option with its value attached (-w3, -o/tmp/x)
        return [t for t in super()._get_option_tuples(option_string) if t[1] == option_string[:2] and t[-1]]


class _Renamed(argparse.Action):
    """An option's old spelling: still works for one release, with a warning naming the new one."""

    def __init__(self, *args: Any, new: str, **kwargs: Any) -> None:
        self.new = new
        kwargs.setdefault("help", f"old spelling of {new} (deprecated)")
        super().__init__(*args, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, ns: argparse.Namespace, values: Any, opt: Any = None) -> None:
        warnings.warn(f"{opt} is deprecated and will be removed: use {self.new}", FutureWarning, stacklevel=2)
        setattr(ns, self.dest, values)


def _number(kind: type[int] | type[float], low: float, high: float, what: str) -> Callable[[str], Any]:
    """An argparse type: an int or a finite float in [low, high], else a one-line error saying so."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not (math.isfinite(value) and low <= value <= high):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


MAX_RESAMPLES = 10_000_000  # resamples/trials of one test: beyond this a run takes hours, not a better p-value
_count = _number(int, 1, MAX_RESAMPLES, f"a whole number from 1 to {MAX_RESAMPLES:,}")
_size = _number(int, 0, 2**31 - 1, "a whole number >= 0")
_width = _number(int, 0, 17, "a number of decimals from 0 to 17")
_level = _number(float, 1e-9, 1 - 1e-9, "a level strictly between 0 and 1 (e.g. 0.95)")
_unit = _number(float, 0.0, 1.0, "a number from 0 to 1")
_positive = _number(float, 1e-300, math.inf, "a finite number > 0")
_alpha_step = _number(float, 0.001, 1.0, "an alpha step from 0.001 to 1 (at most 1,001 columns)")
_cells = _number(int, 1, 2**62, "a number of cells from 1 to 2**62")
_jobs = _number(int, 1, 4096, "a number of threads from 1 to 4096")


def _wordiness(text: str) -> float:
    """AEv's W: a number > 0, or inf (no wordiness penalty)."""
    return math.inf if text.strip().lower() in ("inf", "infinity") else float(_positive(text))


PLOT_FORMATS = (".png", ".svg", ".pdf")


def _plot_path(text: str) -> str:
    """``--plot``: an image file name matplotlib can write, in a directory that exists."""
    p = Path(text)
    if p.suffix.lower() not in PLOT_FORMATS:
        raise argparse.ArgumentTypeError(f"expected an image file ending in {', '.join(PLOT_FORMATS)}, got {text!r}")
    if not p.parent.is_dir():
        raise argparse.ArgumentTypeError(f"{p.parent}: no such directory (for {text!r})")
    return text


def _order(text: str) -> int:
    from ngrameval.metrics.registry import MAX_ORDER

    return int(_number(int, 1, MAX_ORDER, f"an n-gram order from 1 to {MAX_ORDER}")(text))


def _floats(option: str, text: str) -> list[float]:
    """A comma-separated list of finite numbers (``--thresholds``), or a one-line error naming the option."""
    values = []
    for part in (t.strip() for t in text.split(",")):
        try:
            v = float(part)
        except ValueError:
            raise InputError(f"{option}: expected comma-separated numbers, got {part!r} in {text!r}") from None
        if not math.isfinite(v):
            raise InputError(f"{option}: expected finite numbers, got {part!r}")
        values.append(v)
    return values


def _coefficients(text: str) -> list[str]:
    """The coefficient names of ``--coefficients`` (at least one, each known)."""
    from ngrameval.meta.correlate import COEFFICIENTS

    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise ConfigError(f"--coefficients: give at least one of {', '.join(COEFFICIENTS)}")
    for c in names:
        if c not in COEFFICIENTS:
            raise ConfigError(f"--coefficients: unknown coefficient {c!r}; valid: {', '.join(COEFFICIENTS)}")
    return names


def _add_text_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-tok", "--tokenize", default="13a", help=f"tokenizer: {', '.join(TOKENIZERS)} (default 13a)")
    p.add_argument("-lc", "--lowercase", action="store_true", help="lower-case before tokenizing")
    p.add_argument(
        "--stem",
        action="store_true",
        help="Porter-stem every token (ROUGE profiles: their own stemmer, ROUGE-1.5.5 -m)",
    )
    p.add_argument("--stopwords", metavar="LIST", help="remove stop words: 'smart' or a file, one word a line")
    p.add_argument(
        "--normalize",
        choices=NORMS,
        help="Unicode normal form of every text before anything else reads it (every metric; default: none)",
    )


def _add_naming_options(p: argparse.ArgumentParser, names: bool = True) -> None:
    if names:
        p.add_argument("--names", nargs="+", metavar="NAME", help="a name for each system file (default: file names)")
    p.add_argument(
        "--strip-names", action="store_true", help="drop the prefix and suffix every system file name shares"
    )


def _add_scoring_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "systems",
        nargs="*",
        metavar="SYSTEM",
        help="system output files, one segment a line; '-' or none: standard input",
    )
    p.add_argument(
        "-r", "--refs", nargs="+", metavar="REF", help="reference files (one per reference stream; '-': stdin)"
    )
    p.add_argument(
        "--tsv", action="store_true", help="reference files are TSV: one segment a line, a reference a field"
    )
    p.add_argument(
        "--missing-empty-refs",
        action="store_true",
        help="an empty reference line/field is a missing reference (variable number per segment)",
    )
    p.add_argument("--source", help="source sentences, one a line (needed by pinc)")
    p.add_argument("-m", "--metrics", default="bleu", help=f"comma-separated metric specs ({valid_names()})")
    _add_max_cells(p)
    _add_jobs(p)
    g = p.add_argument_group("ROUGE (defaults of every rouge-* spec; a spec's own options win)")
    g.add_argument(
        "--rouge-profile",
        choices=ROUGE_PROFILES,
        default="rouge155",
        help="rouge155: ROUGE-1.5.5 exactly (ASCII words, 5-decimal rounding); rouge-score: Google's package; "
        "unicode: rouge155 with words of any script (default rouge155)",
    )
    g.add_argument(
        "--rouge-multi",
        choices=MULTI,
        help="several references: A pool (ROUGE-1.5.5 -f A), B best "
        "recall (-f B), jk jackknife, max-f best F (rouge-score); default A, max-f for rouge-score",
    )
    g.add_argument("--rouge-alpha", type=_unit, default=0.5, help="F weight as ROUGE-1.5.5 -p: 1 = P, 0 = R (0.5)")
    g.add_argument("--length-limit", type=_size, default=0, metavar="WORDS", help="ROUGE-1.5.5 -l (0: none)")
    g.add_argument("--byte-limit", type=_size, default=0, metavar="BYTES", help="ROUGE-1.5.5 -b (0: none)")
    g.add_argument(
        "--sentence-separator",
        metavar="SEP",
        help="split every line into sentences at SEP (e.g. '<n>'), for ROUGE-L/W; default: a line is one sentence",
    )
    g.add_argument(
        "--rouge-sentences",
        choices=SPLITTERS,
        default="lines",
        help="lines: a sentence is a line (default); pysbd: split every line into sentences with pysbd, as "
        "rouge-score's split_summaries does with NLTK (pip install 'ngrameval[sentences]')",
    )
    g.add_argument(
        "--rouge-stats",
        choices=ROUGE_STATS,
        default="f",
        help="f: the F score of each ROUGE spec (default); rpf: recall, precision and F (ROUGE-L-R, ROUGE-L-P, "
        "ROUGE-L)",
    )


def _add_jobs(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--jobs",
        type=_jobs,
        metavar="N",
        help="threads (1: serial); default: every core for scoring, 1 for resampling (numpy's BLAS already uses "
        "the cores there); the numbers never change",
    )


def _add_scheduler(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--scheduler",
        metavar="local[:N]|ADDRESS",
        help="run on Dask (pip install 'ngrameval[dask]'): a local cluster of N worker processes, or a scheduler's "
        "address; SYSTEM, -r REF and --source are then shard patterns (quoted globs or directories) aligned by name",
    )
    p.add_argument(
        "--blocksize",
        type=_bytes,
        default=64 << 20,
        metavar="SIZE",
        help="with --scheduler: a plain shard above SIZE bytes (suffix K, M, G) is cut into partitions of whole "
        "lines of about that size (default 64M; 0: one partition per shard)",
    )


def _add_chunk_size(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--chunk-size",
        type=_number(int, 1, 2**40, "a whole number >= 1"),
        metavar="N",
        help=f"stream the files N segments at a time {what}; default: streamed 50,000 at a time when the inputs "
        "exceed 256 MB, else read whole; the numbers never change; not with --scheduler (see --blocksize)",
    )


def _bytes(text: str) -> int:
    """``--blocksize``: a number of bytes with an optional K, M or G (powers of 1024)."""
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    digits = text[:-1] if scale > 1 else text
    if not digits.isdigit():
        raise argparse.ArgumentTypeError(f"expected a number of bytes such as 64M or 1048576, got {text!r}")
    return int(digits) * scale


def _add_max_cells(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-cells",
        type=_cells,
        metavar="N",
        help="bound on the alignment cells of one text pair (ROUGE-W, summary ROUGE-L, ROUGE-S/SU, SE); "
        "a longer pair stops with an error naming it (default 2**28)",
    )


def _add_output_options(p: argparse.ArgumentParser, formats: Sequence[str] = FORMATS, width: int = 2) -> None:
    p.add_argument("-f", "--format", choices=formats, default="text", help="output format (default text)")
    _add_width(p, width)
    p.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")


def _add_width(p: argparse.ArgumentParser, default: int) -> None:
    p.add_argument("-w", "--width", type=_width, help=f"decimals in text output (default {default})")
    p.set_defaults(width=None)


def _digits(args: argparse.Namespace, default: int) -> int:
    """``-w``: the decimals of text output; unset, the command's own default (scores 2, correlations 3, plane 1)."""
    return default if args.width is None else int(args.width)


def _emit(text: str, output: str | None) -> None:
    if output:
        write_atomic(output, text)
    else:
        sys.stdout.write(text)


def _specs(args: argparse.Namespace, text: str) -> list[MetricSpec]:
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


def _scoring_inputs(
    args: argparse.Namespace,
) -> tuple[list[MetricSpec], list[list[str]], dict[str, list[str]], list[str] | None]:
    """Metric specs, references, systems and (if given) the source of ``score`` and ``compare``."""
    specs = _specs(args, args.metrics)
    if not args.refs:
        raise InputError("give the references with -r/--refs (one file per reference, or TSV with --tsv)")
    refs = read_refs(args.refs, tsv=args.tsv, empty_is_missing=args.missing_empty_refs)
    systems = _read_systems(args.systems, len(refs), f"the references ({args.refs[0]}) have", args.names,
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


def _score_on_dask(args: argparse.Namespace) -> list[Any]:
    """``score --scheduler``: see :mod:`ngrameval.distributed.commands`."""
    from ngrameval.distributed import commands

    return commands.score(args, _specs(args, args.metrics), _namer(args))


def _with_intervals(results: Scores, ci: list[tuple[Any, Any]], n_metrics: int, tag: str) -> Scores:
    """``results`` (system-major, ``n_metrics`` a system) with their intervals; ``tag`` joins the signatures."""
    out = Scores()
    for k, s in enumerate(results):
        lo, hi = ci[k % n_metrics]
        sig = s.signature.replace("|version:", f"|{tag}|version:")
        out.append(
            dataclasses.replace(s, interval=(float(lo[k // n_metrics]), float(hi[k // n_metrics])), signature=sig)
        )
    return out


def _one_machine_chunks(args: argparse.Namespace) -> None:
    """``--chunk-size`` streams on one machine: refused with ``--scheduler`` rather than silently ignored."""
    if args.scheduler and args.chunk_size is not None:
        raise InputError(
            "--chunk-size streams files on one machine; with --scheduler, --blocksize sizes the partitions"
        )


def cmd_score(args: argparse.Namespace) -> int:
    _one_machine_chunks(args)
    sentence = args.sentence and not args.scheduler  # on Dask, the workers write them (--shard-output)
    streamed = None
    if args.scheduler and not args.confidence:
        results = _score_on_dask(args)
    else:
        if args.scheduler:  # the bootstrap needs every segment's rows: gathered from the workers
            from ngrameval.distributed import commands

            specs = _specs(args, args.metrics)
            names, rows = commands.segment_rows(args, specs, _namer(args))
        elif (streamed := _score_streamed(args, sentence, keep_rows=args.confidence)) is not None:
            names, rows = streamed.names, streamed.kept or streamed.rows  # kept: every segment's rows
        else:
            specs, refs, systems, source = _scoring_inputs(args)
            names, rows = list(systems), measure(systems, refs, specs, source, args.jobs)
        results = scores_of(rows, names, sentence and streamed is None)
        if args.confidence:
            from ngrameval.meta.significance import intervals

            ci = intervals(rows, n_resamples=args.confidence_n, seed=args.seed, confidence=args.ci,
                           jobs=_resample_jobs(args))  # fmt: skip
            results = _with_intervals(results, ci, len(rows), f"bs:{args.confidence_n}|seed:{args.seed}")
    if streamed is not None and sentence:
        from ngrameval.streaming import write_output

        try:  # sentence scores from the spill files, never all in memory
            write_output(streamed, results, args.format, _digits(args, 2), args.output, sys.stdout)
        finally:
            streamed.close()
    elif args.score_only and not sentence:
        _emit(score_only(results, _digits(args, 2)), args.output)
    else:
        _emit(render(results, args.format, _digits(args, 2), sentence=sentence), args.output)
    return 0


def _score_streamed(args: argparse.Namespace, sentence: bool, keep_rows: bool) -> Any:
    """``score`` (and ``compare``'s rows) streamed in chunks (:mod:`ngrameval.streaming`, bounded memory) with
    ``--chunk-size`` or for large input files; None: read the inputs in memory."""
    from ngrameval import streaming

    if not args.refs:
        return None
    with warnings.catch_warnings():  # a look at the specs only: _specs warns once below
        warnings.simplefilter("ignore")
        probe = _specs(args, args.metrics)
    paths = list(args.systems or [STDIN])
    probe_files = streaming.Files({p: p for p in paths}, list(args.refs), args.source)
    size = streaming.auto_chunk(probe_files, probe, args.chunk_size)
    if size is None:
        return None
    specs = _specs(args, args.metrics)
    named = _file_names(_system_paths(args.systems))
    files = streaming.Files(
        dict(zip(_names(list(named), args.names, args.strip_names), named.values(), strict=True)),
        list(args.refs), args.source, args.tsv, args.missing_empty_refs, args.sentence_separator,
        "" if args.systems else _STDIN_HINT,
    )  # fmt: skip
    return streaming.score_files(files, specs, size, args.jobs, sentence, keep_rows=keep_rows)


def _seed(text: str) -> int | None:
    if text.lower() == "none":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0 or 'none', got {text!r}") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 2**63-1 or 'none', got {text!r}")
    return value


def _resample_jobs(args: argparse.Namespace) -> int | None:
    """Threads for resampling: ``--jobs`` when given, else 1 — the weighted sums are matrix products that numpy's
    BLAS already spreads over the cores (measured on 2 cores: 2 threads 0.84x of 1; benchmarks/bench_scale.py)."""
    return 1 if args.jobs is None else int(args.jobs)


def cmd_compare(args: argparse.Namespace) -> int:
    _one_machine_chunks(args)
    from ngrameval.meta.significance import paired_test
    from ngrameval.report.significance import render_comparison

    test = "bs" if args.paired_bs else "ar"
    options: dict[str, Any] = {
        "test": test,
        "n_resamples": args.paired_bs_n if test == "bs" else args.paired_ar_n,
        "n_confidence": args.confidence_n,
        "seed": args.seed,
        "correction": args.correction,
        "alpha": args.sig_level,
        "confidence": args.ci,
        "jobs": _resample_jobs(args),
    }
    if args.scheduler:
        from ngrameval.distributed import commands

        result = commands.compare(args, _specs(args, args.metrics), _namer(args), args.baseline, **options)
    elif (streamed := _score_streamed(args, sentence=False, keep_rows=True)) is not None:
        rows, names = streamed.kept, streamed.names
        result = paired_test(rows, names, baseline=names[0] if args.baseline else None, **options)
    else:
        specs, refs, systems, source = _scoring_inputs(args)
        baseline = next(iter(systems)) if args.baseline else None
        rows = measure(systems, refs, specs, source, jobs=args.jobs)
        result = paired_test(rows, list(systems), baseline=baseline, **options)
    _emit(render_comparison(result, args.format, _digits(args, 2)), args.output)
    return 0


def _system_paths(paths: Sequence[str]) -> list[str]:
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


def _names(names: Sequence[str], given: Sequence[str] | None, strip: bool) -> list[str]:
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


def _namer(args: argparse.Namespace) -> Callable[[Sequence[str]], list[str]]:
    """The system names of SYSTEM arguments under the command's ``--names``/``--strip-names``."""
    return lambda paths: _names(paths, args.names, args.strip_names)


def _read_systems(
    paths: Sequence[str], n: int, against: str, names: Sequence[str] | None = None, strip: bool = False
) -> dict[str, list[str]]:
    systems: dict[str, list[str]] = {}
    for name, path in _file_names(_system_paths(paths)).items():
        lines = read_lines(path)
        if len(lines) != n:
            hint = "" if paths else _STDIN_HINT
            shown = "standard input" if path == STDIN else path
            raise InputError(f"{shown} has {len(lines)} lines but {against} {n}{hint}")
        systems[name] = lines
    return dict(zip(_names(list(systems), names, strip), systems.values(), strict=True))


_STDIN_HINT = " (no system file given, so it was read from standard input; -r takes every file after it)"


def _file_names(paths: Sequence[str]) -> dict[str, str]:
    """System name -> path: the file name (``stdin`` for ``-``), primed when two files share it."""
    out: dict[str, str] = {}
    for path in paths:
        name = "stdin" if path == STDIN else Path(path).name
        while name in out:
            name += "'"
        out[name] = path
    return out


def cmd_paraphrase(args: argparse.Namespace) -> int:
    from ngrameval.metrics.pinc import PINC
    from ngrameval.paraphrase import paraphrase

    pinc = PINC(args.pinc_order, not args.pinc_counts, args.pinc_average)
    if args.scheduler:
        from ngrameval.distributed import commands

        _emit_paraphrase(args, commands.paraphrase(args, _namer(args), pinc))
        return 0
    sources = read_lines(args.source)
    refs = read_refs(args.refs, tsv=args.tsv, empty_is_missing=args.missing_empty_refs)
    if len(refs) != len(sources):
        raise InputError(f"the references ({args.refs[0]}) have {len(refs)} lines but {args.source} has {len(sources)}")
    systems = _read_systems(args.systems, len(sources), f"the source ({args.source}) has", args.names,
                            args.strip_names)  # fmt: skip
    ratings = None
    if args.ratings:
        if len(args.ratings) != len(systems):
            raise InputError(f"give one ratings file per system: {len(systems)} systems, {len(args.ratings)} files")
        ratings = {name: read_ratings(path, len(sources)) for name, path in zip(systems, args.ratings)}
    result = paraphrase(
        systems, sources, refs, ratings=ratings, tokenize=args.tokenize, lowercase=args.lowercase, pinc=pinc
    )
    _emit_paraphrase(args, result)
    return 0


def _emit_paraphrase(args: argparse.Namespace, result: ParaphraseResult) -> None:
    text = render(list(result.scores), args.format, _digits(args, 2), sentence=args.sentence)
    if result.logistic is not None and args.format == "text" and not args.sentence:
        lg = result.logistic
        text += (
            f"logistic fitted to {lg.n} rated sentences: slope {lg.slope:.4g}, midpoint {lg.midpoint:.4g}"
            f" (sentence BLEU 0-1), Pearson r {lg.pearson:.4f}\n"
        )
    _emit(text, args.output)


def _read_judgments(args: argparse.Namespace, dataset: str | None = None) -> list[Judgment]:
    """The judgments of ``-j`` read with the judgment options (only the rows of ``dataset`` with --set-column)."""
    from ngrameval.io.judgments import read_judgments

    where = dict(_key_value(w) for w in args.where or [])
    if dataset is not None:
        where[args.set_column] = dataset

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
        valid=_low_high("--valid-scores", args.valid_scores) if args.valid_scores else None,
        repeated=args.repeated,
    )


def _low_high(option: str, text: str) -> tuple[float, float]:
    """``LOW,HIGH`` (``--scale``, ``--valid-scores``): two finite numbers, or a one-line error naming the option."""
    values = _floats(option, text)
    if len(values) != 2:
        raise InputError(f"{option}: expected LOW,HIGH (e.g. 1,5), got {text!r}")
    return values[0], values[1]


def _judged(args: argparse.Namespace, systems: dict[str, list[str]]) -> tuple[dict[str, list[str]], list[HumanScores]]:
    """The systems (named by --names or --strip-names when read), and the human scores of every criterion read
    with the judgment options."""
    from ngrameval.meta.correlate import aggregate

    judgments = _read_judgments(args)
    n = len(next(iter(systems.values())))
    segments = None
    if args.segment_column or any(j.segment is not None for j in judgments):  # summeval: always per document
        segments = read_ids(args.segment_ids) if args.segment_ids else [str(i) for i in range(1, n + 1)]
        if len(segments) != n:
            raise InputError(f"{args.segment_ids} has {len(segments)} ids but the outputs have {n} lines")
    scale = _low_high("--scale", args.scale) if args.scale else None
    criteria = list(dict.fromkeys(j.criterion for j in judgments))
    return systems, [aggregate(judgments, c, list(systems), segments, scale) for c in criteria]


def _key_value(text: str) -> tuple[str, str]:
    key, eq, value = text.partition("=")
    if not eq:
        raise InputError(f"--where: expected COLUMN=VALUE, got {text!r}")
    return key, value


def _read_external(args: argparse.Namespace, dataset: str | None = None) -> list[Any]:
    """The metrics of every --scores file (the rows of ``dataset`` with --set-column); a file's segment column is
    --segment-column when it has that column (else it holds system-level scores)."""
    from ngrameval.io.scores import columns, read_scores

    where = {args.set_column: dataset} if dataset is not None else None
    return [m for path in args.scores or [] for m in read_scores(
        path, system=args.system_column, metric=args.scores_metric_column, where=where,
        segment=args.segment_column if args.segment_column in columns(path)[1] else None)]  # fmt: skip


def _correlate_inputs(
    args: argparse.Namespace, dataset: str | None = None
) -> tuple[list[MetricRows], list[HumanScores], dict[str, list[str]], list[list[str]], list[str] | None]:
    """Metric rows (ngrameval's from system files and references, and those of --scores), human scores,
    systems, references and source; with --scores and no system file nor reference, the external metrics only."""
    from ngrameval.io.scores import systems_and_segments, to_rows
    from ngrameval.meta.correlate import aggregate

    external = _read_external(args, dataset)
    if external and not args.systems and not args.refs:
        if args.given:
            raise ConfigError("--given scores the system files: give them with -r/--refs")
        judgments = _read_judgments(args, dataset)
        names, segs = systems_and_segments(external)
        by_segment = any(j.segment is not None for j in judgments)
        if by_segment and segs is None:
            raise InputError(f"{args.judgments}: segment-level judgments, but {args.scores[0]} has system-level scores")
        scale = _low_high("--scale", args.scale) if args.scale else None
        criteria = list(dict.fromkeys(j.criterion for j in judgments))
        humans = [aggregate(judgments, c, names, segs if by_segment else None, scale) for c in criteria]
        return to_rows(external, names, segs, _judged_cells(humans)), humans, {}, [], None
    specs, refs, systems, source = _scoring_inputs(args)
    systems, humans = _judged(args, systems)
    rows = measure(systems, refs, specs, source, jobs=args.jobs)
    if external:
        ids = humans[0].segments or tuple(str(i) for i in range(1, len(refs) + 1))
        rows = [*rows, *to_rows(external, list(systems), ids, _judged_cells(humans))]
        clash = sorted({r.metric for r in rows if sum(q.metric == r.metric for q in rows) > 1})
        if clash:
            raise InputError(f"--scores: metric name(s) {', '.join(map(repr, clash))} also computed by ngrameval")
    return rows, humans, systems, refs, source


def _epsilon_notes(results: Sequence[Any]) -> list[str]:
    """acc-eq: the calibrated tie threshold of every metric."""
    return [f"{c.criterion}: {c.metric}'s acc-eq ties metric differences <= epsilon {c.epsilon:.6g}" for c in results
            if c.epsilon is not None]  # fmt: skip


def _judged_cells(humans: list[HumanScores]) -> Any:
    """The (system, segment) cells judged for some criterion (those an external metric must score), or None."""
    import numpy as np

    cells = [~np.isnan(h.segment) for h in humans if h.segment is not None]
    return np.logical_or.reduce(cells) if cells else None


def cmd_correlate(args: argparse.Namespace) -> int:
    from ngrameval.meta.correlate import correlate
    from ngrameval.report.correlate import render_correlations

    if args.set_column:
        return _correlate_sets(args)
    rows, humans, systems, refs, source = _correlate_inputs(args)
    coefs = _coefficients(args.coefficients)
    results = [
        c
        for h in humans
        for c in correlate(
            rows, h, level=args.level, grouping=args.grouping, coefficients=coefs,
            n_resamples=args.confidence_n, seed=args.seed, confidence=args.ci,
        )
    ]  # fmt: skip
    notes = [f"{h.criterion}: {h.judgments} judgments, {h.missing} cells without one" for h in humans]
    notes += _epsilon_notes(results)
    extras = _correlate_extras(args, rows, humans, systems, refs, source)
    if not extras:
        _emit(render_correlations(results, args.format, notes, _digits(args, 3)), args.output)
    elif args.format == "csv":
        raise ConfigError("--matrix/--compare-metrics/--given make several tables: use -f text or -f json")
    elif args.format == "json":
        corr = json.loads(render_correlations(results, "json"))
        _emit(dumps_json({"correlations": corr, **{k: list(v) for k, v in extras.items()}}), args.output)
    else:
        from ngrameval.meta.mtme_report import clusters_text
        from ngrameval.report import meta as rm

        w = _digits(args, 3)
        text = render_correlations(results, "text", notes, w)
        text += "".join(rm.matrix_text(m, f"{args.level} level", w) for m in extras.get("matrix", []))
        text += "".join(rm.differences_text([d for d in extras.get("differences", []) if d.criterion == h.criterion],
                        w) for h in humans)  # fmt: skip
        text += clusters_text(extras.get("clusters", []), w)
        text += "".join(rm.conditional_text([c for c in extras.get("conditional", []) if c.criterion == h.criterion],
                        w) for h in humans)  # fmt: skip
        _emit(text, args.output)
    return 0


def _correlate_extras(
    args: argparse.Namespace,
    rows: list[MetricRows],
    humans: list[HumanScores],
    systems: dict[str, list[str]],
    refs: list[list[str]],
    source: list[str] | None,
    dataset: str = "",
) -> dict[str, list[Any]]:
    """Belz & Reiter's matrix, Williams'/permutation tests between metrics and their significance clusters,
    Chen & Dolan's conditional correlations — each only when asked for."""
    from ngrameval.meta.agreement import correlation_matrix
    from ngrameval.meta.correlate import sentence_matrix
    from ngrameval.meta.metric_difference import compare_correlations
    from ngrameval.meta.subsets import conditional_correlation

    coef = _coefficients(args.coefficients)[0]
    out: dict[str, list[Any]] = {}
    if args.matrix:
        series: dict[str, FloatArray] = {}
        for r in rows:
            series[r.metric] = r.corpus() if args.level == "system" else sentence_matrix(r).ravel()
        for h in humans:
            human = h.system if args.level == "system" else h.segment
            if human is None:
                raise InputError(f"{h.criterion}: segment-level matrix needs segment-level judgments")
            series[h.criterion] = human.ravel()
        out["matrix"] = [correlation_matrix(series, coef)]
    if args.compare_metrics:
        from ngrameval.meta.mtme_sets import clusters, compare_tie_calibrated

        if coef == "acc-eq":  # mt-metrics-eval's pairs permutation test, grouped as asked
            out["differences"] = [
                d
                for h in humans
                for d in compare_tie_calibrated(
                    rows, h, level=args.level, grouping=args.grouping, n_resamples=args.confidence_n, seed=args.seed
                )
            ]
        else:
            if args.level == "segment" and args.grouping != "none":
                raise ConfigError(
                    "--compare-metrics at segment level compares correlations over all points: --grouping none"
                    " (or --coefficients acc-eq)"
                )
            opts = {"level": args.level, "coefficient_name": coef, "n_resamples": args.confidence_n, "seed": args.seed}
            out["differences"] = [d for h in humans for d in compare_correlations(rows, h, **opts)]
        out["clusters"] = list(clusters(out["differences"], args.sig_level, dataset))
    if args.given:
        given = _specs(args, args.given)
        if len(given) != 1:
            raise ConfigError(f"--given takes one metric spec, got {args.given!r}")
        (cond,) = measure(systems, refs, given, source)
        thresholds = _floats("--thresholds", args.thresholds)
        out["conditional"] = [c for h in humans for c in conditional_correlation(rows, cond, h, thresholds,
                                                                                 coefficient_name=coef)]  # fmt: skip
    return out


def _correlate_sets(args: argparse.Namespace) -> int:
    """``correlate --set-column``: every data set (language pair) of the judgments on its own, then
    mt-metrics-eval's summary over the sets (average value and rank; pooled system-level accuracy)."""
    from ngrameval.io.scores import column_values
    from ngrameval.meta.correlate import correlate
    from ngrameval.meta.mtme import pooled_accuracy
    from ngrameval.meta.mtme_report import clusters_text, summary_text
    from ngrameval.meta.mtme_sets import Cluster, pooled_clusters, summarize
    from ngrameval.report.correlate import render_correlations

    if args.systems or args.refs or not args.scores:
        raise ConfigError("--set-column correlates --scores files (with that column) only: give no system file")
    coefs = _coefficients(args.coefficients)
    results: list[Any] = []
    extras: dict[str, list[Any]] = {}
    text, w = "", _digits(args, 3)
    pooled_x: dict[tuple[str, str], list[Any]] = {}
    pooled_y: dict[str, list[Any]] = {}
    sets = column_values(args.judgments, args.set_column)
    for ds in sets:
        rows, humans, *_ = _correlate_inputs(args, ds)
        found = [c for h in humans for c in correlate(
            rows, h, level=args.level, grouping=args.grouping, coefficients=coefs, n_resamples=args.confidence_n,
            seed=args.seed, confidence=args.ci, dataset=ds)]  # fmt: skip
        results += found
        more = _correlate_extras(args, rows, humans, {}, [], None, ds)
        for k, v in more.items():
            extras.setdefault(k, []).extend({"dataset": ds, **dataclasses.asdict(d)} if k == "differences" else d
                                            for d in v)  # fmt: skip
        for h in humans:
            pooled_y.setdefault(h.criterion, []).append(h.system)
            for r in rows:
                pooled_x.setdefault((h.criterion, r.metric), []).append(r.corpus())
        notes = [f"{h.criterion}: {h.judgments} judgments, {h.missing} cells without one" for h in humans]
        notes += _epsilon_notes(found)
        text += f"== {args.set_column} {ds} ==\n" + render_correlations(found, "text", notes, w)
        text += clusters_text(more.get("clusters", []), w)
    pooled: list[Cluster] = []
    if args.level == "system" and "accuracy" in coefs:
        for crit, ys in pooled_y.items():
            per = {m: xs for (c, m), xs in pooled_x.items() if c == crit and len(xs) == len(ys)}
            if args.compare_metrics and len(per) > 1:
                pooled += pooled_clusters(per, ys, args.seed, crit, n_resamples=args.confidence_n, alpha=args.sig_level)
            else:
                level = args.sig_level
                pooled += [Cluster("(pooled)", crit, "system", "accuracy", m, pooled_accuracy(xs, ys), 0, level)
                           for m, xs in per.items()]  # fmt: skip
    summary = summarize(results, extras.get("clusters", []), pooled)
    if args.format == "csv":
        if extras:
            raise ConfigError("--matrix/--compare-metrics make several tables: use -f text or -f json")
        _emit(render_correlations(results, "csv"), args.output)
    elif args.format == "json":
        corr = json.loads(render_correlations(results, "json"))
        _emit(dumps_json({"correlations": corr, **extras, "pooled": pooled, "summary": list(summary)}), args.output)
    else:
        _emit(text + f"== all {len(sets)} sets ==\n" + summary_text(summary, w) + clusters_text(pooled, w), args.output)
    return 0


def cmd_agreement(args: argparse.Namespace) -> int:
    from ngrameval.meta.agreement import agreement, judge_table
    from ngrameval.report.meta import agreement_text, to_csv, to_json

    if not args.judge_column and args.judgments_layout != "summeval":  # that layout names its judges itself
        raise InputError("agreement needs --judge-column (the column naming who gave each score)")
    judgments = _read_judgments(args)
    level: str | None = args.krippendorff
    if level == "auto":
        try:
            import krippendorff  # noqa: F401
        except ImportError:
            level = None
        else:
            level = "interval"
    elif level == "none":
        level = None
    criteria = list(dict.fromkeys(j.criterion for j in judgments))
    results = [agreement(judge_table(judgments, c), krippendorff_level=level, min_overlap=args.min_overlap,
                         leave_one_out=args.leave_one_out) for c in criteria]  # fmt: skip
    if args.format == "json":
        text = to_json(results)
    elif args.format == "csv":
        text = to_csv(results)
    else:
        text = agreement_text(results, _digits(args, 3))
        if level is None and args.krippendorff == "auto":
            text += "Krippendorff's alpha: pip install 'ngrameval[agreement]' to compute it\n"
    _emit(text, args.output)
    return 0


CURVE_COLUMNS = ("metric", "criterion", "level", "coefficient", "with_source", "k", "subsets", "mean", "std", "low",
                 "high", "seed")  # fmt: skip


def cmd_refcurve(args: argparse.Namespace) -> int:
    from ngrameval.meta.subsets import reference_curve
    from ngrameval.report.meta import curves_text, to_json

    specs, refs, systems, source = _scoring_inputs(args)
    systems, humans = _judged(args, systems)
    curves = [c for h in humans for coef in _coefficients(args.coefficients) for c in reference_curve(
        systems, refs, h, specs, level=args.level, coefficient_name=coef, n_subsets=args.subsets,
        seed=args.seed, source=source, jobs=args.jobs)]  # fmt: skip
    if args.format == "json":
        text = to_json(curves)
    elif args.format == "csv":
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(CURVE_COLUMNS)
        w.writerows(
            [c.metric, c.criterion, c.level, c.coefficient, c.with_source, p.k, p.subsets, repr(p.mean),
             repr(p.std), repr(p.low), repr(p.high), c.seed]
            for c in curves
            for p in c.points
        )  # fmt: skip
        text = out.getvalue()
    else:
        text = "".join(curves_text([c for c in curves if c.criterion == h.criterion], _digits(args, 3)) for h in humans)
    _emit(text, args.output)
    return 0


def cmd_plane(args: argparse.Namespace) -> int:
    from ngrameval.meta.plane import alpha_grid
    from ngrameval.meta.plane import planes as all_planes
    from ngrameval.report.plane import plane_csv, plane_text, plot_plane

    if not args.refs:
        raise InputError("give the references with -r/--refs (one file per reference, or TSV with --tsv)")
    refs = read_refs(args.refs, tsv=args.tsv, empty_is_missing=args.missing_empty_refs)
    against = f"the references ({args.refs[0]}) have"
    systems, humans = _judged(args, _read_systems(args.systems, len(refs), against, args.names, args.strip_names))
    pre = Preprocess(args.tokenize, args.lowercase, args.stopwords, args.stem, args.normalize)
    if args.normalize:  # the character plane reads raw characters: normalise the texts themselves
        systems = {name: list(normalize_texts(hyps, args.normalize)) for name, hyps in systems.items()}
        refs = [list(normalize_texts(r, args.normalize)) for r in refs]
    alphas = alpha_grid(args.alpha_step)
    cells = [(h, coef) for h in humans for coef in _coefficients(args.coefficients)]
    plots = [args.plot if len(cells) == 1 else _suffixed(args.plot, h.criterion + ("" if len(cells) == len(humans)
             else f".{coef}")) for h, coef in cells] if args.plot else []  # fmt: skip
    for path in plots:
        check_not_input(path, _input_paths(args), "--plot")
    planes = all_planes(systems, refs, cells, pre=pre, alphas=alphas, orders=range(1, args.max_order + 1),
                        brevity=args.brevity, wordiness=args.wordiness, unit=args.unit, jobs=args.jobs)  # fmt: skip
    beside = _plane_external(args, cells, planes, systems, len(refs))
    if args.format == "json":
        text = dumps_json([{**dataclasses.asdict(p), "values": p.values, **({"external": e} if args.scores else {})}
                           for p, e in zip(planes, beside)])  # fmt: skip
    elif args.format == "csv":  # one header, then every plane's cells
        if args.scores:
            raise ConfigError("plane --scores adds a table beside each plane: use -f text or -f json")
        text = "".join(plane_csv(p) if k == 0 else plane_csv(p).split("\n", 1)[1] for k, p in enumerate(planes))
    else:
        text = "\n".join(plane_text(p, _digits(args, 1)) + "".join(
            f"  beside the best cell (AEv alpha={p.best_alpha:g}, N={p.best_order}: {p.best_value:.4f}): {e['metric']}"
            f" {e['value']:.4f} ({e['signature']})\n" for e in ex) for p, ex in zip(planes, beside))  # fmt: skip
    _emit(text, args.output)
    for p, path in zip(planes, plots):
        plot_plane(p, path)
        sys.stderr.write(f"ngrameval: wrote {path}\n")
    return 0


def _plane_external(
    args: argparse.Namespace, cells: list[Any], planes: list[Any], systems: dict[str, list[str]], n_lines: int
) -> list[list[dict[str, Any]]]:
    """Per plane, the coefficient of every --scores metric against the same criterion and systems."""
    if not args.scores:
        return [[] for _ in planes]
    import numpy as np

    from ngrameval.io.scores import to_rows
    from ngrameval.meta.correlate import coefficient

    ids = cells[0][0].segments or tuple(str(i) for i in range(1, n_lines + 1))
    rows = to_rows(_read_external(args), list(systems), ids)
    out = []
    for h, coef in cells:
        keep = ~np.isnan(h.system)
        out.append([{"metric": r.metric, "signature": r.signature, "value": coefficient(r.corpus()[keep],
                     h.system[keep], coef)[0]} for r in rows])  # fmt: skip
    return out


def _suffixed(path: str, name: str) -> str:
    p = Path(path)
    return str(p.with_name(f"{p.stem}.{name}{p.suffix}"))


def _corpus(args: argparse.Namespace) -> dict[str, list[Description]]:
    descs = select([d for path in args.corpus for d in read_corpus(path)], args.language, args.tier)
    if not descs:
        raise InputError(f"{', '.join(args.corpus)}: no description left after --language/--tier filtering")
    return cluster(descs)


def cmd_corpus_stats(args: argparse.Namespace) -> int:
    st = cluster_stats(_corpus(args))
    if args.format == "json":
        _emit(dumps_json(st), args.output)
        return 0
    lines = [
        f"clusters            {st.clusters}",
        f"descriptions        {st.descriptions}",
        f"per cluster         min {st.per_cluster_min}, median {st.per_cluster_median:g}, "
        f"mean {st.per_cluster_mean:.2f}, max {st.per_cluster_max}",
        f"clusters of one     {st.singletons}",
        "tiers               " + ", ".join(f"{k} {v}" for k, v in st.tiers),
        "languages           " + ", ".join(f"{k} {v}" for k, v in st.languages),
    ]
    _emit("\n".join(lines) + "\n", args.output)
    return 0


def _pairs(text: str) -> list[int | None]:
    """``--pairs``: comma-separated partner counts >= 1, or ``all``."""
    out: list[int | None] = []
    for k in (t.strip() for t in text.split(",")):
        if k == "all":
            out.append(None)
        elif k.isdigit() and int(k) >= 1:
            out.append(int(k))
        else:
            raise InputError(f"--pairs: expected comma-separated counts >= 1 or 'all', got {k!r} in {text!r}")
    return out


def cmd_corpus_export(args: argparse.Namespace) -> int:
    pairs = _pairs(args.pairs)
    for name in export_names(pairs):
        check_not_input(Path(args.out) / name, _input_paths(args), "--out")
    written, singletons = export(
        _corpus(args),
        args.out,
        test_fraction=args.test_fraction,
        seed=args.seed,
        pairs=pairs,
        include_source=args.include_source,
    )
    sys.stdout.write("".join(f"wrote {p}\n" for p in written))
    if singletons:
        sys.stdout.write(f"left out {len(singletons)} clip(s) with a single description: {', '.join(singletons)}\n")
    return 0


def cmd_corpus_baseline(args: argparse.Namespace) -> int:
    res = human_baseline(_corpus(args), Preprocess(args.tokenize, args.lowercase), jobs=args.jobs)
    text = (
        f"human baseline: {res.descriptions} descriptions of {res.clusters} clips"
        f" ({res.singletons_left_out} clips of one description left out)\n"
        f"BLEU {res.bleu * 100:.{_digits(args, 1)}f}  PINC {res.pinc * 100:.{_digits(args, 1)}f}"
        f"  (Chen & Dolan 2011: BLEU 52.9, PINC 77.2)\n  {res.signature}\n"
    )
    if args.format == "json":
        text = dumps_json(res)
    _emit(text, args.output)
    return 0


def cmd_metrics(args: argparse.Namespace) -> int:
    from ngrameval.metrics.registry import TEXT_OPTIONS, describe
    from ngrameval.report.table import table

    rows = describe()
    if args.format == "json":
        sys.stdout.write(
            dumps_json([dict(zip(("metric", "option", "default", "valid"), r, strict=True)) for r in rows])
        )
        return 0
    lines = [f"Metric specs: NAME[:OPTION=VALUE,...] ({valid_names()}); 'rouge' stands for every rouge-* name.", ""]
    lines += table(["metric", "option", "default", "valid values"], [list(r) for r in rows], left=4)
    lines += ["", "Text options of every spec but chrf/chrf++/ter (default: -tok, -lc, --stem, --stopwords):"]
    lines += [f"  {key}: {valid}" for key, valid in TEXT_OPTIONS.items()]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _demo_report(path: str, width: int) -> None:
    """``demo --report``: the HTML report of the bundled sample (its metrics, the relevance judgments)."""
    from ngrameval.demo import PLANE_CRITERION, REPORT_METRICS, load_sample, sample_human
    from ngrameval.report.html import render_html
    from ngrameval.report.html_data import build_report

    systems, refs = load_sample()
    humans = [sample_human(PLANE_CRITERION)]
    title, command = "ngrameval demo: the SummEval sample", f"ngrameval demo --report {path}"
    data = build_report(systems, refs, parse_specs(REPORT_METRICS), humans=humans, title=title, command=command)
    write_atomic(path, render_html(data, width))
    sys.stderr.write(f"ngrameval: wrote {path}\n")


def cmd_demo(args: argparse.Namespace) -> int:
    from ngrameval.demo import run_demo
    from ngrameval.report.plane import plane_text
    from ngrameval.report.significance import render_comparison

    results, ranking, best = run_demo()
    if args.report:
        _demo_report(args.report, _digits(args, 2))
    if args.format != "text":
        _emit(render(results, args.format, _digits(args, 2)), args.output)
        return 0
    header = (
        "ngrameval demo: 16 summarisation systems x 20 SummEval documents (11 references each),\n"
        "scored with BLEU, NIST, the AEv(alpha, N) members Soricut & Brill (2004) found best and ROUGE (as\n"
        "ROUGE-1.5.5 computes it, F; plain mean over documents),\n"
        "then ranked by BLEU with significance tests between every pair of systems,\n"
        "and the (alpha, N) plane searched for the member that best explains the experts' relevance scores.\n\n"
    )
    w = _digits(args, 2)
    text = render(results, args.format, w) + "\n" + render_comparison(ranking, "text", w, pairs=False)
    text += "\n" + plane_text(best)
    _emit(header + text, args.output)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from ngrameval.report.html import render_html
    from ngrameval.report.html_data import ReportOptions, build_report, command_line

    specs, refs, systems, source = _scoring_inputs(args)
    humans: list[HumanScores] = []
    if args.judgments:
        systems, humans = _judged(args, systems)
    test = "bs" if args.paired_bs else "ar"
    opts = ReportOptions(
        test=test, n_resamples=args.paired_bs_n if test == "bs" else args.paired_ar_n, n_confidence=args.confidence_n,
        seed=args.seed, correction=args.correction, alpha=args.sig_level, confidence=args.ci,
        coefficients=tuple(_coefficients(args.coefficients)), n_corr_resamples=args.correlation_confidence_n,
        examples=args.examples, max_pairs=args.max_pairs,
    )  # fmt: skip
    data = build_report(systems, refs, specs, source=source, humans=humans, options=opts, title=args.title,
                        command=command_line("ngrameval report", vars(args)), jobs=args.jobs)  # fmt: skip
    _emit(render_html(data, _digits(args, 2)), args.output)
    if args.output:
        sys.stderr.write(f"ngrameval: wrote {args.output}\n")
    return 0


def _add_judgment_options(q: argparse.ArgumentParser, systems: bool = True, required: bool = True) -> None:
    q.add_argument("-j", "--judgments", required=required, help="human judgments: .csv, .tsv or .jsonl")
    q.add_argument("--system-column", default="system", help="column naming the system (default system)")
    q.add_argument(
        "--score-columns",
        help="score column(s), several = one criterion each (default score); systems layout: the system columns "
        "(default every other column); slots: the score prefix(es); summeval: the criteria (default all four)",
    )
    q.add_argument("--segment-column", help="column naming the segment (absent: system-level judgments)")
    q.add_argument("--judge-column", help="column naming the judge")
    q.add_argument("--criterion-column", help="column naming the criterion (long layout)")
    q.add_argument("--where", nargs="+", metavar="COL=VALUE", help="keep only judgment rows with these values")
    q.add_argument(
        "--judgments-layout",
        choices=LAYOUTS,
        default="auto",
        help="long (--criterion-column), wide (a column per criterion), systems (a column per system), slots "
        "(E2E: --system-column sys --score-columns quality reads sys1..K/quality1..K), summeval (SummEval's "
        "model_annotations JSONL); auto (default): long with --criterion-column, summeval/slots where nothing else "
        "fits, else wide",
    )
    q.add_argument(
        "--annotators",
        choices=("expert", "turker", "all"),
        default="expert",
        help="summeval layout: whose annotations (default expert)",
    )
    q.add_argument(
        "--valid-scores",
        metavar="LOW,HIGH",
        help="leave out scores outside LOW..HIGH, counted in a warning (e.g. 0,100: E2E's slider box took any number)",
    )
    q.add_argument(
        "--repeated",
        choices=REPEATED,
        default="error",
        help="the same (system, segment, judge, criterion) twice: an error (default) or one judgment, their mean",
    )
    if systems:
        q.add_argument("--segment-ids", help="file: the segment id of each output line (default 1, 2, ...)")
        q.add_argument("--scale", metavar="LOW,HIGH", help="map scores to 0-1 from this scale (e.g. 1,5)")
        _add_naming_options(q)  # the names the judgments use


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ngrameval", description="N-gram co-occurrence metrics, exact and fast, with meta-evaluation."
    )
    parser.add_argument("--version", action="version", version=f"ngrameval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("score", help="score system outputs against references")
    _add_scoring_options(p)
    p.add_argument("--sentence", action="store_true", help="per-segment scores")
    _add_naming_options(p)
    p.add_argument("-b", "--score-only", action="store_true", help="print the score(s) only, one a line (sacreBLEU -b)")
    p.add_argument(
        "--confidence", action="store_true", help="a bootstrap interval for each score (sacreBLEU --confidence)"
    )
    p.add_argument("--confidence-n", type=_count, default=1000, metavar="N", help="bootstrap resamples (1000)")
    p.add_argument("--ci", type=_level, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--seed", type=_seed, default=12345, help="random seed of the resamples (default 12345)")
    _add_chunk_size(p, "in bounded memory (NIST: two passes, its counts on disk)")
    _add_scheduler(p)
    p.add_argument(
        "--shard-output",
        metavar="DIR",
        help="with --scheduler --sentence: each shard's sentence scores go to DIR/<reference shard's name>.<format>",
    )
    _add_text_options(p)
    _add_output_options(p, TABLE_FORMATS)
    p.set_defaults(func=cmd_score)

    cp = sub.add_parser("compare", help="significance tests between systems (all pairs) and a ranking")
    _add_scoring_options(cp)
    _add_naming_options(cp)
    test = cp.add_mutually_exclusive_group()
    test.add_argument("--paired-ar", action="store_true", help="paired approximate randomisation (the default)")
    test.add_argument("--paired-bs", action="store_true", help="paired bootstrap resampling (Koehn 2004)")
    cp.add_argument("--paired-ar-n", type=_count, default=10_000, metavar="N", help="AR trials (default 10000)")
    cp.add_argument("--paired-bs-n", type=_count, default=1_000, metavar="N", help="bootstrap resamples (default 1000)")
    cp.add_argument(
        "--confidence-n", type=_count, default=1_000, metavar="N", help="bootstrap resamples for intervals under AR"
    )
    cp.add_argument("--ci", type=_level, default=0.95, help="confidence level of the intervals (default 0.95)")
    cp.add_argument("--seed", type=_seed, default=12345, help="random seed (default 12345; 'none': drawn, printed)")
    cp.add_argument(
        "--correction", choices=("holm", "bonferroni", "none"), default="holm", help="multiple comparisons (holm)"
    )
    cp.add_argument("--sig-level", type=_level, default=0.05, help="significance level after correction (default 0.05)")
    cp.add_argument("--alpha", type=_level, dest="sig_level", action=_Renamed, new="--sig-level")
    cp.add_argument(
        "--baseline", action="store_true", help="compare each system with the first one only (sacreBLEU's layout)"
    )
    _add_chunk_size(cp, "keeping every segment's summable statistics, not its text")
    _add_scheduler(cp)
    _add_text_options(cp)
    _add_output_options(cp)
    cp.set_defaults(func=cmd_compare)

    pp = sub.add_parser("paraphrase", help="BLEU, PINC, SE and their combinations for paraphrase systems")
    pp.add_argument("systems", nargs="+", metavar="SYSTEM", help="paraphrase files, one per source line")
    pp.add_argument("--source", required=True, help="the source sentences, one a line")
    _add_naming_options(pp)
    pp.add_argument("-r", "--refs", nargs="+", required=True, metavar="REF", help="reference files (or TSV)")
    pp.add_argument("--tsv", action="store_true", help="reference files are TSV (one segment a line)")
    pp.add_argument("--missing-empty-refs", action="store_true", help="an empty reference is a missing one")
    pp.add_argument("--ratings", nargs="+", metavar="FILE", help="human ratings, one file per system, a number a line")
    pp.add_argument("--pinc-order", type=_order, default=4, help="PINC's N (default 4)")
    pp.add_argument("--pinc-counts", action="store_true", help="PINC on n-gram multisets instead of sets")
    pp.add_argument(
        "--pinc-average",
        choices=("present", "all"),
        default="present",
        help="average PINC over the orders the candidate has (default) or over all N",
    )
    pp.add_argument("--sentence", action="store_true", help="per-segment scores")
    pp.add_argument("-tok", "--tokenize", default="13a", help=f"tokenizer: {', '.join(TOKENIZERS)} (default 13a)")
    pp.add_argument("-lc", "--lowercase", action="store_true", help="lower-case before tokenizing")
    _add_max_cells(pp)
    _add_scheduler(pp)
    _add_output_options(pp)
    pp.set_defaults(func=cmd_paraphrase)

    c = sub.add_parser("corpus", help="highly parallel corpora (MSVD): statistics, splits, human baseline")
    csub = c.add_subparsers(dest="corpus_command", required=True)
    for name, func, helptext in (
        ("stats", cmd_corpus_stats, "clusters, descriptions per clip, tiers and languages"),
        ("export", cmd_corpus_export, "seeded split, training pairs and a leave-one-out test set as text files"),
        ("baseline", cmd_corpus_baseline, "every description scored as a paraphrase of the others in its clip"),
    ):
        q = csub.add_parser(name, help=helptext)
        q.add_argument("corpus", nargs="+", help="MSVD CSV or JSON (clip -> descriptions) files, read in turn")
        q.add_argument("--language", help="keep this language only (e.g. English)")
        q.add_argument("--tier", help="keep this tier only (the CSV's Source column: clean or unverified)")
        q.set_defaults(func=func)
        if name == "export":
            q.add_argument("--out", required=True, help="output directory")
            q.add_argument("--test-fraction", type=_unit, default=0.1, help="share of clips in the test set")
            q.add_argument("--seed", type=_seed, default=0, help="seed of the split and the pair sampling")
            q.add_argument("--pairs", default="1,5,10,all", help="partners per sentence (default 1,5,10,all)")
            q.add_argument("--include-source", action="store_true", help="count the source among its references")
        else:
            q.add_argument("-f", "--format", choices=("text", "json"), default="text", help="output format")
            q.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")
            _add_width(q, 1)
        if name == "baseline":
            _add_jobs(q)
            q.add_argument("-tok", "--tokenize", default="13a", help="tokenizer (default 13a)")
            q.add_argument("-lc", "--lowercase", action="store_true", help="lower-case before tokenizing")

    for name, func, helptext in (
        ("correlate", cmd_correlate, "correlate metrics with human judgments (system or segment level)"),
        ("plane", cmd_plane, "R^2 of every AEv(alpha, N) against human judgments, in the paper's layout"),
        ("refcurve", cmd_refcurve, "correlation as 1, 2, ... all references are used (with/without the source)"),
    ):
        q = sub.add_parser(name, help=helptext)
        if name == "plane":
            q.add_argument("systems", nargs="+", metavar="SYSTEM", help="system output files, one segment a line")
            q.add_argument("-r", "--refs", nargs="+", metavar="REF", help="reference files (one per stream)")
            q.add_argument("--tsv", action="store_true", help="reference files are TSV (one segment a line)")
            q.add_argument("--missing-empty-refs", action="store_true", help="an empty reference is a missing one")
            q.add_argument(
                "--alpha-step", type=_alpha_step, default=0.1, help="grid step of alpha in [0, 1] (default 0.1)"
            )
            q.add_argument("--max-order", type=_order, default=4, help="N = 1 .. this (default 4)")
            _add_jobs(q)
            q.add_argument(
                "--unit",
                choices=("word", "char"),
                default="word",
                help="n-grams of words (the -tok tokens; default) or characters (chrF's: whitespace removed)",
            )
            q.add_argument(
                "--coefficients", default="r2", help="r2 (default), pearson, spearman, kendall-b/c; a plane each"
            )
            q.add_argument("--coefficient", dest="coefficients", action=_Renamed, new="--coefficients")
            q.add_argument("-B", "--brevity", type=_positive, default=1.0, help="AEv brevity constant B (default 1)")
            q.add_argument(
                "-W",
                "--wordiness",
                type=_wordiness,
                default=2.0,
                help="AEv wordiness constant W > 0 or inf (default 2)",
            )
            q.add_argument(
                "--plot",
                metavar="IMAGE",
                type=_plot_path,
                help="draw the heat map here: .png, .svg or .pdf (needs ngrameval[plot])",
            )
        else:
            _add_scoring_options(q)
            q.add_argument("--level", choices=("system", "segment"), default="system", help="(default system)")
            q.add_argument("--seed", type=_seed, default=12345, help="random seed (default 12345)")
        if name == "correlate":
            q.add_argument(
                "--grouping",
                choices=("none", "item", "system"),
                default="none",
                help="segment level: all pairs (none), per segment across systems (item), per system",
            )
            q.add_argument(
                "--coefficients", default="pearson,r2,spearman,kendall-b",
                help="comma-separated: pearson, r2, spearman, kendall-b, kendall-c, accuracy (pairwise, Kocmi et al."
                " 2021), acc-eq (tie-calibrated pairwise accuracy, Deutsch et al. 2023)",
            )  # fmt: skip
            q.add_argument(
                "--confidence-n", type=_count, default=1000, metavar="N",
                help="bootstrap resamples of the intervals, and permutation trials of --compare-metrics (1000)",
            )  # fmt: skip
            q.add_argument("--n-resamples", type=_count, dest="confidence_n", metavar="N", action=_Renamed,
                           new="--confidence-n")  # fmt: skip
            q.add_argument("--ci", type=_level, default=0.95, help="confidence level (default 0.95)")
            q.add_argument("--matrix", action="store_true", help="the full matrix between metrics and criteria")
            q.add_argument(
                "--compare-metrics",
                action="store_true",
                help="Williams' test and a permutation test for every pair of metrics (first coefficient)",
            )
            q.add_argument(
                "--sig-level", type=_level, default=0.05,
                help="significance level of the clusters of --compare-metrics (mt-metrics-eval's ranks; 0.05)",
            )  # fmt: skip
            q.add_argument(
                "--set-column", metavar="COL",
                help="judgments and --scores files hold several data sets (e.g. lp): each on its own, then a summary",
            )  # fmt: skip
            q.add_argument("--given", metavar="SPEC", help="segment level: only where this metric exceeds --thresholds")
            q.add_argument("--thresholds", default="0,30,60,90", help="for --given, on the 0-100 scale (0,30,60,90)")
        if name == "refcurve":
            q.add_argument(
                "--coefficients", default="pearson", help="pearson (default), r2, spearman, kendall-b/c; a curve each"
            )
            q.add_argument("--coefficient", dest="coefficients", action=_Renamed, new="--coefficients")
            q.add_argument("--subsets", type=_count, default=10, help="reference subsets per count (default 10)")
        _add_judgment_options(q)
        if name != "refcurve":
            q.add_argument(
                "--scores", nargs="+", metavar="FILE",
                help="any metric's scores (.csv/.tsv/.jsonl: system[, segment] and a column per metric, or long with "
                "--scores-metric-column), correlated beside ngrameval's; with no system file, alone",
            )  # fmt: skip
            q.add_argument("--scores-metric-column", metavar="COL", help="--scores in long form: the metric column")
        _add_text_options(q)
        if name == "plane":
            q.add_argument("-f", "--format", choices=("text", "json", "csv"), default="text", help="output format")
            _add_width(q, 1)
            q.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")
        else:
            _add_output_options(q, width=3)
        q.set_defaults(func=func)

    ag = sub.add_parser("agreement", help="agreement between judges: pairwise r, single judge vs mean, Krippendorff")
    _add_judgment_options(ag, systems=False)
    ag.add_argument(
        "--krippendorff",
        choices=KRIPPENDORFF_CHOICES,
        default="auto",
        help="level of measurement of Krippendorff's alpha (auto: interval if ngrameval[agreement] is installed)",
    )
    ag.add_argument("--min-overlap", type=_count, default=3, help="items two judges must share to be correlated (3)")
    ag.add_argument(
        "--leave-one-out", action="store_true", help="single judge vs the other judges' mean (default: the mean of all)"
    )
    _add_output_options(ag, width=3)
    ag.set_defaults(func=cmd_agreement)

    from ngrameval.collect.cli import add_collect_parser  # argparse only; the web stack loads when collect runs

    add_collect_parser(sub)

    rp = sub.add_parser("report", help="one self-contained HTML page: scores, significance, correlations, analysis")
    _add_scoring_options(rp)
    rp.add_argument("--paired-bs", action="store_true", help="paired bootstrap instead of approximate randomisation")
    rp.add_argument("--paired-ar-n", type=_count, default=10_000, metavar="N", help="AR trials (default 10000)")
    rp.add_argument("--paired-bs-n", type=_count, default=1_000, metavar="N", help="bootstrap resamples (1000)")
    rp.add_argument(
        "--confidence-n", type=_count, default=1_000, metavar="N",
        help="bootstrap resamples of the scores' intervals (1000)",
    )  # fmt: skip
    rp.add_argument("--ci", type=_level, default=0.95, help="confidence level of the intervals (default 0.95)")
    rp.add_argument("--seed", type=_seed, default=12345, help="random seed of every resampling (default 12345)")
    rp.add_argument("--correction", choices=("holm", "bonferroni", "none"), default="holm", help="(default holm)")
    rp.add_argument("--sig-level", type=_level, default=0.05, help="significance level after correction (0.05)")
    rp.add_argument(
        "--coefficients",
        default="pearson,spearman",
        help="correlations (default pearson,spearman; kendall-b is slower)",
    )
    rp.add_argument(
        "--correlation-confidence-n", type=_count, default=1000, metavar="N",
        help="bootstrap resamples of the correlations' intervals (correlate --confidence-n; 1000)",
    )  # fmt: skip
    rp.add_argument("--n-resamples", type=_count, dest="correlation_confidence_n", metavar="N", action=_Renamed,
                    new="--correlation-confidence-n")  # fmt: skip
    rp.add_argument("--examples", type=_count, default=5, help="example segments per direction and pair (5)")
    rp.add_argument("--max-pairs", type=_count, default=3, help="analysed pairs: the first system vs the next N (3)")
    rp.add_argument("--title", default="ngrameval report", help="the page title")
    _add_judgment_options(rp, required=False)
    _add_text_options(rp)
    _add_width(rp, 2)
    rp.add_argument("-o", "--output", metavar="FILE", help="write the HTML here (atomically) instead of stdout")
    rp.set_defaults(func=cmd_report)

    ms = sub.add_parser("metrics", help="every metric spec with its options, defaults and valid values")
    ms.add_argument("-f", "--format", choices=("text", "json"), default="text", help="output format")
    ms.set_defaults(func=cmd_metrics)

    d = sub.add_parser("demo", help="score the bundled SummEval sample")
    d.add_argument("--report", metavar="HTML", help="also write the HTML report of the sample here")
    _add_output_options(d)
    d.set_defaults(func=cmd_demo)
    _add_quiet(parser)
    return parser


def _add_quiet(parser: argparse.ArgumentParser) -> None:
    """``-q/--quiet`` on every (sub)command: no warnings on stderr (errors still print)."""
    # SUPPRESS: a subcommand's default must not undo `ngrameval -q score ...`
    parser.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="no warnings or progress bars on stderr"
    )
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _add_quiet(sub)


def _fail(message: str, code: int = 2) -> int:
    print(f"ngrameval: error: {message}", file=sys.stderr)
    return code


_INPUTS = ("systems", "refs", "source", "judgments", "segment_ids", "ratings", "corpus", "stopwords")


def _input_paths(args: argparse.Namespace) -> list[str]:
    """Every file a command reads (its positional and option arguments), to refuse writing over one."""
    paths: list[str] = []
    for name in _INPUTS:
        value = getattr(args, name, None)
        if isinstance(value, str):
            paths.append(value)
        elif isinstance(value, list):
            paths += [v for v in value if isinstance(v, str)]
    return paths


def _run(args: argparse.Namespace) -> int:
    """The subcommand, with progress bars on standard error when it is a terminal and -q is not given."""
    on = not getattr(args, "quiet", False) and sys.stderr is not None and sys.stderr.isatty()
    with progress.shown(on):
        return int(args.func(args))


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Exit status: 0 done, 2 bad input or options (one line on stderr, nothing written),
    130 interrupted (Ctrl-C), 1 an internal error (a bug: one line, the traceback with NGRAMEVAL_TRACEBACK=1)."""
    try:
        warnings.formatwarning = lambda msg, cat, *a, **k: f"ngrameval: warning: {msg}\n"
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exc:  # --help, --version, or the one-line usage error already printed
            return int(exc.code or 0)
        warnings.simplefilter("default", UndefinedMetricWarning)
        if getattr(args, "quiet", False):
            warnings.simplefilter("ignore")
        if _input_paths(args).count(STDIN) > 1:
            raise InputError("standard input ('-') can be read once: give the other inputs as files")
        check_not_input(getattr(args, "output", None), _input_paths(args), "-o")
        if getattr(args, "max_cells", None) is None:
            return _run(args)
        from ngrameval.limits import set_max_cells

        previous = set_max_cells(args.max_cells)
        try:  # the bound is the process's: main() called from Python must not leave it changed
            return _run(args)
        finally:
            set_max_cells(previous)
    except (InputError, ConfigError, MissingDependencyError) as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        print("ngrameval: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (| head): say nothing, and keep Python from complaining at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except MemoryError:
        return _fail("out of memory: the input is too large for this machine (split it, or use fewer systems)")
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        return _fail(f"{where}{exc.strerror or exc}")
    except RecursionError as exc:
        return _fail(f"input too deeply nested ({exc})")
    except Exception as exc:
        if os.environ.get("NGRAMEVAL_TRACEBACK"):
            raise
        return _fail(f"internal error ({type(exc).__name__}: {exc}); please report it with the command line", 1)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
