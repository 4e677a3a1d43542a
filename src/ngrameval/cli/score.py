"""``ngrameval score``: in memory, streamed in chunks, or on Dask."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import warnings
from typing import Any

from ngrameval.api import Scores, measure, measure_piece, scores_of
from ngrameval.api import named as named_rows
from ngrameval.cli.inputs import (
    STDIN_HINT,
    decimals,
    emit,
    file_names,
    metric_specs,
    resample_jobs,
    scoring_inputs,
    system_namer,
    system_names,
    system_paths,
)
from ngrameval.cli.options import (
    add_chunk_size,
    add_naming_options,
    add_output_options,
    add_scheduler,
    add_scoring_options,
    add_text_options,
    count_arg,
    level_arg,
    seed_arg,
)
from ngrameval.cli.stats import stored_rows
from ngrameval.errors import InputError
from ngrameval.io.read import STDIN, NotPlain, line_blocks, ref_rows
from ngrameval.jobs import awaited, resolve_jobs
from ngrameval.metrics.policy import summed_warnings
from ngrameval.metrics.registry import MetricSpec
from ngrameval.ngrams.stats import MetricRows, concatenated_rows
from ngrameval.report.render import TABLE_FORMATS, render, score_only


def _score_on_dask(args: argparse.Namespace) -> list[Any]:
    """``score --scheduler``: see :mod:`ngrameval.cli.scheduler`."""
    from ngrameval.cli import scheduler as commands

    return commands.score(args, metric_specs(args, args.metrics), system_namer(args))


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


def _confidence(args: argparse.Namespace, results: Scores, rows: list[Any]) -> Scores:
    """``--confidence``: ``results`` with the bootstrap interval of each score, resampled from ``rows``."""
    from ngrameval.meta.significance import intervals

    ci = intervals(rows, n_resamples=args.confidence_n, seed=args.seed, confidence=args.ci, jobs=resample_jobs(args))
    return _with_intervals(results, ci, len(rows), f"bs:{args.confidence_n}|seed:{args.seed}")


def check_one_machine_chunks(args: argparse.Namespace) -> None:
    """``--chunk-size`` and ``--ref-cache`` stream on one machine: refused with ``--scheduler`` rather than silently
    ignored."""
    if args.scheduler and args.chunk_size is not None:
        raise InputError(
            "--chunk-size streams files on one machine; with --scheduler, --blocksize sizes the partitions"
        )
    if args.scheduler and args.ref_cache:
        raise InputError("--ref-cache keeps the counts of files streamed on one machine: not with --scheduler")


def cmd_score(args: argparse.Namespace) -> int:
    check_one_machine_chunks(args)
    streamed = None
    kept = stored_rows(args)  # a stats file given where the system files go (on Dask: the shards' files)
    sentence = args.sentence and (kept is not None or not args.scheduler)  # Dask's workers write text shards' own
    if kept is not None:
        names, rows = kept
        results = scores_of(rows, names, sentence)
        if args.confidence:
            results = _confidence(args, results, rows)
    elif args.scheduler and not args.confidence:
        results = Scores(_score_on_dask(args))
    else:
        if args.scheduler:  # the bootstrap needs every segment's rows: gathered from the workers
            from ngrameval.cli import scheduler as commands

            specs = metric_specs(args, args.metrics)
            names, rows = commands.segment_rows(args, specs, system_namer(args))
        elif (streamed := score_streamed(args, sentence, keep_rows=args.confidence)) is not None:
            names, rows = streamed.names, streamed.kept or streamed.rows  # kept: every segment's rows
        else:
            specs = metric_specs(args, args.metrics)
            counted = read_and_count(args, specs)
            if counted is not None:
                names, rows = counted
            else:
                specs, refs, systems, source = scoring_inputs(args, specs)
                names, rows = list(systems), measure(systems, refs, specs, source, args.jobs)
        results = scores_of(rows, names, sentence and streamed is None)
        if args.confidence:
            results = _confidence(args, results, rows)
    if streamed is not None and sentence:
        from ngrameval.report.sentences import write_output

        try:  # sentence scores from the spill files, never all in memory
            write_output(streamed, results, args.format, decimals(args, 2), args.output, sys.stdout)
        finally:
            streamed.close()
    elif args.score_only and not sentence:
        emit(score_only(results, decimals(args, 2)), args.output)
    else:
        emit(render(results, args.format, decimals(args, 2), sentence=sentence), args.output)
    return 0


PIPELINE_CHUNK = 8_192  # segments a task of read_and_count counts (blocks of 1 MB hold ~10k lines of news text)


class _Serially(Exception):
    """read_and_count cannot give what the serial reading gives (an error to name in its order): read serially."""


def read_and_count(args: argparse.Namespace, specs: list[MetricSpec]) -> tuple[list[str], list[MetricRows]] | None:
    """``score``'s in-memory scoring of plain files, without the serial reading where it can: counted straight from
    the files' bytes (:func:`~ngrameval.scale.fromfile.count_files`, any ``--jobs``: BLEU and the BLEU family under
    13a/none, ROUGE-N/L), else with two jobs or more on threads with the reading overlapped: the reference and
    system files are read a block at a time, side by side (:func:`~ngrameval.io.read.line_blocks`), and every
    :data:`PIPELINE_CHUNK` aligned segments are counted on the pool while the next blocks are read, so only the
    reading that no chunk waits for stays serial. The rows are :func:`~ngrameval.api.measure`'s bit for bit (a
    segment's rows depend on its own text; chunks are concatenated in order, named and warned as its chunks are).
    None (nothing said, nothing kept): read and score as before — standard input, compressed or TSV files,
    ``--source``, ``--sentence-separator``, ``--missing-empty-refs``, a corpus-wide metric (NIST, CIDEr), a file
    given twice, and anything the serial reading names as an error (a bad byte, files of different lengths, an
    error of a chunk); one job and a metric the bytes kernel does not serve."""
    from ngrameval.scale.fromfile import count_files

    jobs = resolve_jobs(args.jobs)
    if not args.systems or not args.refs or args.tsv or args.source:
        return None
    if args.sentence_separator or args.missing_empty_refs or any(sp.metric.corpus_wide for sp in specs):
        return None
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        paths = system_paths(args.systems)
    if said:
        return None  # a file given twice: said once by the serial reading
    named = file_names(paths)
    try:
        names = system_names(list(named), args.names, args.strip_names)
        counted = count_files(list(args.refs), dict(zip(names, named.values(), strict=True)), specs, jobs)
        if counted is not None:
            return names, counted
        if jobs < 2:
            return None
        with summed_warnings():  # said once at the end, summed over the chunks, as measure() says them
            parts = _counted_side_by_side(list(args.refs), list(named.values()), names, specs, jobs)
    except (_Serially, NotPlain, InputError):
        return None
    rows = [dataclasses.replace(r, values=v) for r, v in zip(parts[0], concatenated_rows(parts), strict=True)]
    return names, named_rows(rows, specs, [len(args.refs)])


def _counted_side_by_side(
    refs: list[str], systems: list[str], names: list[str], specs: list[MetricSpec], jobs: int
) -> list[list[MetricRows]]:
    """The rows of every chunk of aligned lines of the files ``refs`` and ``systems``, counted on ``jobs`` threads
    while the files are read; :class:`_Serially` when the files differ in length or hold no line, or a chunk's
    counting names a segment (the serial path names it from the corpus's start)."""
    from concurrent.futures import Future, ThreadPoolExecutor

    readers = [line_blocks(p) for p in [*refs, *systems]]
    lines: list[list[str]] = [[] for _ in readers]
    done = [False] * len(readers)
    tasks: list[Future[list[MetricRows]]] = []
    start = 0
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="ngrameval")
    try:
        while not all(done):
            read = False
            for k, reader in enumerate(readers):
                if not done[k] and len(lines[k]) < PIPELINE_CHUNK:
                    block = next(reader, None)
                    done[k] = block is None
                    lines[k] += block or []
                    read = True
            n = min(map(len, lines))
            if n >= PIPELINE_CHUNK or (all(done) and n):
                refs_n = ref_rows(refs, [x[:n] for x in lines[: len(refs)]], False, False, start)
                chunk = {name: x[:n] for name, x in zip(names, lines[len(refs) :], strict=True)}
                tasks.append(pool.submit(measure_piece, chunk, refs_n, specs))  # warnings: caught by the caller
                for x in lines:
                    del x[:n]
                start += n
            elif not read:
                raise _Serially  # a file ended before the others
        if any(lines) or not tasks:
            raise _Serially  # files of different lengths, or no line at all
        return [awaited(t) for t in tasks]  # in order: a chunk's error is the first chunk's, as measure_chunked's
    except InputError:
        raise _Serially from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        for reader in readers:
            reader.close()


