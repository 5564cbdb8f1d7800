"""Session files: one JSON document that holds a whole analysis -- the data (a bundled sample by name, or the
CSV itself), its loading options, the structure and CPTs of the network, and the app's page settings.

Schema (``"schema": "bnfk-session"``, ``"version": 1``)::

    {
      "schema": "bnfk-session", "version": 1,
      "data": {"sample": "house_votes_84"}                 # a file of sample_data/ (catalog name), or
              {"name": "mine.csv", "csv": "<the file's text>"}        # an embedded CSV (UTF-8 text), or
              {"name": "mine.csv", "csv_base64": "<the file's bytes>"} # one that is not UTF-8, or
              {"textbook": "asia", "rows": 2000, "seed": 0}       # rows sampled from a textbook network
              + "sha256": "<hex digest of the file's bytes>" (checked when present),
              + "options": {"class_column": str|null, "missing_policy": "missing"|"category",
                            "bins": int >= 0 (0: refuse numeric columns), "drop_columns": [str, ...],
                            "na_values": "default-list" | [str, ...] | null (the empty field only)},
                 a file without "na_values" was written when NA, N/A, ?, nan were always missing:
                 it is read with "default-list"; a sample without it uses its catalog entry's list.
      "structure": {"nodes": [feature variables, in the data's order], "arcs": [[u, v], ...]},
      "params": "smoothed",                                # the CPT estimator (registry.ESTIMATORS)
      "model": { bnfk JSON model }                         # optional: CPTs as saved; else fitted on the data
      "settings": {"<key>": value, ...}                    # optional: the app's page settings (JSON values)
      "networks": {"compare_b": {structure}, "learned": {structure}}  # optional: the other networks of the
                                                           # session (Compare's B, the last learned one)
      "numbers": {"<column>": "number" | "category", ...}   # optional: the Data page's switches (columns
                                                           # of numbers read otherwise than by the rule)
    }

No pickle anywhere: everything is validated on reading, and every refusal is a :class:`SessionError` naming
the file and the field at fault -- also for JSON that Python's parser chokes on (nesting thousands deep, a
number of thousands of digits, NaN/Infinity).  A file is a session file when it parses as one
(:func:`is_session_file`), whatever the order of its keys or its indentation.  Page settings are checked by
the registry of :mod:`bnfk_core.serving.settings` (bounded like the app's widgets): a value out of range is
left out, with a sentence in :attr:`Session.notes`.  The app's Home page saves and opens these files; every
CLI subcommand takes one in place of its CSV (``python -m bnfk_core cluster session.json``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..data.files import NOT_FOUND, atomic_path, not_regular_message, open_regular, regular_file_problem
from ..data.samples import sample_catalog, sample_dir
from ..data.table import CategoricalData, load_csv
from ..errors import BnfkError, DataError, shorten
from ..network.dag import DAG
from ..network.model import BayesNet, fit
from ..network.textbook import TEXTBOOK_NETWORKS, textbook_sample
from ..registry import ESTIMATORS
from .settings import SETTINGS, check_settings

__all__ = [
    "SCHEMA",
    "VERSION",
    "SessionError",
    "Session",
    "DataRef",
    "session_dict",
    "parse_session",
    "read_session",
    "write_session",
    "is_session_file",
    "SAMPLE_DIR",
    "MAX_SESSION_BYTES",
]

SCHEMA = "bnfk-session"
VERSION = 1
#: The bundled samples (``data.sample`` names a ``catalog.json`` entry of this folder).
SAMPLE_DIR = sample_dir()  # the checkout's sample_data, or the copy the wheel installed
#: Largest session file read (an embedded CSV counts).
MAX_SESSION_BYTES = 512 * 2**20
#: most digits of an integer in a session file (seeds have 10)
MAX_DIGITS = 30
_POLICIES = ("missing", "category")


class SessionError(BnfkError):
    """A session file or link that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class DataRef:
    """Where a session's data come from and how they are loaded."""

    sample: str | None = None  # a catalog name of sample_data/
    textbook: str | None = None  # a textbook network (network.textbook.TEXTBOOK_NETWORKS) the rows come from
    rows: int = 2000  # the rows sampled from it
    seed: int = 0  # and their seed
    name: str | None = None  # the uploaded file's name (embedded CSV)
    content: bytes | None = None  # the embedded file's bytes
    class_column: str | None = None
    missing_policy: str = "missing"
    bins: int = 4
    drop_columns: tuple = ()
    na_values: object = (
        "default-list"  # bnfk_core.data.table.na_set; None = the sample's catalog list / empty field
    )

    @property
    def sha256(self) -> str | None:
        return hashlib.sha256(self.content).hexdigest() if self.content is not None else None

    def load(self, sample_dir: Path = SAMPLE_DIR) -> CategoricalData:
        """The data, loaded as :func:`~bnfk_core.data.table.load_csv` with these options."""
        opts = dict(
            class_column=self.class_column,
            missing_policy=self.missing_policy,
            discretize_bins=self.bins or None,
            drop_columns=list(self.drop_columns),
            na_values=self.na_values,
        )
        if self.content is not None:
            buf = io.BytesIO(self.content)
            buf.name = self.name or "embedded.csv"
            return load_csv(buf, **opts)
        if self.textbook is not None:  # complete categorical rows: the missing policy and bins do not apply
            table = textbook_sample(self.textbook, self.rows, self.seed)
            return table.drop(self.drop_columns).with_class(self.class_column)
        entry = _catalog(sample_dir)[self.sample]
        if self.na_values is None:
            opts["na_values"] = entry.get("na_values")
        return load_csv(sample_dir / entry["file"], **opts)

    def to_dict(self) -> dict:
        if self.content is not None:
            try:
                body = {"csv": self.content.decode("utf-8")}
            except UnicodeDecodeError:
                body = {"csv_base64": base64.b64encode(self.content).decode("ascii")}
            out = {"name": self.name or "embedded.csv", **body, "sha256": self.sha256}
        elif self.textbook is not None:
            out = {"textbook": self.textbook, "rows": int(self.rows), "seed": int(self.seed)}
        else:
            out = {"sample": self.sample}
        out["options"] = {
            "class_column": self.class_column,
            "missing_policy": self.missing_policy,
            "bins": int(self.bins),
            "drop_columns": list(self.drop_columns),
            "na_values": self.na_values
            if isinstance(self.na_values, (str, type(None)))
            else list(self.na_values),
        }
        return out


