"""What every subcommand shares: the parser class, option builders, validated numeric types, reading
data and models, progress, output checks and the JSON result.

One meaning per flag name across subcommands:

======================  ==============================================================================
``--structure METHOD``  structure-learning method of the network learned on DATA (``learn`` also
                        spells it ``--method``)
``--score S``           the structure score of that search
``--params P``          the CPT estimator
``--model M``           a fitted model file (BIF, XMLBIF, NET, XDSL or JSON) used instead of learning one
``--kdb-k K``           feature parents per feature of a KDB network
``--neighbors K``       neighbours of a kNN classifier / imputer
``--k K``               subset size (number of prototypes)
``--seed S``            the random seed, an integer in [0, 2**32 - 1]
``--quiet``             no progress on stderr
``-o/--output``         the file (or folder) the result is written to; every subcommand has it (the JSON
                        result when the subcommand writes no file of its own)
======================  ==============================================================================

Old spellings that scripts in the docs used stay accepted as hidden aliases (``learn --k``,
``classify/impute-benchmark --k``, ``classify --neighbours``, ``reproduce --structure``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import warnings
from typing import TYPE_CHECKING

import numpy as np

from .. import registry
from ..data.files import atomic_path, same_file
from ..data.limits import DEFAULT_TIMEOUT, MAX_TIMEOUT
from ..errors import BnfkError, DataError, bounded
from .names import choices, feature_learners

if TYPE_CHECKING:
    from ..serving.session_files import Session

__all__ = [
    "CliParser",
    "add_data_options",
    "add_streaming_options",
    "add_quiet",
    "add_fisher_model_options",
    "add_hidden_alias",
    "split_list",
    "read_data",
    "label_data",
    "read_model_file",
    "read_network",
    "MODEL_HELP",
    "read_session_file",
    "use_session_model",
    "need_model",
    "guard_learning_width",
    "emit",
    "add_result_output",
    "check_result_output",
    "deliver",
    "progress",
    "progress_to_stderr",
    "check_output",
    "input_files",
    "seed",
    "int_at_least",
    "float_in",
    "memory_size",
    "add_max_memory",
    "add_max_feature_memory",
    "cli_wording",
    "MAX_SEED",
    "end_progress_line",
]

MAX_SEED = 2**32 - 1


class CliParser(argparse.ArgumentParser):
    """argparse with the house error format: one line ``error: ...``, exit code 2."""

    def error(self, message):  # noqa: D401
        end_progress_line()
        sys.stderr.write(f"error: {bounded(message)} (see '{self.prog} --help').\n")
        raise SystemExit(2)


# ---------------------------------------------------------------------- validated numeric types
def _number(text: str, kind):
    try:
        value = kind(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(
            f"expected {'an integer' if kind is int else 'a number'}, got '{text}'"
        ) from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got '{text}'")
    return value


def memory_size(text: str) -> float:
    """A memory size: bytes, or a number with K, M, G or T (powers of 1024), e.g. ``8G``; ``none`` = no
    limit."""
    s = text.strip().upper().removesuffix("B").removesuffix("I")
    if s in ("NONE", "UNLIMITED"):
        return math.inf
    scale = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}.get(s[-1:], 1)
    value = _number(s[:-1] if scale > 1 else s, float) * scale
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive size such as 8G, got '{text}'")
    return value


def seed(text: str) -> int:
    """A seed: an integer in [0, 2**32 - 1] (numpy's ``default_rng`` and scikit-learn accept exactly
    these)."""
    value = _number(text, int)
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"seeds are integers from 0 to {MAX_SEED}, got {value}")
    return value


def int_at_least(minimum: int, maximum: int | None = None):
    """An argparse type for integers in [minimum, maximum]."""

    def parse(text: str) -> int:
        value = _number(text, int)
        if value < minimum or (maximum is not None and value > maximum):
            bound = f"at least {minimum}" if maximum is None else f"from {minimum} to {maximum}"
            raise argparse.ArgumentTypeError(f"must be {bound}, got {value}")
        return value

    parse.__name__ = "integer"
    return parse


def float_in(low: float, high: float, *, low_open: bool = False, high_open: bool = False):
    """An argparse type for finite numbers in [low, high] (ends open where asked)."""

    def parse(text: str) -> float:
        value = _number(text, float)
        below = value <= low if low_open else value < low
        above = value >= high if high_open else value > high
        if below or above:
            lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
            raise argparse.ArgumentTypeError(f"must lie in {lo}{low:g}, {high:g}{hi}, got {value:g}")
        return value

    parse.__name__ = "number"
    return parse


# ---------------------------------------------------------------------- option builders
def add_data_options(p: argparse.ArgumentParser, *, label: bool = False) -> None:
    """The data options every CSV-reading subcommand accepts (same names and meanings everywhere)."""
    g = p.add_argument_group("data options")
    g.add_argument("--class-column", metavar="C", help="column holding class labels")
    if label:
        g.add_argument(
            "--label-column",
            metavar="C",
            help="column holding the labels to evaluate against (default: --class-column)",
        )
    g.add_argument("--drop-columns", metavar="A,B", default="", help="comma-separated columns to ignore")
    g.add_argument(
        "--discretize",
        metavar="B",
        type=int_at_least(0),
        default=4,
        help="quantile bins for numeric columns with many levels (default 4; 0 refuses such columns)",
    )
    g.add_argument(
        "--max-levels",
        metavar="L",
        type=int_at_least(2),
        default=50,
        help="numeric columns with more distinct values are discretized (default 50)",
    )
    g.add_argument(
        "--missing-policy",
        choices=("missing", "category"),
        default="missing",
        help="treat the --na-values cells as missing (default) or as a category of its own",
    )
    g.add_argument(
        "--na-values",
        default=None,
        metavar="LIST",
        help="which cell texts are missing: default the empty field only (so '?' or 'NA' is a "
        "category); 'default-list' for '', NA, N/A, ?, nan; or a comma list such as 'NA,?' "
        "(the empty field is always missing)",
    )
    g.add_argument("--seed", type=seed, default=0, help="random seed, 0 to 2**32-1 (default 0)")


def add_max_memory(p: argparse.ArgumentParser) -> None:
    """``--max-memory SIZE``: the limit every quadratic step (Gram matrices and their work space) obeys."""
    p.add_argument(
        "--max-memory",
        type=memory_size,
        default=None,
        metavar="SIZE",
        help="refuse quadratic work (N x N matrices) needing more than SIZE, e.g. 8G "
        "(default 4G; 'none' = no limit)",
    )


def add_max_feature_memory(p: argparse.ArgumentParser) -> None:
    """``--max-feature-memory SIZE``: the Fisher feature map's own budget (linear in the rows, apart from
    ``--max-memory``'s N x N work)."""
    p.add_argument(
        "--max-feature-memory",
        type=memory_size,
        default=None,
        metavar="SIZE",
        help="refuse a Fisher feature map (N rows x one entry per state of every column) needing more "
        "than SIZE, e.g. 8G (default 4G, or BNFK_MAX_MEMORY_GIB or three quarters of the host's memory "
        "when lower; 'none' = no limit)",
    )