def score_streamed(args: argparse.Namespace, sentence: bool, keep_rows: bool, on_chunk: Any = None) -> Any:
    """``score`` (and ``compare``'s and ``stats``' rows) streamed in chunks (:mod:`ngrameval.scale.files`, bounded
    memory) with ``--chunk-size`` or for large input files; None: read the inputs in memory. ``on_chunk``: called
    with every chunk read."""
    from ngrameval.scale import files as streaming

    if not args.refs:
        return None
    with warnings.catch_warnings():  # a look at the specs only: metric_specs warns once below
        warnings.simplefilter("ignore")
        probe = metric_specs(args, args.metrics)
    paths = list(args.systems or [STDIN])
    probe_files = streaming.Files({p: p for p in paths}, list(args.refs), args.source)
    size = streaming.auto_chunk(probe_files, probe, args.chunk_size)
    if size is None and args.ref_cache:
        size = streaming.DEFAULT_CHUNK  # the cache holds the counts of a streamed first pass
    if size is None:
        return None
    specs = metric_specs(args, args.metrics)
    named = file_names(system_paths(args.systems))
    files = streaming.Files(
        dict(zip(system_names(list(named), args.names, args.strip_names), named.values(), strict=True)),
        list(args.refs), args.source, args.tsv, args.missing_empty_refs, args.sentence_separator,
        "" if args.systems else STDIN_HINT,
    )  # fmt: skip
    return streaming.score_files(
        files, specs, size, args.jobs, sentence, keep_rows=keep_rows, ref_cache=args.ref_cache, on_chunk=on_chunk
    )


def add_parser(sub: Any) -> None:
    p = sub.add_parser("score", help="score system outputs against references")
    add_scoring_options(p)
    p.add_argument("--sentence", action="store_true", help="per-segment scores")
    add_naming_options(p)
    p.add_argument("-b", "--score-only", action="store_true", help="print the score(s) only, one a line (sacreBLEU -b)")
    p.add_argument(
        "--confidence", action="store_true", help="a bootstrap interval for each score (sacreBLEU --confidence)"
    )
    p.add_argument("--confidence-n", type=count_arg, default=1000, metavar="N", help="bootstrap resamples (1000)")
    p.add_argument("--ci", type=level_arg, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--seed", type=seed_arg, default=12345, help="random seed of the resamples (default 12345)")
    add_chunk_size(p, "in bounded memory (NIST: two passes, its counts on disk)")
    add_scheduler(p)
    p.add_argument(
        "--shard-output",
        metavar="DIR",
        help="with --scheduler --sentence: each shard's sentence scores go to DIR/<reference shard's name>.<format>",
    )
    add_text_options(p)
    add_output_options(p, TABLE_FORMATS)
    p.set_defaults(func=cmd_score)