@dataclass
class Session:
    """A read session: the data, the fitted network over its features, and the page settings."""

    data: CategoricalData
    model: BayesNet
    ref: DataRef
    params: str
    settings: dict = field(default_factory=dict)
    source: str = "session"
    notes: tuple = ()  # settings left out (out of range, wrong type), one sentence each
    networks: dict = field(default_factory=dict)  # name -> DAG over the features (NETWORK_NAMES)
    number_kinds: dict = field(default_factory=dict)  # feature column -> "number" / "category" switched


#: the other networks a session file may hold beside its structure
NETWORK_NAMES = ("compare_b", "learned")
#: what a column of numbers is read as when its switch differs from the hybrid reader's rule
NUMBER_KINDS = ("number", "category")


def _catalog(sample_dir: Path) -> dict:
    return sample_catalog(sample_dir)


def session_dict(
    ref: DataRef,
    dag: DAG,
    params: str,
    model: BayesNet | None = None,
    settings: dict | None = None,
    networks: dict | None = None,
    number_kinds: dict | None = None,
) -> dict:
    """The JSON document of a session (see the module docstring); ``model`` adds its CPTs, ``networks``
    (name in :data:`NETWORK_NAMES` -> DAG) the session's other networks."""
    out = {
        "schema": SCHEMA,
        "version": VERSION,
        "data": ref.to_dict(),
        "structure": dag.to_dict(),
        "params": params,
    }
    if model is not None:
        out["model"] = model.to_json_dict()
    out["settings"] = _check_settings(dict(settings or {}), "settings")
    for name in networks or {}:
        if name not in NETWORK_NAMES:
            raise SessionError(f"'{name}' is not a network a session holds ({', '.join(NETWORK_NAMES)}).")
    if networks:
        out["networks"] = {k: d.to_dict() for k, d in networks.items()}
    if number_kinds:
        out["numbers"] = {str(c): str(k) for c, k in number_kinds.items()}
    return out