def add_quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def add_hidden_alias(p: argparse.ArgumentParser, flag: str, dest: str, **kw) -> None:
    """Accept an old spelling ``flag`` for ``dest`` without listing it in ``--help``."""
    p.add_argument(flag, dest=dest, help=argparse.SUPPRESS, default=argparse.SUPPRESS, **kw)


def add_fisher_model_options(
    p: argparse.ArgumentParser,
    *,
    structure_default: str | None = None,
    structures=None,
    title: str = "Fisher kernel model",
    with_model: bool = True,
    score_default: str | None = None,
    params_default: str | None = None,
) -> None:
    """``--structure/--score/--params/--model``: the network behind the Fisher kernel, learned on the
    feature columns only (the label column is never a feature) unless ``--model`` is given.  An option left
    at ``None`` is the default recipe's (:data:`bnfk_core.learning.recipe.DEFAULT_RECIPE`)."""
    from ..learning.recipe import DEFAULT_RECIPE as R

    structures = structures or feature_learners()
    g = p.add_argument_group(title)
    g.add_argument(
        "--structure",
        default=structure_default,
        choices=structures,
        metavar="METHOD",
        help=f"structure-learning method on the feature columns: {', '.join(structures)} "
        f"(default {structure_default or R.structure + ', the default recipe'})",
    )
    g.add_argument(
        "--score",
        default=score_default,
        choices=choices(registry.SCORES),
        help=f"structure score (default {score_default or R.score + ', the default recipe'})",
    )
    g.add_argument(
        "--params",
        default=params_default,
        choices=choices(registry.ESTIMATORS),
        help=f"CPT estimator (default {params_default or R.params + ', the default recipe'})",
    )
    if with_model:
        g.add_argument(
            "--model",
            metavar="M.bif",
            help="use this network (a model file: .bif, .xmlbif, .net, .xdsl or .json) instead of "
            "learning one (it must not contain the label column)",
        )


