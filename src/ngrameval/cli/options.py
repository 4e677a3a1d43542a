"""The parser's pieces: argparse without abbreviations, the typed option values and the option groups
the subcommands share."""

from __future__ import annotations

import argparse
import math
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ngrameval.errors import ConfigError, InputError
from ngrameval.io.choices import LAYOUTS, REPEATED
from ngrameval.metrics.choices import ROUGE_MULTI
from ngrameval.metrics.registry import (
    ROUGE_PROFILES,
    ROUGE_STATS,
    valid_names,
)
from ngrameval.report.render import FORMATS
from ngrameval.text.normalize import NORMS
from ngrameval.text.sentences import SPLITTERS
from ngrameval.text.tokenize import TOKENIZERS

SPAN_LAYOUTS = ("mqm", "esa")  # error-span files (ngrameval.io.spans), scored by ngrameval.meta.mqm
PREFERENCE_LAYOUT = "preferences"  # side-by-side preferences (ngrameval.io.preferences), Bradley-Terry scores
# meta.agreement.KRIPPENDORFF_LEVELS, spelled out so that the parser does not import scipy (pinned by a test)
KRIPPENDORFF_CHOICES = ("auto", "none", "interval", "ratio", "ordinal", "nominal")


class Unset(str):
    """An option's default that knows it was not typed (a stats file scored without ``-m``: every metric it holds)."""


class CommandParser(argparse.ArgumentParser):
    """argparse without prefix abbreviations (``-t`` is not ``-tok``) whose errors are one line with exit 2,
    like every other error of the command line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        command = self.prog.partition(" ")[2]  # "ngrameval corpus export" -> "corpus export"
        hint = _habit_hint(command, message)
        self.exit(2, f"ngrameval: error: {command + ': ' if command else ''}{message}{hint} (see {self.prog} --help)\n")

    def _get_option_tuples(self, option_string: str) -> list[Any]:
        # argparse matches single-dash prefixes even with allow_abbrev=False (-t -> -tok, -l -> -lc); keep only
        # a short option with its value attached (-w3, -o/tmp/x)
        return [t for t in super()._get_option_tuples(option_string) if t[1] == option_string[:2] and t[-1]]


def is_metric_name(word: str) -> bool:
    """Whether ``word`` is a metric spec (``chrf``, ``rouge-l``), e.g. a second name after ``-m bleu``."""
    from ngrameval.metrics.registry import parse_spec

    try:
        parse_spec(word)
    except ValueError:
        return False
    return True


def _habit_hint(command: str, message: str) -> str:
    """The spelling that works for another tool's habit among ``unrecognized arguments`` (sacreBLEU's ``-i``,
    space-separated ``-m`` names, a test option given to ``score``), or ''."""
    if not message.startswith("unrecognized arguments: "):
        return ""
    words = message.removeprefix("unrecognized arguments: ").split()
    if "-i" in words or "--input" in words:
        return "; system outputs are positional arguments (sacreBLEU's -i): ngrameval score HYP.txt -r REF.txt"
    if command in ("", "score") and any(w.startswith(("--paired-", "--correction")) for w in words):
        return "; paired tests between systems are ngrameval compare's (compare A.txt B.txt -r REF --paired-bs)"
    metrics = [w for w in words if is_metric_name(w)]
    if metrics:
        return f"; -m takes one comma-separated list: -m METRIC,{','.join(metrics)}"
    return ""


class RenamedOption(argparse.Action):
    """An option's old spelling: still works for one release, with a warning naming the new one."""

    def __init__(self, *args: Any, new: str, **kwargs: Any) -> None:
        self.new = new
        kwargs.setdefault("help", f"old spelling of {new} (deprecated)")
        super().__init__(*args, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, ns: argparse.Namespace, values: Any, opt: Any = None) -> None:
        warnings.warn(f"{opt} is deprecated and will be removed: use {self.new}", FutureWarning, stacklevel=2)
        setattr(ns, self.dest, values)


def number_arg(kind: type[int] | type[float], low: float, high: float, what: str) -> Callable[[str], Any]:
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


# argparse types (``type=``) the commands share: a one-line error saying what was expected
count_arg = number_arg(int, 1, MAX_RESAMPLES, f"a whole number from 1 to {MAX_RESAMPLES:,}")


_size = number_arg(int, 0, 2**31 - 1, "a whole number >= 0")


_width = number_arg(int, 0, 17, "a number of decimals from 0 to 17")


level_arg = number_arg(float, 1e-9, 1 - 1e-9, "a confidence level from 1e-9 to 1 - 1e-9 (e.g. 0.95)")


sig_level_arg = number_arg(float, 1e-9, 1 - 1e-9, "a significance level from 1e-9 to 1 - 1e-9 (e.g. 0.05)")


unit_arg = number_arg(float, 0.0, 1.0, "a number from 0 to 1")


positive_arg = number_arg(float, 1e-300, math.inf, "a finite number > 0")


alpha_step_arg = number_arg(float, 0.001, 1.0, "an alpha step from 0.001 to 1 (at most 1,001 columns)")