def write_session(path, doc: dict) -> None:
    """Write a session document (atomically: a failed write leaves no partial file)."""
    text = json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def is_session_file(path) -> bool:
    """True when ``path`` is a regular file that parses as a JSON object whose ``schema`` is ``bnfk-session``
    (any key order, any indentation; the file name does not matter).  Never opens a FIFO or a device; a file
    whose first character is not ``{`` or over :data:`MAX_SESSION_BYTES` is not parsed."""
    try:
        doc = _document(path)
    except SessionError:
        return _looks_like_session(path)
    return isinstance(doc, dict) and doc.get("schema") == SCHEMA


def _looks_like_session(path) -> bool:
    """A JSON object whose first 4 KiB name the session schema: read as a session file even when it does not
    parse, so that the refusal says why (nested too deep, bad JSON) instead of treating it as a CSV."""
    try:
        if regular_file_problem(Path(os.fspath(path))) is not None:
            return False
        with open_regular(Path(os.fspath(path))) as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") and f'"{SCHEMA}"'.encode() in head


_LAST: dict = {}


def _document(path):
    """The parsed JSON of the file at ``path``; SessionError when it cannot be a session (not a regular file,
    too big, not a JSON object) or does not parse.  The last one is kept (the CLI asks whether a file is a
    session, then reads it)."""
    p = Path(os.fspath(path))
    shown = shorten(p.name or str(p))
    problem = regular_file_problem(p)
    if problem == NOT_FOUND:
        raise SessionError(f"Session file {shown} does not exist.")
    if problem is not None:
        raise SessionError(not_regular_message(shown))
    try:
        with open_regular(p) as fh:
            st = os.fstat(fh.fileno())
            key = (os.path.realpath(p), st.st_mtime_ns, st.st_size)
            if key in _LAST:
                return _LAST[key]
            if st.st_size > MAX_SESSION_BYTES:
                raise SessionError(
                    f"{shown} is {st.st_size / 2**20:.0f} MiB; session files are read up to "
                    f"{MAX_SESSION_BYTES // 2**20} MiB."
                )
            raw = fh.read(4096)
            if not raw.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):  # a CSV is never read whole here
                raise SessionError(f"{shown} is not a bnfk session file (not a JSON object).")
            raw += fh.read(MAX_SESSION_BYTES + 1 - len(raw))
    except OSError as exc:
        raise SessionError(f"Cannot read session file {shown}: {exc.strerror or 'read error'}.") from None
    doc = _json(raw, shown)
    _LAST.clear()
    _LAST[key] = doc
    return doc


def _json(raw: bytes | str, source: str):
    """``json.loads`` that refuses, in one sentence each: bad JSON, NaN/Infinity, integers of more than
    MAX_DIGITS digits, numbers that overflow, nesting deeper than Python's parser goes."""
    if isinstance(raw, (bytes, bytearray)) and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return json.loads(raw, parse_constant=_no_constant, parse_int=_bounded_int, parse_float=_finite_float)
    except _Refused as exc:
        raise SessionError(f"{source} holds {exc}, which a session file may not hold.") from None
    except RecursionError:
        raise SessionError(f"{source} is nested too deeply to be a session file.") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise SessionError(f"{source} is not a JSON file ({shorten(str(exc), 120)}).") from None


class _Refused(ValueError):
    pass


def _no_constant(name):
    raise _Refused(f"the number {name}")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise _Refused(f"a number of {len(text.lstrip('-')):,} digits (at most {MAX_DIGITS})")
    return int(text)


def _finite_float(text: str) -> float:
    x = float(text)
    if len(text) > 400 or not math.isfinite(x):
        raise _Refused(f"a number too large or too long ({shorten(text, 20)})")
    return x


def read_session(path, sample_dir: Path = SAMPLE_DIR) -> Session:
    """Read and validate a session file; see :func:`parse_session`."""
    p = Path(os.fspath(path))
    doc = _document(p)
    return _session(doc, shorten(p.name), sample_dir)