def add_missing_data_option(p, default: str) -> None:
    """``--missing-data complete-rows|available-case|em``: how structure learning treats missing cells."""
    p.add_argument(
        "--missing-data",
        default=default,
        choices=choices(registry.MISSING_DATA),
        help="structure from the complete rows, from every row where a family is observed "
        f"(available-case) or by structural EM; CPTs by EM over the missing cells (default {default})",
    )


#: ``--numbers``: what a column of numbers becomes (``bnfk_core.hybrid.NUMBERS_MODES``); ``auto`` decides
#: per table (:func:`resolve_numbers`)
NUMBERS_CHOICES = ("auto", "bin", "keep")
NUMBERS_AUTO = NUMBERS_CHOICES[0]


def add_numbers_option(p, keep: str, default: str = NUMBERS_AUTO) -> None:
    """``--numbers auto|bin|keep``: numeric columns kept as numbers (``keep``, what the subcommand then does:
    ``keep``), cut into quantile bins (``bin``), or ``auto`` (the default): ``keep`` when the table holds a
    column of numbers and no other option asks for a discrete table (:func:`resolve_numbers`)."""
    p.add_argument(
        "--numbers",
        choices=NUMBERS_CHOICES,
        default=default,
        help=f"keep: numbers stay numbers, {keep} (columns of numbers with fewer than 10 distinct values "
        "stay categories; numeric identifiers are dropped); bin: numeric columns cut into quantile bins, a "
        "discrete table; auto: keep when DATA holds a column of numbers and no other option needs a discrete "
        f"table, else bin (default {default})",
    )


#: ``--numbers auto`` looks for numbers only in a file of at most this many bytes and header fields (a larger
#: or wider one is binned, as the streaming reader and the width guards need)
AUTO_NUMBERS_MAX_BYTES = 256 * 2**20
AUTO_NUMBERS_MAX_COLUMNS = 1000


def _numeric_columns(args, label: str | None) -> list[str]:
    """The columns of DATA the hybrid reader reads as numbers; none for a file that is not a regular one, is
    larger than :data:`AUTO_NUMBERS_MAX_BYTES` or wider than :data:`AUTO_NUMBERS_MAX_COLUMNS`, or that it
    cannot read (the discrete reader then says what is wrong)."""
    from ..data.files import open_regular, regular_file_problem

    path = args.data
    if not isinstance(path, str) or regular_file_problem(path) is not None:
        return []
    try:
        if os.path.getsize(path) > AUTO_NUMBERS_MAX_BYTES:
            return []
        with open_regular(path, "rb") as fh:
            header = fh.readline(2**20)
        if max(header.count(b","), header.count(b";"), header.count(b"\t")) >= AUTO_NUMBERS_MAX_COLUMNS:
            return []
        table = read_mixed(path, args, categorical=[label] if label else ())
    except (BnfkError, OSError, ValueError):
        return []
    return [v for v, k in zip(table.variables, table.kinds) if k == "numeric"]