_cells = number_arg(int, 1, 2**62, "a number of cells from 1 to 2**62")


_jobs = number_arg(int, 1, 4096, "a number of threads from 1 to 4096")


def wordiness_arg(text: str) -> float:
    """AEv's W: a number > 0, or inf (no wordiness penalty)."""
    return math.inf if text.strip().lower() in ("inf", "infinity") else float(positive_arg(text))


PLOT_FORMATS = (".png", ".svg", ".pdf")


def plot_path_arg(text: str) -> str:
    """``--plot``: an image file name matplotlib can write, in a directory that exists."""
    p = Path(text)
    if p.suffix.lower() not in PLOT_FORMATS:
        raise argparse.ArgumentTypeError(f"expected an image file ending in {', '.join(PLOT_FORMATS)}, got {text!r}")
    if not p.parent.is_dir():
        raise argparse.ArgumentTypeError(f"{p.parent}: no such directory (for {text!r})")
    return text


def order_arg(text: str) -> int:
    """An argparse type: an n-gram order from 1 to the registry's MAX_ORDER."""
    from ngrameval.metrics.registry import MAX_ORDER

    return int(number_arg(int, 1, MAX_ORDER, f"an n-gram order from 1 to {MAX_ORDER}")(text))


def parse_floats(option: str, text: str) -> list[float]:
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


def parse_coefficients(text: str) -> list[str]:
    """The coefficient names of ``--coefficients`` (at least one, each known)."""
    from ngrameval.meta.correlate import COEFFICIENTS

    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise ConfigError(f"--coefficients: give at least one of {', '.join(COEFFICIENTS)}")
    for c in names:
        if c not in COEFFICIENTS:
            raise ConfigError(f"--coefficients: unknown coefficient {c!r}; valid: {', '.join(COEFFICIENTS)}")
    return names


def add_text_options(p: argparse.ArgumentParser) -> None:
    """The text options of the scoring commands: ``-tok``, ``-lc``, ``--stem``, ``--stopwords``, ``--normalize``."""
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


def add_naming_options(p: argparse.ArgumentParser, names: bool = True) -> None:
    """``--names`` (unless ``names`` is False) and ``--strip-names``: how system files are named."""
    if names:
        p.add_argument("--names", nargs="+", metavar="NAME", help="a name for each system file (default: file names)")
    p.add_argument(
        "--strip-names", action="store_true", help="drop the prefix and suffix every system file name shares"
    )


def add_scoring_options(p: argparse.ArgumentParser) -> None:
    """The inputs and options of a scoring command: system files, ``-r``, ``--tsv``, ``--source``, ``-m``, the
    bounds, ``--jobs`` and the ROUGE defaults."""
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
    p.add_argument("-m", "--metrics", default=Unset("bleu"), help=f"comma-separated metric specs ({valid_names()})")
    add_max_cells(p)
    add_jobs(p)
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
        choices=ROUGE_MULTI,
        help="several references: A pool (ROUGE-1.5.5 -f A), B best "
        "recall (-f B), jk jackknife, max-f best F (rouge-score); default A, max-f for rouge-score",
    )
    g.add_argument("--rouge-alpha", type=unit_arg, default=0.5, help="F weight as ROUGE-1.5.5 -p: 1 = P, 0 = R (0.5)")
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


def add_jobs(p: argparse.ArgumentParser) -> None:
    """``--jobs``: threads (the numbers never change with it)."""
    p.add_argument(
        "--jobs",
        type=_jobs,
        metavar="N",
        help="threads (1: serial); default: every core for scoring, 1 for resampling (numpy's BLAS already uses "
        "the cores there); the numbers never change",
    )


def _scheduler(text: str) -> str:
    """``--scheduler``: anything but an empty value (which would run the job here, silently); the address itself is
    checked when connecting (:func:`ngrameval.scale.dask.cluster.connect`)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "expected local, local:N or a scheduler's address (tcp://HOST:PORT), got an empty value"
        )
    return text.strip()


def add_scheduler(p: argparse.ArgumentParser) -> None:
    """``--scheduler`` and ``--blocksize``: running on Dask."""
    p.add_argument(
        "--scheduler",
        type=_scheduler,
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


def add_chunk_size(p: argparse.ArgumentParser, what: str) -> None:
    """``--chunk-size``: streaming the files on one machine; ``what`` says what is streamed, for the help."""
    p.add_argument(
        "--chunk-size",
        type=number_arg(int, 1, 2**40, "a whole number >= 1"),
        metavar="N",
        help=f"stream the files N segments at a time {what}; default: streamed 50,000 at a time when the inputs "
        "exceed 256 MB, else read whole; the numbers never change; not with --scheduler (see --blocksize)",
    )
    p.add_argument(
        "--ref-cache",
        metavar="DIR",
        help="keep the reference side of NIST (counts, by chunk) and CIDEr/CIDEr-D (document frequencies, reference "
        "vectors) in DIR, keyed by the references' fingerprint, text settings and the metric's parameters: scoring "
        "another system against the same references reads it instead of counting again (streams the files: 50,000 "
        "segments a chunk unless --chunk-size)",
    )


def _bytes(text: str) -> int:
    """``--blocksize``: a number of bytes with an optional K, M or G (powers of 1024)."""
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    digits = text[:-1] if scale > 1 else text
    if not digits.isdigit():
        raise argparse.ArgumentTypeError(f"expected a number of bytes such as 64M or 1048576, got {text!r}")
    return int(digits) * scale


def add_max_cells(p: argparse.ArgumentParser) -> None:
    """``--max-cells``: the bound on one text pair's alignment cells (:mod:`ngrameval.limits`)."""
    p.add_argument(
        "--max-cells",
        type=_cells,
        metavar="N",
        help="bound on the alignment cells of one text pair (ROUGE-W, summary ROUGE-L, ROUGE-S/SU, SE); "
        "a longer pair stops with an error naming it (default 2**28)",
    )