def parse_session(raw: bytes | str, source: str = "session", sample_dir: Path = SAMPLE_DIR) -> Session:
    """A :class:`Session` from the bytes of a session file.

    Checks, each refusal naming ``source`` and the field: the schema and version; the data reference (a
    known sample, or an embedded CSV whose ``sha256`` matches); the loading options; that the data load;
    that the structure's nodes are exactly the feature variables and its arcs make a DAG; the estimator;
    the CPTs when given (same variables, parents and states as the data); JSON-only settings (known ones
    bounded by :mod:`bnfk_core.serving.settings`; a refused value is left out with a note).
    """
    source = shorten(str(source))
    if isinstance(raw, (bytes, bytearray)) and len(raw) > MAX_SESSION_BYTES:
        raise SessionError(
            f"{source} is {len(raw) / 2**20:.0f} MiB; session files are read up to "
            f"{MAX_SESSION_BYTES // 2**20} MiB."
        )
    return _session(_json(raw, source), source, sample_dir)


def _session(doc, source: str, sample_dir: Path) -> Session:
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise SessionError(f'{source} is not a bnfk session file (no "schema": "{SCHEMA}").')
    version = doc.get("version")
    if version != VERSION or isinstance(version, bool):
        raise SessionError(
            f"{source} has session version {shorten(repr(version), 40)}; this bnfk reads version {VERSION}."
        )
    ref = _data_ref(doc.get("data"), source, sample_dir)
    try:
        data = ref.load(sample_dir)
    except DataError as exc:
        raise SessionError(f"The data of {source} do not load: {exc}") from None
    features = data.without_class()
    dag = _structure(doc.get("structure"), features.variables, source)
    params = doc.get("params", "smoothed")
    if not isinstance(params, str) or params not in ESTIMATORS:
        raise SessionError(
            f"{source}: params {shorten(repr(params), 40)} is not one of {', '.join(ESTIMATORS)}."
        )
    if doc.get("model") is not None:
        model = _model(doc["model"], dag, features, source)
    else:
        model = fit(dag, features, method=params)
    settings, notes = check_settings(_check_settings(doc.get("settings") or {}, f"{source}: settings"))
    nets = doc.get("networks") or {}
    if not isinstance(nets, dict) or any(k not in NETWORK_NAMES for k in nets):
        raise SessionError(f'{source}: "networks" may hold only {", ".join(NETWORK_NAMES)}.')
    networks = {k: _structure(v, features.variables, f"{source} (networks.{k})") for k, v in nets.items()}
    kinds = doc.get("numbers") or {}
    if not isinstance(kinds, dict) or any(
        c not in features.variables or k not in NUMBER_KINDS for c, k in kinds.items()
    ):
        raise SessionError(
            f'{source}: "numbers" maps feature columns to {" or ".join(NUMBER_KINDS)} (the Data page\'s '
            "switches)."
        )
    return Session(
        data,
        model,
        ref,
        params,
        settings,
        source,
        tuple(f"{source}: {n}; left out." for n in notes),
        networks,
        dict(kinds),
    )