def read_mixed(path: str, args, model=None, categorical=()):
    """The mixed table of ``path`` with the shared data options; with ``model``, its columns read as the
    model's kinds and aligned to it; ``categorical``: columns read as categories (a label column)."""
    from ..hybrid import DISCRETE, NUMERIC, load_mixed

    kw = {"categorical_columns": list(categorical)} if categorical else {}
    if model is not None:
        kw = {
            "numeric_columns": [v for v, k in zip(model.variables, model.kinds) if k == NUMERIC],
            "categorical_columns": [v for v, k in zip(model.variables, model.kinds) if k == DISCRETE],
            "drop_identifiers": False,
        }
    return load_mixed(
        path,
        numbers="keep",
        missing_policy=args.missing_policy,
        na_values=getattr(args, "na_values", None),
        max_levels=args.max_levels,
        drop_columns=split_list(args.drop_columns),
        **kw,
    )


def is_hybrid_model(path) -> bool:
    """``path`` is a hybrid JSON model file."""
    from ..hybrid import is_hybrid_json

    return isinstance(path, str) and path.lower().endswith(".json") and is_hybrid_json(path)


def resolve_numbers(args, discrete_options: dict, label: str | None = None) -> str:
    """Settle ``--numbers auto`` to ``keep`` or ``bin`` (``args.numbers`` is set; explicit values stay).

    ``keep`` when a hybrid ``--model`` is given, or when no option of ``discrete_options`` (its name ->
    whether it is in force) asks for a discrete table, no discrete ``--model`` is given and DATA holds a
    column the hybrid reader reads as a number (:func:`bnfk_core.hybrid.load_mixed`; ``label`` is read as a
    category).

    Parameters
    ----------
    args : argparse.Namespace
    discrete_options : dict of str -> bool
    label : str, optional

    Returns
    -------
    str
        ``"keep"`` or ``"bin"``.
    """
    if args.numbers != NUMBERS_AUTO:
        return args.numbers
    model = getattr(args, "model", None)
    if model:
        args.numbers = "keep" if is_hybrid_model(model) else "bin"
        return args.numbers
    forced = [name for name, on in discrete_options.items() if on]
    args.numbers = "keep" if not forced and _numeric_columns(args, label) else "bin"
    return args.numbers


def write_gram(path: str, K: np.ndarray, ext: str) -> None:
    """A Gram matrix written atomically: ``.npy`` (numpy's format) or ``.csv`` (every digit, ``%.17g``)."""
    with atomic_path(path) as tmp:
        if ext == ".npy":
            np.save(tmp, K)
        else:
            np.savetxt(tmp, K, delimiter=",", fmt="%.17g")


def split_list(s: str) -> list[str]:
    """'a, b,,c' -> ['a', 'b', 'c']."""
    return [c.strip() for c in (s or "").split(",") if c.strip()]


# ---------------------------------------------------------------------- inputs
def add_streaming_options(p: argparse.ArgumentParser, chunksize_help: str, engine_help: str) -> None:
    """``--chunksize ROWS``, ``--engine local|dask``, ``--scheduler ADDRESS`` and ``--dask-timeout S`` (large
    files)."""
    g = p.add_argument_group("streaming (large files)")
    g.add_argument("--chunksize", type=int_at_least(1), default=None, metavar="ROWS", help=chunksize_help)
    g.add_argument("--engine", choices=("local", "dask"), default="local", help=engine_help)
    g.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="Dask scheduler address (tcp://host:8786) for --engine dask; default: a local "
        "cluster of two processes",
    )
    g.add_argument(
        "--dask-timeout",
        metavar="S",
        type=float_in(0, MAX_TIMEOUT, low_open=True),
        default=DEFAULT_TIMEOUT,
        help=f"seconds to wait for the scheduler to accept the connection, for its first answer and "
        f"for a worker (default {DEFAULT_TIMEOUT:g})",
    )


