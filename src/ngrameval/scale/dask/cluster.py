"""Corpora of any size on Dask (``dask.distributed``: a laptop, a cluster, Kubernetes, SLURM/PBS through
dask-jobqueue): each partition of segments is read and scored where it lives, only summable rows travel.

The graph: ``rows_p = partition_rows(p)`` on the worker that reads partition p (its text never leaves
it); ``acc_p = fold(acc_{p-1}, rows_p)`` adds the partition's rows to the running sum *in segment
order*, one row at a time as numpy's ``values.sum(axis=0)`` does on one machine, so float statistics
(ROUGE/PINC/SE sentence scores, multi-reference mean lengths) give the single-machine corpus score bit
for bit. A fold is a few microseconds per partition and runs where ``rows_p`` is; what moves between
workers is the accumulator, one row per metric and system (a tree of partial sums would reorder the
float additions). The per-segment rows are freed as soon as they are folded.

CIDEr and CIDEr-D take a first pass too (:mod:`ngrameval.scale.dask.sides`): each partition's reference document
frequencies are counted on its worker and added in a tree (integers: exact), and each partition is scored against
a reference side of its own made with the corpus's document frequencies: the single-machine CIDEr bit for bit.

NIST takes a first distributed pass (:mod:`ngrameval.scale.dask.nist`): each partition's reference n-grams are
counted on its worker and cut into G bucket groups by a hash of their first two tokens' strings; each group's
counts are added over the partitions in a tree (exact: integer sums) and weighted in a task of its own, and each
partition receives the weights of its own reference n-grams only, looked up group by group, then is scored as one
machine scores it (:func:`ngrameval.scale.chunks.chunk_rows`): the single-machine NIST bit for bit, and no process
holds every distinct reference n-gram of the corpus.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ngrameval.errors import ConfigError, InputError, MissingDependencyError
from ngrameval.ngrams.stats import MetricRows
from ngrameval.scale.chunks import Said, Summed, fold

if TYPE_CHECKING:
    from dask.delayed import Delayed
    from distributed import Client

    from ngrameval.api import Score
    from ngrameval.metrics.registry import MetricSpec
    from ngrameval.scale.dask.sides import Counts
    from ngrameval.scale.refcounts import WeightSource
    from ngrameval.text.pipeline import Preprocess


def _dask() -> Any:
    """The ``dask`` module (typed ``Any``: dask ships no complete type hints), or MissingDependencyError."""
    try:
        import dask
        import distributed  # noqa: F401
    except ImportError:
        raise MissingDependencyError("dask[distributed]", "dask") from None
    return dask


def _distributed() -> Any:
    _dask()
    import distributed

    return distributed


@dataclass(frozen=True)
class Partition:
    """The segments of one partition: ``systems`` name -> hypotheses, ``refs[i]`` the references of segment
    i, ``source`` (PINC only); ``name`` says where it came from in error messages."""

    name: str
    systems: Mapping[str, Sequence[str]]
    refs: Sequence[Sequence[str]]
    source: Sequence[str] | None = None


def check_specs(specs: Sequence[MetricSpec], nist: bool = False) -> None:
    """ConfigError for a metric the distributed path cannot give exactly: a corpus-wide metric whose statistics no
    pass counts across partitions (each partition's own would give another score; CIDEr's document frequencies are
    counted in a first pass, :mod:`ngrameval.scale.dask.sides`), and NIST (global information weights) unless the
    caller counts the references first (``nist``, as :func:`corpus_rows` does)."""
    for sp in specs:
        if sp.metric.corpus_wide and not sp.metric.needs_info and not sp.metric.keeps_references:
            raise ConfigError(
                f"{sp.metric.display_name()} cannot be counted on Dask partitions: its statistics depend on every "
                "reference of the corpus; score it on one machine (without --scheduler)"
            )
        if sp.metric.corpus_wide and sp.metric.needs_info and not nist:
            raise ConfigError(
                "NIST needs the reference n-gram counts of the whole corpus, which the distributed path does not "
                "count yet; score NIST on one machine (ngrameval score --jobs N)"
            )


def partition_rows(
    part: Partition,
    specs: Sequence[MetricSpec],
    max_cells: int | None = None,
    weights: Mapping[Preprocess, WeightSource] | None = None,
    whole: Counts | None = None,
) -> tuple[list[MetricRows], frozenset[int], Said]:
    """The summable rows of one partition (on a worker), the reference counts per segment seen and the
    warnings raised; ``max_cells`` is the client's bound (:mod:`ngrameval.limits`), set on the worker for this
    task; ``weights``: NIST's information weights of the partition's reference n-grams, from the whole corpus
    (:func:`ngrameval.scale.dask.nist.nist_rows`); ``whole``: the corpus's counts of the reference sides
    (CIDEr's document frequencies, :mod:`ngrameval.scale.dask.sides`)."""
    from ngrameval.api import measure
    from ngrameval.scale.chunks import Chunk, chunk_rows
    from ngrameval.scale.dask.sides import partition_sides

    with named_errors(part), bounded(max_cells), kept_warnings() as said:
        if weights or whole:
            chunk = Chunk(0, part.systems, part.refs, part.source)
            sides = partition_sides(part, specs, whole) if whole else None
            rows = chunk_rows(chunk, specs, dict(weights or {}), 1, sides=sides)
        else:
            rows = measure(dict(part.systems), part.refs, specs, part.source)
    return rows, frozenset(len(r) for r in part.refs), tuple(said)


@contextmanager
def kept_warnings() -> Iterator[list[tuple[type[Warning], str]]]:
    """The warnings ngrameval says inside (a task on a worker, whose own stderr goes to its log), in the list
    yielded, to travel with the task's result and be said on the client (:func:`say`). Kept in the task's own
    context (:func:`ngrameval.metrics.policy.keeping`), not by ``warnings.catch_warnings``: on a worker with several
    threads, tasks entering and leaving that process-wide hook in turn restored each other's, and warnings were lost
    or counted in another task. Other libraries' warnings stay in the worker's log."""
    from ngrameval.metrics.policy import counting_zeros, keeping

    with keeping() as said, counting_zeros():  # the client adds the partitions' counts up: it needs every total
        yield said


def say(said: Said) -> None:
    """The workers' warnings, each message once on the client, with the counts of its partitions added up
    (:func:`ngrameval.metrics.policy.say_summed`)."""
    from ngrameval.metrics.policy import say_summed

    say_summed(said, stacklevel=3)


@contextmanager
def bounded(max_cells: int | None) -> Iterator[None]:
    """The client's ``max_cells`` (:mod:`ngrameval.limits`) on this worker during one task (``None``: the
    worker's own), also while other tasks run on the worker's other threads (:func:`ngrameval.limits.held`)."""
    from ngrameval.limits import held

    with held(max_cells):
        yield


@contextmanager
def named_errors(part: Partition) -> Iterator[None]:
    """An input error of one partition's task names the partition (same class: a LimitError stays one)."""
    try:
        yield
    except InputError as exc:
        raise type(exc)(f"{part.name}: {exc}") from None


def corpus_rows(
    partitions: Sequence[Delayed],
    specs: Sequence[MetricSpec] | str,
    max_cells: int | None = None,
    nist_groups: int | None = None,
) -> Delayed:
    """Lazy: the corpus rows (one summed row per system, as :class:`MetricRows`) of delayed
    :class:`Partition` objects, e.g. from :func:`from_text_shards`, :func:`from_bag` or
    :func:`from_dataframe`. Compute it with ``dask.compute`` or :func:`score`; ``max_cells``: the bound of
    :mod:`ngrameval.limits` on the workers (default: theirs); ``nist_groups``: NIST's bucket groups G
    (default: :func:`ngrameval.scale.dask.nist.auto_groups`)."""
    from ngrameval.api import checked_specs

    specs = checked_specs(specs)
    graph: Delayed = _dask().delayed(named_sum, pure=True)(summed(partitions, specs, max_cells, nist_groups), specs)
    return graph


def summed(
    partitions: Sequence[Delayed],
    specs: Sequence[MetricSpec] | str,
    max_cells: int | None = None,
    nist_groups: int | None = None,
) -> Delayed:
    """Lazy: the :class:`Summed` rows and warnings of every partition (see :func:`corpus_rows`)."""
    from ngrameval.api import checked_specs
    from ngrameval.scale.dask import nist as nd_nist
    from ngrameval.scale.dask.sides import whole_graph

    dask = _dask()
    specs = checked_specs(specs)
    check_specs(specs, nist=True)
    if not partitions:
        raise InputError("no partition to score")
    groups = nd_nist.checked_groups(nist_groups, len(partitions))
    graph = None
    if any(sp.metric.corpus_wide and sp.metric.needs_info for sp in specs):
        graph = nd_nist.weights_graph(partitions, specs, groups)
    whole = whole_graph(partitions, specs)
    acc = None
    for k, p in enumerate(partitions):
        if graph is None:
            rows = dask.delayed(partition_rows, pure=True)(p, specs, max_cells, None, whole)
        else:
            rows = dask.delayed(nd_nist.nist_rows, pure=True)(p, specs, max_cells, graph.unigrams, graph.found[k],
                                                              whole)  # fmt: skip
        acc = dask.delayed(fold, pure=True)(acc, rows)
    return cast("Delayed", acc)


def named_sum(acc: Summed, specs: Sequence[MetricSpec]) -> list[MetricRows]:
    """Names and signatures as one machine gives them (``nrefs`` over every partition)."""
    from ngrameval.api import named

    return named(acc.rows, specs, sorted(acc.n_refs))


def score(
    partitions: Sequence[Delayed],
    specs: Sequence[MetricSpec] | str,
    client: Client | None = None,
    progress: bool = False,
    max_cells: int | None = None,
    nist_groups: int | None = None,
) -> list[Score]:
    """Corpus scores of every system under every metric, computed on ``client`` (default: the current
    Dask client or scheduler); equal to :func:`ngrameval.api.score` on the concatenated partitions
    (``nist_groups``: see :func:`corpus_rows`)."""
    from ngrameval.api import checked_specs, scores_of

    specs = checked_specs(specs)
    acc: Summed = compute(summed(partitions, specs, max_cells, nist_groups), client, progress)
    say(acc.said)
    return list(scores_of(named_sum(acc, specs), system_names(partitions)))


def compute(graph: Delayed, client: Client | None, progress: bool) -> Any:
    """The value of ``graph``, on ``client`` (with Dask's progress bar on stderr when ``progress``) or on the
    current Dask scheduler."""
    if client is None:
        return cast(Any, graph).compute()
    future = cast(Any, client).compute(graph)
    if progress:
        _distributed().progress(future)
    return future.result()


def system_names(partitions: Sequence[Delayed]) -> list[str]:
    names = getattr(partitions, "system_names", None)
    if names is None:
        raise ConfigError("partitions must come from from_text_shards, from_bag or from_dataframe")
    return list(names)


class Partitions(list):  # type: ignore[type-arg]
    """Delayed :class:`Partition` objects, in segment order, the system names they hold and a label each (the
    file name of a text partition's first reference shard, else ``partition-<i>``)."""

    def __init__(self, items: Sequence[Delayed], system_names: Sequence[str], labels: Sequence[str] = ()) -> None:
        super().__init__(items)
        self.system_names = tuple(system_names)
        self.labels = tuple(labels) or tuple(f"partition-{i}" for i in range(len(items)))


def expand(pattern: str) -> list[str]:
    """The files of a shard pattern in name order: a glob (``'out/*.txt.gz'``), a directory (every file in
    it) or one file."""
    if os.path.isdir(pattern):
        paths = sorted(os.path.join(pattern, f) for f in os.listdir(pattern))
        return [p for p in paths if os.path.isfile(p)]
    paths = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
    if not paths:
        raise InputError(f"{pattern}: no file matches")
    return paths


def _read_shard(
    name: str, systems: Mapping[str, str], refs: Sequence[str], source: str | None, tsv: bool, empty_is_missing: bool
) -> Partition:
    from ngrameval.io import read_lines, read_refs

    ref_lines = read_refs(list(refs), tsv=tsv, empty_is_missing=empty_is_missing)
    hyps = {}
    for sys_name, path in systems.items():
        hyps[sys_name] = read_lines(path)
        if len(hyps[sys_name]) != len(ref_lines):
            raise InputError(f"{path} has {len(hyps[sys_name])} lines but {refs[0]} has {len(ref_lines)}")
    src = None if source is None else read_lines(source)
    if src is not None and len(src) != len(ref_lines):
        raise InputError(f"{source} has {len(src)} lines but {refs[0]} has {len(ref_lines)}")
    return Partition(name, hyps, ref_lines, src)


def from_text_shards(
    systems: Mapping[str, str | Sequence[str]],
    refs: Sequence[str | Sequence[str]],
    source: str | Sequence[str] | None = None,
    *,
    tsv: bool = False,
    empty_is_missing: bool = False,
    blocksize: int | None = None,
) -> Partitions:
    """Partitions from text shards aligned by name order: ``systems`` maps a name to a shard pattern (see
    :func:`expand`) or a list of files, ``refs`` has one pattern or list per reference stream (or TSV files
    with ``tsv``), ``source`` likewise. Every list must have the same number of shards; shard ``i`` of each
    is read on the workers (so the files must be visible to them). ``blocksize`` (bytes): a plain shard
    larger than it is cut into blocks of whole lines (see :mod:`ngrameval.scale.dask.blocks`; its lines are
    counted now, on the current Dask scheduler); ``None``: one partition per shard, nothing read yet."""
    dask = _dask()

    def files(x: str | Sequence[str]) -> list[str]:
        return expand(x) if isinstance(x, str) else list(x)

    sys_files = {name: files(x) for name, x in systems.items()}
    ref_files = [files(x) for x in refs]
    src_files = None if source is None else files(source)
    if not ref_files:
        raise InputError("give the references (one shard pattern per reference stream)")
    n = len(ref_files[0])
    counts = {name: len(f) for name, f in sys_files.items()} | {
        f"reference {k + 1}": len(f) for k, f in enumerate(ref_files)
    }
    if src_files is not None:
        counts["source"] = len(src_files)
    if len(set(counts.values())) > 1:
        raise InputError(f"shards are aligned by name order, but their numbers differ: {counts}")
    shards = [
        (
            {name: f[i] for name, f in sys_files.items()},
            [f[i] for f in ref_files],
            None if src_files is None else src_files[i],
        )
        for i in range(n)
    ]
    if blocksize is not None:
        return _blocked(shards, list(systems), tsv, empty_is_missing, blocksize)
    parts = [dask.delayed(_read_shard, pure=True)(r[0], s, r, src, tsv, empty_is_missing) for s, r, src in shards]
    return Partitions(parts, list(systems), [os.path.basename(f) for f in ref_files[0]])


Shard = tuple[Mapping[str, str], Sequence[str], str | None]  # system name -> file, reference files, source file


def _blocked(shards: Sequence[Shard], names: Sequence[str], tsv: bool, empty_is_missing: bool, size: int) -> Partitions:
    """:func:`from_text_shards` with plain shards larger than ``size`` bytes cut into blocks of whole lines."""
    from ngrameval.scale.dask import blocks

    dask = _dask()
    if size < 1:
        raise ConfigError(f"blocksize must be a positive number of bytes, got {size}")
    every = [f for s, r, src in shards for f in (*s.values(), *r, *([src] if src else []))]
    counts = blocks.count_all(dask, every)
    parts, labels = [], []
    for hyp, ref, src in shards:
        files = [*hyp.values(), *ref, *([src] if src else [])]
        per = blocks.plan(files, [counts[f] for f in files], size) if all(f in counts for f in files) else None
        label = os.path.basename(ref[0])
        if per is None:
            parts.append(dask.delayed(_read_shard, pure=True)(ref[0], hyp, ref, src, tsv, empty_is_missing))
            labels.append(label)
            continue
        offsets = {f: dask.delayed(blocks.block_offsets, pure=True)(f, per) for f in files}
        n_blocks = -(-counts[ref[0]][0] // per)
        for j in range(n_blocks):
            block = blocks.Block(j, j * per + 1, j == n_blocks - 1)
            parts.append(dask.delayed(_read_block, pure=True)(hyp, ref, src, offsets, block, tsv, empty_is_missing))
            labels.append(f"{label}@{block.first}")
    return Partitions(parts, list(names), labels)


def _read_block(
    systems: Mapping[str, str],
    refs: Sequence[str],
    source: str | None,
    offsets: Mapping[str, Any],
    block: Any,
    tsv: bool,
    empty_is_missing: bool,
) -> Partition:
    """One block of one shard (every file's lines ``block.first``.., the same count in each)."""
    from ngrameval.io.read import ref_rows
    from ngrameval.scale.dask.blocks import read_block

    def lines(path: str) -> list[str]:
        return read_block(path, offsets[path], block)

    streams = [lines(r) for r in refs]
    ref_lines = ref_rows(refs, streams, tsv, empty_is_missing, block.first - 1)
    hyps = {name: lines(path) for name, path in systems.items()}
    src = None if source is None else lines(source)
    name = f"{refs[0]}:{block.first}-{block.first + len(ref_lines) - 1}"
    return Partition(name, hyps, ref_lines, src)


def _records(
    name: str, records: Sequence[Mapping[str, Any]], systems: Sequence[str], refs: str, source: str | None
) -> Partition:
    """A partition from records: hypothesis columns ``systems``, ``refs`` a string or a list of strings."""
    ref_lists = [[r[refs]] if isinstance(r[refs], str) else list(r[refs]) for r in records]
    return Partition(
        name,
        {s: [r[s] for r in records] for s in systems},
        ref_lists,
        None if source is None else [r[source] for r in records],
    )


def _frame(name: str, frame: Any, systems: Sequence[str], refs: str, source: str | None) -> Partition:
    return _records(name, frame.to_dict("records"), systems, refs, source)


def from_bag(bag: Any, systems: Sequence[str] = ("hyp",), refs: str = "ref", source: str | None = None) -> Partitions:
    """Partitions of a ``dask.bag`` of records (dicts): the hypothesis of each system in the fields
    ``systems``, the references in ``refs`` (a string, or a list of strings for several), the source in
    ``source``. One bag partition is one partition."""
    dask = _dask()
    parts = [
        dask.delayed(_records, pure=True)(f"partition {i}", d, list(systems), refs, source)
        for i, d in enumerate(bag.to_delayed())
    ]
    return Partitions(parts, list(systems))


def from_dataframe(
    frame: Any, systems: Sequence[str] = ("hyp",), refs: str = "ref", source: str | None = None
) -> Partitions:
    """Partitions of a ``dask.dataframe`` with the columns of :func:`from_bag` (e.g. ``dd.read_parquet``
    or ``dd.read_json(..., lines=True)``); one dataframe partition is one partition."""
    dask = _dask()
    parts = [
        dask.delayed(_frame, pure=True)(f"partition {i}", d, list(systems), refs, source)
        for i, d in enumerate(frame.to_delayed())
    ]
    return Partitions(parts, list(systems))


SCHEDULER_FORMS = "local, local:N or a scheduler's address (tcp://HOST:PORT)"
MAX_HANDSHAKE = 1 << 20  # bytes: a Dask handshake is a small msgpack message (~60 bytes)


def connect(scheduler: str) -> Client:
    """A client of ``scheduler``: ``local`` (a local cluster, one single-threaded worker process per core),
    ``local:N`` (N workers), or the address of a running scheduler (``tcp://host:8786``).

    An address is checked first (ConfigError naming it when it does not parse), and a ``tcp`` one is probed
    (:func:`check_handshake`): Dask itself waits for ever on a listener that never answers and reads an HTTP
    server's or any other peer's reply as a frame length (out of memory, or a ValueError)."""
    distributed = _distributed()
    kind, _, count = scheduler.partition(":")
    if kind == "local":
        try:
            n = int(count) if count else None
        except ValueError:
            raise ConfigError(f"--scheduler local:N takes a number of workers, got {count!r}") from None
        if n is not None and n < 1:
            raise ConfigError(f"--scheduler local:N needs N >= 1, got {n}")
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0")
        client: Client = distributed.Client(cluster)
        return client
    timeout = _connect_timeout()
    where = tcp_endpoint(scheduler)
    if where is not None:
        check_handshake(scheduler, where, timeout)
    try:
        client = distributed.Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise ConfigError(f"--scheduler {scheduler}: cannot connect ({exc})") from None
    return client


def _connect_timeout() -> float:
    """Dask's connect timeout (``distributed.comm.timeouts.connect``, 30 s by default), in seconds."""
    dask = _dask()
    from dask.utils import parse_timedelta

    return float(parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="seconds"))


def tcp_endpoint(scheduler: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``tcp://`` (or scheme-less) scheduler address, None for another scheme (``tls://``,
    ``ws://``, ...); a ConfigError naming the address when it does not parse (``bogus``: no port)."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(scheduler)
        if scheme != "tcp":
            return None
        host, port = parse_host_port(location)
    except ValueError as exc:
        raise ConfigError(f"--scheduler {scheduler!r}: not an address ({exc}); expected {SCHEDULER_FORMS}") from None
    if not 0 < int(port) < 65536:
        raise ConfigError(f"--scheduler {scheduler!r}: port {port} is not from 1 to 65535")
    return str(host), int(port)


def check_handshake(scheduler: str, where: tuple[str, int], timeout: float) -> None:
    """Connects to ``where`` and reads the handshake a Dask server sends first (a frame length, 8 bytes, then that
    many bytes of frames), within ``timeout`` seconds; a ConfigError naming the address otherwise: refused,
    silent, closed, or an answer that is not a Dask handshake (an HTTP server, any other service)."""
    import socket
    import struct

    def fail(why: str) -> ConfigError:
        return ConfigError(f"--scheduler {scheduler}: not a Dask scheduler (handshake failed: {why})")

    try:
        with socket.create_connection(where, timeout=timeout) as sock:
            sock.settimeout(timeout)
            head = _read_exactly(sock, 8)
            if len(head) < 8:
                raise fail("it closed the connection")
            (size,) = struct.unpack("Q", head)
            if not 16 <= size <= MAX_HANDSHAKE:
                raise fail(f"its first bytes {head!r} are not the length of a Dask handshake")
            frames = _read_exactly(sock, size)
            (count,) = struct.unpack("Q", frames[:8]) if len(frames) == size else (0,)
            if not 1 <= count <= (size - 8) // 8 or sum(struct.unpack(f"{count}Q", frames[8 : 8 + 8 * count])) > size:
                raise fail("its first message is not a Dask handshake")
    except TimeoutError:
        raise fail(f"no answer within {timeout:g} s; the timeout is Dask's distributed.comm.timeouts.connect") from None
    except OSError as exc:
        raise ConfigError(f"--scheduler {scheduler}: cannot connect ({exc.strerror or exc})") from None


def _read_exactly(sock: Any, n: int) -> bytes:
    """``n`` bytes from ``sock``, or fewer when the peer closes the connection first."""
    data = b""
    while len(data) < n and (part := sock.recv(n - len(data))):
        data += part
    return data


def close(client: Client, with_cluster: bool = False) -> None:
    """Close ``client`` and, ``with_cluster`` (one :func:`connect` started with ``local``), its cluster."""
    any_client = cast(Any, client)
    local = any_client.cluster if with_cluster else None
    any_client.close()
    if local is not None:
        local.close()