# ---------------------------------------------------------------------- validation
def _data_ref(d, source: str, sample_dir: Path) -> DataRef:
    if not isinstance(d, dict):
        raise SessionError(f'{source}: "data" must be an object naming a sample or holding a CSV.')
    opts = d.get("options") or {}
    if not isinstance(opts, dict):
        raise SessionError(f"{source}: data.options must be an object.")
    cls = opts.get("class_column")
    policy = opts.get("missing_policy", "missing")
    bins = opts.get("bins", 4)
    drop = opts.get("drop_columns", [])
    if cls is not None and not isinstance(cls, str):
        raise SessionError(f"{source}: data.options.class_column must be a column name or null.")
    if policy not in _POLICIES:
        raise SessionError(
            f"{source}: data.options.missing_policy must be 'missing' or 'category', got {policy!r}."
        )
    if isinstance(bins, bool) or not isinstance(bins, int) or not 0 <= bins <= 1000:
        raise SessionError(f"{source}: data.options.bins must be an integer from 0 to 1000, got {bins!r}.")
    if not isinstance(drop, list) or not all(isinstance(c, str) for c in drop):
        raise SessionError(f"{source}: data.options.drop_columns must be a list of column names.")
    na = opts.get("na_values", "default-list")  # a session file without na_values: the default list
    if not (
        na is None or isinstance(na, str) or (isinstance(na, list) and all(isinstance(v, str) for v in na))
    ):
        raise SessionError(f"{source}: data.options.na_values must be null, a string or a list of strings.")
    common = dict(
        class_column=cls,
        missing_policy=policy,
        bins=bins,
        drop_columns=tuple(drop),
        na_values=tuple(na) if isinstance(na, list) else na,
    )
    if "sample" in d:
        name = d["sample"]
        if not isinstance(name, str) or name not in _catalog(sample_dir):
            raise SessionError(f"{source}: data.sample {name!r} is not a bundled dataset.")
        return DataRef(sample=name, **common)
    if "textbook" in d:
        name, rows, seed = d["textbook"], d.get("rows", 2000), d.get("seed", 0)
        if not isinstance(name, str) or name not in TEXTBOOK_NETWORKS:
            raise SessionError(
                f"{source}: data.textbook {shorten(repr(name), 40)} is not one of "
                f"{', '.join(TEXTBOOK_NETWORKS)}."
            )
        for key, value in (("rows", rows), ("seed", seed)):
            spec = SETTINGS[f"textbook_{key}"]  # bounded like the app's widgets
            if isinstance(value, bool) or not isinstance(value, int) or not spec.lo <= value <= spec.hi:
                raise SessionError(
                    f"{source}: data.{key} must be a whole number from {spec.range()}, got "
                    f"{shorten(repr(value), 40)}."
                )
        return DataRef(textbook=name, rows=int(rows), seed=int(seed), **common)
    if "csv" in d or "csv_base64" in d:
        try:
            content = (
                d["csv"].encode("utf-8") if "csv" in d else base64.b64decode(d["csv_base64"], validate=True)
            )
        except (AttributeError, TypeError, binascii.Error, ValueError):
            raise SessionError(
                f"{source}: data.csv must be text (or data.csv_base64 base64 bytes)."
            ) from None
        digest = d.get("sha256")
        if digest is not None and digest != hashlib.sha256(content).hexdigest():
            raise SessionError(
                f"{source}: the embedded CSV does not match its sha256 (the file was edited or cut)."
            )
        name = d.get("name") or "embedded.csv"
        if not isinstance(name, str) or len(name) > 255:
            raise SessionError(f"{source}: data.name must be a file name (at most 255 characters).")
        return DataRef(name=name, content=content, **common)
    raise SessionError(
        f'{source}: "data" needs "sample" (a bundled dataset), "csv" (the file\'s text) or "textbook" (a '
        "textbook network's name)."
    )


def _structure(d, variables, source: str) -> DAG:
    if not isinstance(d, dict) or not isinstance(d.get("nodes"), list) or not isinstance(d.get("arcs"), list):
        raise SessionError(f'{source}: "structure" must be an object with "nodes" and "arcs" lists.')
    for k, arc in enumerate(d["arcs"]):
        if not (isinstance(arc, list) and len(arc) == 2 and all(isinstance(x, str) for x in arc)):
            raise SessionError(
                f'{source}: arc {k + 1} of "structure" must be a pair of variable names '
                f'["parent", "child"], got {shorten(json.dumps(arc), 60)}.'
            )
    try:
        dag = DAG.from_dict(d)
        return dag.over(list(variables), f"The structure of {source}")
    except (BnfkError, KeyError, TypeError, ValueError) as exc:
        raise SessionError(f"{source}: {exc}") from None


def _model(d, dag: DAG, features: CategoricalData, source: str) -> BayesNet:
    try:
        model = BayesNet.from_json_dict(d, source)
    except BnfkError as exc:
        raise SessionError(str(exc)) from None
    if list(model.variables) != list(features.variables):
        raise SessionError(f"{source}: the model's variables are not the data's feature variables.")
    if model.dag != dag:
        raise SessionError(f'{source}: the model\'s arcs differ from "structure".')
    for v, s_model, s_data in zip(model.variables, model.states, features.states):
        if tuple(s_model) != tuple(s_data):
            raise SessionError(f"{source}: the model's states of '{v}' differ from the data's.")
    return model


def _check_settings(settings, what: str) -> dict:
    if not isinstance(settings, dict):
        raise SessionError(f"{what} must be an object of name: value.")
    for k, v in settings.items():
        if not isinstance(k, str) or not _plain(v):
            raise SessionError(
                f"{what}: {k!r} must hold a number, text, true/false, null or a list of those."
            )
    return settings


def _plain(v, depth: int = 0) -> bool:
    if v is None or isinstance(v, (bool, str)):
        return True
    if isinstance(v, int):
        return True
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, list) and depth == 0:
        return all(_plain(x, 1) for x in v)
    return False