def add_output_options(p: argparse.ArgumentParser, formats: Sequence[str] = FORMATS, width: int = 2) -> None:
    """``-f`` (one of ``formats``), ``-w`` (default ``width`` decimals) and ``-o``."""
    p.add_argument("-f", "--format", choices=formats, default="text", help="output format (default text)")
    add_width(p, width)
    p.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")


def add_width(p: argparse.ArgumentParser, default: int) -> None:
    """``-w/--width``: decimals of text output (unset: the command's ``default``)."""
    p.add_argument("-w", "--width", type=_width, help=f"decimals in text output (default {default})")
    p.set_defaults(width=None)


def seed_arg(text: str) -> int:
    """``--seed``: a whole number from 0 to 2**63-1, or ``none``: one drawn now from the OS, in the same range, used by
    every resampling of the run and printed with its results (so ``--seed`` with it replays the run)."""
    if text.lower() == "none":
        import secrets  # (~5 ms: only a run that draws its seed imports it)

        return secrets.randbits(63)  # as ngrameval.meta.resample.resolve_seed(None), without importing scipy
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0 or 'none', got {text!r}") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 2**63-1 or 'none', got {text!r}")
    return value


def add_judgment_options(q: argparse.ArgumentParser, systems: bool = True, required: bool = True) -> None:
    """The options reading human judgments (``-j`` and its columns, layout, filters); with ``systems``
    also ``--segment-ids``, ``--scale`` and the naming options; ``required``: whether ``-j`` must be given."""
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
        choices=(*LAYOUTS, *SPAN_LAYOUTS, PREFERENCE_LAYOUT),
        default="auto",
        help="long (--criterion-column), wide (a column per criterion), systems (a column per system), slots "
        "(E2E: --system-column sys --score-columns quality reads sys1..K/quality1..K), summeval (SummEval's "
        "model_annotations JSONL); mqm, esa (error spans, Google's MQM TSV: one criterion mqm/esa per segment "
        "doc:doc_id and rater; MQM penalties negated); preferences (item, system_a, system_b, winner: "
        "system-level criteria bradley-terry and win-rate); auto (default): long with --criterion-column, "
        "summeval/slots where nothing else fits, else wide",
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
        "--mqm-weights",
        metavar="WEIGHTS",
        help="--judgments-layout mqm: the weight of each error, comma-separated SEVERITY[/CATEGORY[/SUB]]=WEIGHT "
        "(the most specific match wins; 'google' stands for mt-metrics-eval's Major=5,Minor=1,Neutral=0,"
        "Major/Non-translation!=25,Minor/Fluency/Punctuation=0.1, the default), e.g. google,Critical=10; every "
        "severity of the file must get a weight (without this option one that has none weighs 0, with a warning)",
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
        add_naming_options(q)  # the names the judgments use


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """``-q/--quiet`` on every (sub)command: no warnings on stderr (errors still print)."""
    # SUPPRESS: a subcommand's default must not undo `ngrameval -q score ...`
    parser.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="no warnings or progress bars on stderr"
    )
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                add_quiet(sub)


def add_judged_scoring(q: argparse.ArgumentParser) -> None:
    """The scoring options of ``correlate`` and ``refcurve``, with the level and seed of their statistics."""
    add_scoring_options(q)
    q.add_argument("--level", choices=("system", "segment"), default="system", help="(default system)")
    q.add_argument("--seed", type=seed_arg, default=12345, help="random seed (default 12345)")


def add_external_scores(q: argparse.ArgumentParser) -> None:
    """``--scores``: any metric's scores beside ngrameval's (``correlate``, ``plane``)."""
    q.add_argument(
        "--scores", nargs="+", metavar="FILE",
        help="any metric's scores (.csv/.tsv/.jsonl: system[, segment] and a column per metric, or long with "
        "--scores-metric-column), correlated beside ngrameval's; with no system file, alone",
    )  # fmt: skip
    q.add_argument("--scores-metric-column", metavar="COL", help="--scores in long form: the metric column")
    q.add_argument(
        "--lower-is-better", metavar="METRIC[,METRIC]", action="append", default=[],
        help="--scores metrics that are error rates (lower is better, as TER): negated before correlating and "
        "testing, as mt-metrics-eval does (ngrameval's own metrics know their direction)",
    )  # fmt: skip