def read_data(path: str, args, model=None, class_column: str | None = None):
    """Load ``path`` with the shared data options (aligned to ``model`` when given).

    The class column is ``class_column`` if given, else ``--label-column`` where the subcommand has
    one, else ``--class-column`` (the label-column fallback, handled here once).  A bnfk session file
    (:mod:`bnfk_core.serving.session_files`) in place of the CSV gives its data with its own loading options.
    """
    from ..data.table import load_csv
    from ..serving.session_files import is_session_file

    cls = (
        class_column
        if class_column is not None
        else (getattr(args, "label_column", None) or getattr(args, "class_column", None))
    )
    if is_session_file(path):
        return _session_data(read_session_file(path), cls, model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = load_csv(
            path,
            class_column=cls,
            missing_policy=args.missing_policy,
            discretize_bins=args.discretize,
            max_levels=args.max_levels,
            drop_columns=split_list(args.drop_columns),
            model=model,
            na_values=getattr(args, "na_values", None),
        )
    for w in caught:
        warning_line(w.message)
    return data


_WARNED: set = set()


def warning_line(message, category=None, filename=None, lineno=None, file=None, line=None) -> None:
    """A warning as one ``warning: …`` line on stderr, once per text (also the command's
    ``warnings.showwarning``): never Python's form with the install path and the source line."""
    text = " ".join(str(message).split())
    if text not in _WARNED:
        _WARNED.add(text)
        sys.stderr.write(f"warning: {text}\n")


_SESSIONS: dict = {}


def read_session_file(path: str) -> Session:
    """The session in ``path``, read once per run (the data and the model come from the same reading); the
    settings it left out (out of range, :mod:`bnfk_core.serving.settings`) are warnings on stderr."""
    from ..serving.session_files import read_session

    st = os.stat(path)
    key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    if key not in _SESSIONS:
        _SESSIONS.clear()
        _SESSIONS[key] = session = read_session(path)
        for note in session.notes:
            end_progress_line()
            sys.stderr.write(f"warning: {note}\n")
    return _SESSIONS[key]


def _session_data(session: Session, cls: str | None, model):
    """A session's data as the CSV options would give them: its class column (a different one asked for is
    refused), or only the model's variables when a model is given."""
    data = session.data
    if cls is not None and cls != data.class_column:
        raise BnfkError(
            f"The session {session.source} has class column '{data.class_column}', not '{cls}'; "
            "leave out --label-column/--class-column or change the session."
        )
    if model is None:
        return data
    feats = data.without_class()
    if list(model.variables) != list(feats.variables):
        raise BnfkError(
            f"The model's variables are not the feature variables of the session {session.source}."
        )
    return feats


def label_data(args, what: str, model=None):
    """Data whose class column is the label (``--label-column``, falling back to ``--class-column``);
    refuses with a sentence naming the subcommand when there is none."""
    if getattr(args, "label_column", None) is None and getattr(args, "class_column", None) is not None:
        args.label_column = args.class_column
    data = read_data(args.data, args, model=model)
    if data.class_column is None and what:
        raise BnfkError(f"{what} give --label-column C.")
    return data


def read_model_file(path: str):
    """A fitted model from a model file (BIF, XMLBIF, Hugin NET, XDSL or bnfk JSON), or the network of a
    session file (errors name the file)."""
    from ..network.formats import read_model
    from ..serving.session_files import is_session_file

    if is_session_file(path):
        return read_session_file(path).model
    if path.lower().endswith(".json"):
        from ..hybrid import is_hybrid_json

        if is_hybrid_json(path):
            raise BnfkError(
                f"{path} is a hybrid (conditional linear Gaussian) model; only learn, loglik, sample, "
                "kernel, cluster and prototypes take one so far."
            )
    return read_model(path)


#: the help line of a MODEL argument that :func:`read_network` reads
MODEL_HELP = (
    "a model file with its CPTs (.bif, .xmlbif/.xml, .net Hugin, .xdsl GeNIe or bnfk .json), a session file "
    "or a textbook network (asia, alarm, ...)"
)


def read_network(spec: str):
    """A model file (:func:`read_model_file`) or, when no file of that name exists, a textbook network by name
    (:data:`bnfk_core.network.textbook.TEXTBOOK_NETWORKS`: ``asia``, ``alarm``, ...)."""
    from ..network.textbook import TEXTBOOK_NETWORKS, textbook_network

    if not os.path.exists(spec):
        if spec in TEXTBOOK_NETWORKS:
            return textbook_network(spec)
        if not os.path.splitext(spec)[1] and os.sep not in spec:
            raise BnfkError(
                f"'{spec}' is neither a model file nor a textbook network ({', '.join(TEXTBOOK_NETWORKS)})."
            )
    return read_model_file(spec)


def use_session_model(args, argv) -> None:
    """With a session file as the data (``DATA``, or ``A`` of ``mmd``), its network is the model: ``--model``
    then defaults to the session file, and a ``--structure`` left at its default is not learned (an explicit
    ``--structure`` still is)."""
    from ..serving.session_files import is_session_file

    path = getattr(args, "data", None) if hasattr(args, "data") else getattr(args, "a", None)
    if not (
        isinstance(path, str) and hasattr(args, "model") and args.model is None and is_session_file(path)
    ):
        return
    if any(a == "--structure" or a.startswith("--structure=") for a in argv):
        return
    args.model = path
    if hasattr(args, "structure"):
        args.structure = None


def guard_learning_width(path: str, args, method: str | None) -> None:
    """Refuse a structure search too wide for the memory limit from the file's header alone, before the file
    is loaded (:func:`bnfk_core.learning.structure.guard_width`; a 50,000-column CSV is refused in a
    second)."""
    from ..data.reading import file_layout
    from ..learning.structure import guard_width
    from ..serving.session_files import is_session_file

    if not method or is_session_file(path):
        return
    try:
        header = file_layout(path, scan=False).header
    except DataError:  # e.g. UTF-16 text, which the streaming reader refuses and load_csv reads: it decides
        return
    guard_width(
        method,
        len(header) - len(split_list(getattr(args, "drop_columns", ""))),
        source=os.path.basename(path),
    )


def need_model(args) -> str:
    """``--model``, or the session file given as the data (:func:`use_session_model`); else one sentence."""
    if not args.model:
        raise BnfkError(
            f"'{args.command}' needs a network: give --model M.bif (or a session file as the data, "
            "whose network is then used)."
        )
    return args.model


def input_files(args) -> list:
    """The files a command reads (its data, second data set, model): what it must never write over."""
    return [
        v for k in ("data", "other", "a", "b", "model") if isinstance(v := getattr(args, k, None), str) and v
    ]


def check_output(path: str, allowed: tuple[str, ...], what: str, inputs: tuple | list = ()) -> str:
    """The lower-case extension of ``path`` after checking it is one of ``allowed``, its folder exists and
    it is none of the command's ``inputs`` (a file you give is never overwritten)."""
    for given in inputs:
        if given and same_file(path, given):
            raise BnfkError(
                f"Cannot write {what} to '{path}': that is the input file {given}, which bnfk "
                "never changes; choose another name."
            )
    ext = os.path.splitext(path)[1].lower()
    if ext not in allowed:
        raise BnfkError(f"Cannot write {what} to '{path}': use a file name ending in {' or '.join(allowed)}.")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise BnfkError(f"Cannot write '{path}': folder '{folder}' does not exist.")
    return ext


# ---------------------------------------------------------------------- messages
_OPTION_WORDS = (
    (re.compile(r"drop_columns=\[?'?([^'\]\s]*)'?\]?"), r"--drop-columns \1"),
    (re.compile(r"\bdrop_columns\b"), "--drop-columns"),
    (re.compile(r"\bdiscretize_bins\b"), "--discretize"),
    (re.compile(r"\bmax_levels=(\d+)"), r"--max-levels \1"),
    (re.compile(r"\bmax_levels\b"), "--max-levels"),
    (re.compile(r"\bmissing_policy\b"), "--missing-policy"),
    (re.compile(r"\bclass_column\b"), "--class-column"),
    (re.compile(r"raise the feature-map memory limit"), "raise --max-feature-memory"),
    (re.compile(r"raise the memory limit"), "raise --max-memory"),
)


def cli_wording(message: str) -> str:
    """The core's message with its Python parameter names replaced by the CLI flags that set them
    (``drop_columns=['id']`` -> ``--drop-columns id``): one rule for every subcommand."""
    for pattern, repl in _OPTION_WORDS:
        message = pattern.sub(repl, message)
    return message


# ---------------------------------------------------------------------- outputs
_progress_open = False


def progress_to_stderr(fraction: float, message: str = "") -> None:
    """A one-line progress bar on stderr (redrawn in place)."""
    global _progress_open
    sys.stderr.write(f"\r[{fraction * 100:5.1f}%] {message[:70]:<70}")
    _progress_open = fraction < 1
    if fraction >= 1:
        sys.stderr.write("\n")
    sys.stderr.flush()


def end_progress_line() -> None:
    """Finish a half-drawn progress line so that ``error:`` starts a line of its own."""
    global _progress_open
    if _progress_open:
        sys.stderr.write("\n")
        _progress_open = False


def progress(args):
    """The progress callback for ``args`` (None under ``--quiet``)."""
    return None if getattr(args, "quiet", False) else progress_to_stderr


def _jsonable(x):
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def _result_text(result) -> str:
    """A subcommand's result as written: a dict as indented JSON, text (``options``' Markdown) as it is."""
    if isinstance(result, str):
        return result
    return json.dumps(result, indent=1, default=_jsonable) + "\n"


def emit(obj) -> None:
    """Print one JSON object (or a subcommand's text) on stdout."""
    sys.stdout.write(_result_text(obj))
    sys.stdout.flush()


def add_result_output(
    p: argparse.ArgumentParser, suffix: str = ".json", what: str = "the JSON result"
) -> None:
    """``-o/--output FILE``: ``what`` (the result that would go to stdout) written to FILE instead, stdout
    then one line ``{"output": FILE}``.  :func:`bnfk_core.cli.main.build_parser` gives it to every subcommand
    without an ``-o`` of its own (those write a file of their own kind: a model, a matrix, a report)."""
    p.add_argument(
        "-o",
        "--output",
        default=None,
        metavar=f"FILE{suffix}",
        help=f"write {what} to FILE (a {suffix} file) instead of stdout; stdout then names the file",
    )
    p.set_defaults(result_file=(suffix, what))


def check_result_output(args) -> None:
    """Refuse a bad ``-o`` of :func:`add_result_output` (extension, folder, an input file) before any work."""
    spec = getattr(args, "result_file", None)
    if spec is not None and getattr(args, "output", None):
        check_output(args.output, (spec[0],), spec[1], input_files(args))


def deliver(result, args) -> None:
    """The result on stdout, or in the ``-o`` file of :func:`add_result_output` (written atomically) with one
    line ``{"output": FILE}`` on stdout."""
    if getattr(args, "result_file", None) is None or not getattr(args, "output", None):
        emit(result)
        return
    with atomic_path(args.output) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(_result_text(result))
    sys.stdout.write(json.dumps({"output": args.output}) + "\n")
    sys.stdout.flush()
