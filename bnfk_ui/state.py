"""What the user chose (``st.session_state``) and the cached core calls built on it.

Every page calls :func:`init` first; it fills in the defaults (house_votes_84, class column
``class``, missing values as a category, a Chow–Liu tree) so each page also works when it
is opened directly in a fresh session.  Choices are stored under plain keys that no widget
owns, so they survive page switches; widgets bind to them with :func:`bind`.
"""
from __future__ import annotations

import io
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import streamlit as st

from bnfk_core import kernels
from bnfk_core.dag import DAG, apply_segment
from bnfk_core.data import CategoricalData, RawTable, load_csv, read_table
from bnfk_core.reading import printable as _printable
from bnfk_core.embed import class_order, cluster_order, kernel_pca, pair_values, sample_rows
from bnfk_core.errors import BnfkError, DataError
from bnfk_core.learn import learn_feature_structure
from bnfk_core.model import BayesNet, fit
from bnfk_core.registry import KERNELS, SCORES
from bnfk_core.kgv import raw_numbers
from bnfk_core.scores import score_dag

from . import bigdata, jobs, settings

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = ROOT / "sample_data"
DEFAULT_DATASET = "house_votes_84"
MAX_UNDO = 50
MAX_MESSAGE = 400            # the longest message shown (a core sentence echoing a huge user value is cut)
#: An upload starts as ``load_csv`` and the CLI read a file: missing tokens are missing cells (the
#: Data page can switch to "category"); a bundled sample opens with its catalog entry's policy.
UPLOAD_MISSING_POLICY = "missing"

DEFAULTS = {
    "dataset": DEFAULT_DATASET,      # a sample name or "upload"
    "upload": None,                  # (file name, bytes) of the uploaded CSV
    "server_path": None,             # the file on the server of dataset "path" (read in chunks)
    "class_column": "class",
    "missing_policy": "category",    # the catalog's policy of DEFAULT_DATASET (checked by a test)
    "bins": 4,
    "drop_columns": [],
    "pair": None,                    # (row a, row b) picked on the Kernel page
    **settings.defaults(),           # every page setting (learn_*, kernel_*, clu_*, …, memory_gib)
}
MEMORY_GIB_RANGE = (settings.SETTINGS["memory_gib"].lo, settings.SETTINGS["memory_gib"].hi)


# ---------------------------------------------------------------------- catalog
@st.cache_data(show_spinner=False)
def catalog() -> dict:
    with open(SAMPLE_DIR / "catalog.json", encoding="utf-8") as fh:
        return json.load(fh)


# ---------------------------------------------------------------------- session state
def init() -> None:
    """Fill in defaults and make sure a structure exists for the current data."""
    ss = st.session_state
    for k, v in DEFAULTS.items():
        if k not in ss:
            ss[k] = list(v) if isinstance(v, list) else v
    _apply_pending()
    if "structure" not in ss or ss.structure.get("fingerprint") != model_features().fingerprint():
        reset_structure()


def memory_limit_bytes() -> float:
    """The sidebar's memory limit in bytes (the default before the first page has set up the session)."""
    lo, hi = MEMORY_GIB_RANGE
    return min(max(float(st.session_state.get("memory_gib", DEFAULTS["memory_gib"])), lo), hi) * 2**30


def bind(key: str, on_change=None, shown=None) -> dict:
    """Widget kwargs that show and store ``st.session_state[key]`` across pages.

    The widget owns ``w_<key>``; before it is drawn it is set from the stored choice, and a
    change is copied back (and ``on_change`` called) before the next run.  ``shown`` maps the
    stored value to what the widget can display (e.g. clamped to its range).
    """
    wkey = f"w_{key}"
    value = st.session_state[key]
    st.session_state[wkey] = shown(value) if shown else value

    def _store():
        st.session_state[key] = st.session_state[wkey]
        if on_change is not None:
            on_change()
    return {"key": wkey, "on_change": _store}


def flash(kind: str, message: str) -> None:
    """Queue a message for the next run (shown by :func:`show_flash`; cut to ``MAX_MESSAGE`` characters)."""
    if len(message) > MAX_MESSAGE:
        message = message[:MAX_MESSAGE - 1] + "…"
    st.session_state.setdefault("flash", []).append((kind, message))


def show_flash() -> None:
    for kind, msg in st.session_state.pop("flash", []):
        getattr(st, kind)(msg)


# ---------------------------------------------------------------------- data
def data_settings(**override) -> dict:
    ss = st.session_state
    s = {"dataset": ss.dataset, "class_column": ss.class_column, "missing_policy": ss.missing_policy,
         "bins": int(ss.bins), "drop_columns": tuple(ss.drop_columns), "na_values": ss.get("na_values")}
    s.update(override)
    return s


def _source(dataset: str):
    if dataset == "path":
        raise DataError("A file on the server is read in chunks, not as a whole.")
    if dataset == "upload":
        up = st.session_state.get("upload")
        if up is None:
            raise DataError("No CSV has been uploaded yet.")
        return up
    cat = catalog()
    if dataset not in cat:
        raise DataError(f"There is no bundled dataset called '{dataset}'.")
    return (cat[dataset]["file"], None)


@st.cache_resource(show_spinner=False, max_entries=32)
def _load(name: str, content: bytes | None, class_column, missing_policy, bins, drop_columns,
          na_values=None) -> CategoricalData:
    src = str(SAMPLE_DIR / name) if content is None else io_bytes(name, content)
    return load_csv(src, class_column=class_column, missing_policy=missing_policy,
                    discretize_bins=bins or None, drop_columns=drop_columns, na_values=na_values)


def na_values_of(settings: dict):
    """Which cell texts are missing: a sample's catalog list, else the Data page's choice (``na_values``:
    None = the empty field only, ``"default-list"``, or a comma list; :func:`bnfk_core.data.na_set`)."""
    entry = catalog().get(settings["dataset"])
    if entry is not None:
        return entry.get("na_values")
    return settings.get("na_values")


def load(settings: dict) -> CategoricalData:
    """The table of ``settings`` as the pages that work on rows see it: the whole file, or for a large one
    (:func:`streamed`) a seeded sample of its rows (``view_rows``, ``view_seed``)."""
    if streamed(settings) is not None:
        w = full_data(settings)
        ss = st.session_state
        return _sampled(w, w.fingerprint(), int(ss.view_rows), int(ss.view_seed))
    name, content = _source(settings["dataset"])
    return _load(name, content, settings["class_column"], settings["missing_policy"], settings["bins"],
                 tuple(settings["drop_columns"]), na_values_of(settings))


def data() -> CategoricalData:
    """The current dataset (class column included): all rows, or the sample of a large file's rows."""
    return load(data_settings())


# ---------------------------------------------------------------------- large files (bnfk_ui.bigdata)
def _upload_info(content: bytes, want_file: bool = False) -> tuple:
    """(data rows, file on the server or None) of an upload, computed once per uploaded file."""
    ss = st.session_state
    memo = ss.get("_upload_info")
    if memo is None or memo[0] is not content:
        memo = (content, bigdata.count_lines(content), None)
    if want_file and memo[2] is not None and not bigdata.touch_upload(memo[2]):
        memo = (content, memo[1], None)        # removed by the store's caps meanwhile: written again
    if want_file and memo[2] is None:
        memo = (content, memo[1], bigdata.upload_file(ss.upload[0], content))
    ss._upload_info = memo
    return memo[1], memo[2]


def streamed(settings: dict | None = None) -> tuple[str, str] | None:
    """``(file, source name)`` when the data of ``settings`` are a large file -- a path on the server, or an
    upload with more than ``stream_rows`` rows -- read in chunks and fitted on all rows; else None."""
    ss = st.session_state
    dataset = (settings or data_settings())["dataset"]
    if dataset == "path":
        if not ss.get("server_path"):
            raise DataError("No file on the server has been chosen yet; give its name on the Data page.")
        path = bigdata.server_file(ss.server_path)     # the operator's policy, on every use
        return path, os.path.basename(path)
    up = ss.get("upload")
    if dataset == "upload" and up is not None and _upload_info(up[1])[0] > int(ss.stream_rows):
        return _upload_info(up[1], want_file=True)[1], up[0]
    return None


def _options(s: dict) -> tuple:
    return (s["class_column"], s["missing_policy"], int(s["bins"]), tuple(s["drop_columns"]))


def read_options() -> tuple:
    """The options the current data are read with: (class column, missing policy, bins, drop columns)."""
    return _options(data_settings())


def full_data(settings: dict | None = None, progress=None) -> CategoricalData:
    """All rows: a large file's distinct rows with their multiplicities (``WeightedData``, read in chunks
    under a progress bar when the server does not hold it yet), else :func:`data`."""
    s = settings or data_settings()
    big = streamed(s)
    if big is None:
        return load(s)
    w = bigdata.cached(big[0], _options(s))
    if w is not None:
        return w
    holder: dict = {}

    def report(fraction, message):
        if "bar" not in holder:
            holder["bar"] = st.progress(0.0)
        jobs.progress(holder["bar"])(fraction, message)
    try:
        with jobs.heavy(f"reading {big[1]}"):
            return bigdata.read(big[0], big[1], _options(s), progress or report)
    finally:
        if "bar" in holder:
            holder["bar"].empty()


@st.cache_resource(show_spinner=False, max_entries=8)
def _sampled(_w, fingerprint: str, n: int, seed: int) -> CategoricalData:
    return _w.sample_rows(n, seed)


@st.cache_resource(show_spinner=False, max_entries=8)
def _features(_w, fingerprint: str):
    f = _w.without_class()
    f.fingerprint()
    return f


def model_features() -> CategoricalData:
    """The features the structure is learned and the CPTs are fitted on: all rows (weighted for a large file)."""
    w = full_data()
    return _features(w, w.fingerprint()) if streamed() is not None else w.without_class()


def sample_note() -> str | None:
    """For a large file, the sentence the pages that work on rows show; else None."""
    if streamed() is None:
        return None
    return bigdata.sample_sentence(full_data().n_rows, data().n_rows, int(st.session_state.view_seed))


def _apply_pending() -> None:
    """Data options chosen for a large file (in a widget callback, where no progress bar can be drawn) are
    applied here, at the start of the page run: the file is read under a progress bar, then the options are
    taken; options it cannot be read with are named in an error and the old ones kept."""
    changes = st.session_state.pop("pending_data", None)
    if changes:
        try:
            full_data(data_settings(**changes))
        except BnfkError as exc:
            flash("error", str(exc))
            return
        change_data(**changes)


def use_file(path: str, *, dataset: str = "path", name: str | None = None) -> None:
    """Switch to a large file (a path on the server, or a big upload written to one): read in chunks under a
    progress bar, class column guessed as for an upload, a column the loader refuses dropped (and named);
    then a Chow–Liu tree is learned on all rows.  A DataError (naming the file) leaves the current data."""
    ss = st.session_state
    path = bigdata.server_file(path) if dataset == "path" else bigdata.resolve(path)
    name = name or os.path.basename(path)
    header = bigdata.header(path, name)
    cls = next((c for c in header if c.lower() in ("class", "label", "target", "y")), None)
    drop: list[str] = []
    bar = st.progress(0.0, text=f"Reading {name}…")
    try:
        with jobs.heavy(f"reading {name}"):
            for _ in range(10):
                try:
                    w = bigdata.read(path, name, (cls, UPLOAD_MISSING_POLICY, int(ss.bins), tuple(drop)),
                                     jobs.progress(bar))
                    break
                except DataError as exc:
                    m = _CULPRIT.search(str(exc))
                    if m and m.group(1) in header and m.group(1) not in drop and m.group(1) != cls:
                        flash("error", f"{exc} It was dropped so that the rest of {name} loads.")
                        drop.append(m.group(1))
                        continue
                    raise
            else:
                raise DataError(f"{name} has too many unusable columns; drop them and load it again.")
            if dataset == "path":
                ss.server_path = path
            ss.dataset, ss.class_column, ss.drop_columns = dataset, cls, drop
            ss.missing_policy = UPLOAD_MISSING_POLICY
            bar.progress(1.0, text=f"Learning a Chow–Liu tree on all {w.n_rows:,} rows…")
            reset_structure()
    finally:
        bar.empty()
    flash("success", f"Loaded {name}: {w.n_rows:,} rows ({w.n_distinct:,} distinct) × {w.n_vars} variables, read "
          "in chunks; the network is fitted on all rows, the pages that work on rows use a seeded sample of "
          f"{min(int(ss.view_rows), w.n_rows):,}."
          + (f" Class column '{cls}'." if cls else " Choose a class column on the Data page if it has one."))


@st.cache_resource(show_spinner=False, max_entries=8)
def _raw_table(name: str, content: bytes | None) -> RawTable:
    return read_table(SAMPLE_DIR / name if content is None else io_bytes(name, content))


def raw_table() -> RawTable:
    """The current dataset's file as written (every cell's text), for writing it back with only the
    imputed cells changed."""
    big = streamed()
    if big is not None:
        raise DataError(f"The app writes back only files it holds in memory; {_printable(big[1])} is read in chunks, "
                        f"so complete it on the Imputation page or with: python -m bnfk_core impute {_printable(big[1])}.")
    return _raw_table(*_source(data_settings()["dataset"]))


def complete_rows() -> int:
    """Rows without missing feature cells among all rows (the rows the scores are computed on)."""
    f = model_features()
    ok = f.complete_rows()
    w = getattr(f, "weights", None)
    return int(ok.sum() if w is None else w[ok].sum())


def feature_data() -> CategoricalData:
    """The kernel's feature columns: the data without the class column."""
    return data().without_class()


def cli_data_args(label_flag: str = "--label-column") -> list[str]:
    """The current data as arguments of ``python -m bnfk_core SUBCOMMAND``: the CSV (``DATA.csv`` for an
    upload) and the loading options that differ from the command line's defaults, so the command reads the
    same table as the app."""
    ss = st.session_state
    args = [f"$BNFK_DATA_DIR/{server_name()}" if ss.dataset == "path" else "DATA.csv" if ss.dataset == "upload"
            else f"sample_data/{catalog()[ss.dataset]['file']}"]
    if ss.class_column:
        args += [label_flag, ss.class_column]
    if ss.missing_policy != "missing":
        args += ["--missing-policy", ss.missing_policy]
    na = na_values_of(data_settings())
    if na is not None and not (na == "default-list" and ss.missing_policy == "category"):
        args += ["--na-values", na if isinstance(na, str) else ",".join(na)]
    if int(ss.bins) != 4:
        args += ["--discretize", str(int(ss.bins))]
    if ss.drop_columns:
        args += ["--drop-columns", ",".join(ss.drop_columns)]
    return args


def server_name() -> str:
    """The current file on the server as visitors see it: its name in the operator's data folder."""
    p = st.session_state.get("server_path")
    return bigdata.shown_path(p) if p else ""


def change_data(**changes) -> bool:
    """Apply data settings if they load; otherwise keep the old ones and flash the error."""
    new = data_settings(**changes)
    ss = st.session_state
    try:
        big = streamed(new)
        if big is not None and bigdata.cached(big[0], _options(new)) is None:
            ss.pending_data = changes      # read under a progress bar at the start of the next run
            return True
        full_data(new) if big is not None else load(new)
    except BnfkError as exc:
        flash("error", str(exc))
        return False
    for k, v in changes.items():
        ss[k] = list(v) if k == "drop_columns" else v
    if ss.get("structure", {}).get("fingerprint") != model_features().fingerprint():
        reset_structure()
    return True


_CULPRIT = re.compile(r"Column '([^']+)'")


def use_upload(name: str, content: bytes) -> None:
    """Switch to an uploaded CSV.

    A column the loader refuses (an identifier, free text) is named in an error and dropped
    so the rest of the file loads; a file that cannot be read at all leaves the current
    dataset in place.
    """
    ss = st.session_state
    old = ss.get("upload")
    ss.upload = (name, content)
    if bigdata.count_lines(content) > int(ss.stream_rows):     # a large upload: read in chunks
        try:
            use_file(_upload_info(content, want_file=True)[1], dataset="upload", name=name)
        except DataError as exc:
            flash("error", str(exc))
            ss.upload = old
        return
    cls = None
    try:
        header = load_csv(io_bytes(name, content), discretize_bins=ss.bins or None, max_levels=10**9)
        cls = next((c for c in header.variables if c.lower() in ("class", "label", "target", "y")), None)
    except BnfkError:
        header = None
    drop: list[str] = []
    for _ in range(10):
        try:
            d = load({"dataset": "upload", "class_column": cls, "missing_policy": UPLOAD_MISSING_POLICY,
                      "bins": ss.bins, "drop_columns": tuple(drop)})
            break
        except DataError as exc:
            m = _CULPRIT.search(str(exc))
            if header is not None and m and m.group(1) in header.variables and m.group(1) not in drop \
                    and m.group(1) != cls:
                flash("error", f"{exc} It was dropped so that the rest of {name} loads.")
                drop.append(m.group(1))
                continue
            flash("error", str(exc))
            ss.upload = old
            return
    else:
        flash("error", f"{name} has too many unusable columns; drop them and upload it again.")
        ss.upload = old
        return
    ss.dataset, ss.class_column, ss.drop_columns = "upload", cls, drop
    ss.missing_policy = UPLOAD_MISSING_POLICY
    reset_structure()
    flash("success", f"Loaded {name}: {d.n_rows:,} rows × {d.n_vars} variables"
          + (f", class column '{cls}'." if cls else "; choose a class column on the Data page if it has one."))


def io_bytes(name: str, content: bytes):
    b = io.BytesIO(content)
    b.name = name
    return b


def use_sample(name: str) -> None:
    entry = catalog()[name]
    change_data(dataset=name, class_column=entry.get("class_column"),
                missing_policy=entry.get("missing_policy", "missing"), drop_columns=[])


# ---------------------------------------------------------------------- structure
def dag() -> DAG:
    return DAG.from_dict(st.session_state.structure["dag"])


def dag_json(d: DAG | None = None) -> str:
    return json.dumps((d or dag()).to_dict(), sort_keys=True)


def structure_label() -> str:
    return st.session_state.structure.get("label", "")


@st.cache_resource(show_spinner=False, max_entries=64)
def _learn_cached(_data: CategoricalData, fingerprint: str, method: str, score: str, k: int, max_parents,
                  seed: int):
    return learn_feature_structure(_data, method, score=score, k=k, max_parents=max_parents, seed=seed)


def learn(method: str, score: str = "bic", k: int = 2, max_parents: int | None = None, seed: int = 0,
          progress=None):
    """Learn a structure on the current features, all rows (cached when no progress callback is given)."""
    d = full_data()
    if progress is None:
        return _learn_cached(d, d.fingerprint(), method, score, int(k), max_parents, int(seed))
    return learn_feature_structure(d, method, score=score, k=int(k), max_parents=max_parents, seed=int(seed),
                                   progress=progress)


def reset_structure() -> None:
    """The default structure (Chow–Liu tree) for the current features; clears the undo stack."""
    ss = st.session_state
    feat = model_features()
    res = learn("tree", "bic")
    ss.structure = {"dag": res.dag.to_dict(), "fingerprint": feat.fingerprint(),
                    "label": "Chow–Liu tree (learned)", "learned": res.dag.to_dict(),
                    "learned_label": "Chow–Liu tree", "notes": list(res.notes), "undo": [], "redo": [],
                    "segment": None}
    ss.pair = None


def set_dag(new: DAG, label: str, *, segment=None, learned: bool = False, notes=None) -> None:
    """Replace the structure, pushing the old one on the undo stack."""
    s = dict(st.session_state.structure)
    undo = list(s["undo"]) + [(s["dag"], s["label"], s.get("segment"))]
    s.update(dag=new.to_dict(), label=label, undo=undo[-MAX_UNDO:], redo=[], segment=segment)
    if learned:
        s.update(learned=new.to_dict(), learned_label=label, notes=list(notes or []))
    st.session_state.structure = s


def undo() -> bool:
    """Back to the structure before the last change (which :func:`redo` brings back)."""
    s = dict(st.session_state.structure)
    if not s["undo"]:
        return False
    d, label, seg = s["undo"][-1]
    redo_stack = list(s.get("redo", [])) + [(s["dag"], s["label"], s.get("segment"))]
    s.update(dag=d, label=label, segment=seg, undo=s["undo"][:-1], redo=redo_stack[-MAX_UNDO:])
    st.session_state.structure = s
    return True


def redo() -> bool:
    """Re-apply the change the last :func:`undo` took back."""
    s = dict(st.session_state.structure)
    if not s.get("redo"):
        return False
    d, label, seg = s["redo"][-1]
    undo_stack = list(s["undo"]) + [(s["dag"], s["label"], s.get("segment"))]
    s.update(dag=d, label=label, segment=seg, undo=undo_stack[-MAX_UNDO:], redo=s["redo"][:-1])
    st.session_state.structure = s
    return True


def edit(kind: str, u: str, v: str) -> None:
    """Add / remove / reverse the arc u -> v (StructureError on a cycle)."""
    d = dag()
    new = {"add": d.add_arc, "remove": d.remove_arc, "reverse": d.reverse_arc}[kind](u, v)
    word = {"add": f"added {u} → {v}", "remove": f"removed {u} → {v}", "reverse": f"reversed {u} → {v}"}[kind]
    seg = ("single-arc", (u, v) if kind == "add" else (v, u)) if kind != "remove" else None
    set_dag(new, f"edited ({word})", segment=seg)


def segment(kind: str, variables) -> None:
    new = apply_segment(dag(), kind, list(variables))
    set_dag(new, f"edited ({kind} segment on {', '.join(variables)})", segment=(kind, tuple(variables)))


# ---------------------------------------------------------------------- model and scores
@st.cache_resource(show_spinner=False, max_entries=64)
def _fit(_feat: CategoricalData, fingerprint: str, dag_key: str, method: str) -> BayesNet:
    return fit(DAG.from_dict(json.loads(dag_key)), _feat, method=method)


def model(d: DAG | None = None) -> BayesNet:
    """The current structure (or ``d``) fitted to the features (all rows) with the chosen parameter method."""
    feat = model_features()
    return _fit(feat, feat.fingerprint(), dag_json(d), st.session_state.param_method)


@st.cache_data(show_spinner=False, max_entries=256)
def _scores(_feat: CategoricalData, fingerprint: str, dag_key: str) -> dict:
    d = DAG.from_dict(json.loads(dag_key))
    w = getattr(_feat, "weights", None)
    raw = raw_numbers(_feat)   # the KGV score searches numbers unbinned
    return {s: float(score_dag(_feat.codes, _feat.cardinalities, d, s, weights=w, numbers=raw)) for s in SCORES}


def scores(d: DAG | None = None) -> dict:
    feat = model_features()
    return _scores(feat, feat.fingerprint(), dag_json(d))


# ---------------------------------------------------------------------- kernels
@dataclass(frozen=True)
class GramResult:
    K: np.ndarray
    rows: np.ndarray        # indices into the data
    labels: np.ndarray      # class codes of those rows (-1 missing / no class)


def kernel_rows() -> np.ndarray:
    ss = st.session_state
    return sample_rows(data().n_rows, int(ss.kernel_rows), int(ss.kernel_seed))


@st.cache_data(show_spinner=False, max_entries=32)
def _gram(_model: BayesNet, model_key: str, _feat: CategoricalData, fingerprint: str, rows_key: tuple,
          kind: str, normalize: bool) -> np.ndarray:
    rows = sample_rows(_feat.n_rows, rows_key[0], rows_key[1])
    return kernels.gram(_model, _feat.subset(rows), kind=kind, normalize=normalize)


def session_network(m: BayesNet, kind: str) -> tuple[BayesNet, str]:
    """``(network, kind)`` to compute the kernel ``kind`` with: for ``lca-fisher`` the model the Latent classes page
    handed over (``lca_network``, for the current features), else ``(m, kind)``."""
    lat = st.session_state.get("lca_network")
    if kind == "lca-fisher" and lat and lat[0] == feature_data().fingerprint():
        return lat[1], kind
    return m, kind


def gram_matrix(m: BayesNet, kind: str | None = None) -> GramResult:
    """The Gram matrix of the sampled rows for model ``m`` (KernelError when too large)."""
    ss = st.session_state
    feat = feature_data()
    m, kind = session_network(m, kind or ss.kernel_kind)
    if kind == "lca-fisher" and (m.fit_info or {}).get("hidden"):   # the handed-over network's Fisher kernel (the
        kind = kernels.FISHER                                       # class always missing) IS the latent-class one
    K = _gram(m, m.key(), feat, feat.fingerprint(), (int(ss.kernel_rows), int(ss.kernel_seed)), kind,
              bool(ss.kernel_normalize))
    rows = kernel_rows()
    d = data()
    labels = d.codes[rows, d.index(d.class_column)] if d.class_column else np.full(len(rows), -1)
    return GramResult(K, rows, labels)


@st.cache_data(show_spinner=False, max_entries=32)
def kernel_analysis(K: np.ndarray, labels: np.ndarray, order_kind: str, has_class: bool) -> dict:
    """Row order, kernel-PCA coordinates and pair values of a Gram matrix (cached on its content)."""
    if order_kind == "data":
        order = np.arange(K.shape[0])
    elif order_kind == "class" and has_class:
        order = class_order(labels, K)
    else:
        order = cluster_order(K)
    return {"order": order, "pca": kernel_pca(K, 2), "pairs": pair_values(K, labels if has_class else None)}


@st.cache_resource(show_spinner=False, max_entries=32)
def _fitted(_model: BayesNet, model_key: str, _feat: CategoricalData, fingerprint: str, rows_key: tuple, kind: str):
    return KERNELS[kind].fit(_feat.subset(sample_rows(_feat.n_rows, rows_key[0], rows_key[1])), model=_model)


def fitted_kernel(m: BayesNet, kind: str | None = None):
    """The kernel ``kind`` (default: the chosen one) fitted as for :func:`gram_matrix`: on the sampled rows,
    a network kernel on the network ``m``."""
    ss = st.session_state
    feat = feature_data()
    m, kind = session_network(m, kind or ss.kernel_kind)
    return _fitted(m, m.key(), feat, feat.fingerprint(), (int(ss.kernel_rows), int(ss.kernel_seed)), kind)


def contributions(m: BayesNet, a: int, b: int, kind: str | None = None) -> tuple[tuple, np.ndarray]:
    """``(variables, K_i(a, b))``: the per-variable terms of the (unnormalised) kernel of data rows a and b."""
    fk = fitted_kernel(m, kind)
    feat = feature_data()
    return tuple(fk.variables), fk.contributions(feat.subset([a]), feat.subset([b]))


#: structures the Kernel page compares the Fisher kernel of the current one with: name -> (label, short title)
NETWORKS = {"empty": ("the empty network", "empty network"), "tree": ("a Chow–Liu tree", "Chow–Liu tree"),
            "hc": ("hill climbing (BIC)", "hill climbing"), "learned": ("the last learned structure", "last learned"),
            "previous": ("the structure before the last edit", "before last edit")}


def comparison_choices() -> dict:
    """``{name: label}`` of the Kernel page's comparison: the Fisher kernel of each of :data:`NETWORKS`, then
    every kernel of the registry that does not depend on the structure."""
    fisher = KERNELS[kernels.FISHER].label
    return ({k: f"{fisher} kernel of {v[0]}" for k, v in NETWORKS.items()}
            | {n: f"{KERNELS[n].label} kernel" for n in KERNELS.names(uses_network=False)})


def comparison_gram(choice: str) -> tuple[np.ndarray, str, BayesNet | None]:
    """The comparison Gram matrix of ``choice`` (see :func:`comparison_choices`), its title and its network."""
    ss = st.session_state
    if choice in KERNELS and not KERNELS[choice].uses_network:
        return gram_matrix(model(), kind=choice).K, KERNELS[choice].label, None
    if choice == "empty":
        d = DAG(feature_data().variables)
    elif choice in ("tree", "hc"):
        with st.spinner(f"Learning {NETWORKS[choice][0]}…"):
            d = learn(choice, "bic").dag
    elif choice == "learned":
        d = DAG.from_dict(ss.structure["learned"])
    else:
        undo = ss.structure["undo"]
        d = DAG.from_dict(undo[-1][0]) if undo else dag()
    m = model(d)
    return gram_matrix(m, kind=kernels.FISHER).K, f"{KERNELS[kernels.FISHER].label}: {NETWORKS[choice][1]} " \
        f"({d.n_arcs} arcs)", m


def default_pair(K: np.ndarray, rows) -> tuple[int, int]:
    """The picked rows (A, B) if both are among ``rows``, else row A = the first row and B = the row most
    similar to it (cosine); stored in ``st.session_state.pair``."""
    ss = st.session_state
    rows = [int(r) for r in rows]
    if not (ss.pair and ss.pair[0] in rows and ss.pair[1] in rows):
        dg = np.sqrt(np.maximum(np.diag(K), 1e-300))
        cos = K[0] / (dg[0] * dg)
        cos[0] = -np.inf
        ss.pair = (rows[0], rows[int(np.argmax(cos))] if len(rows) > 1 else rows[0])
    return ss.pair


def pick_pair(chart_key: str):
    """An ``on_select`` callback for a map whose points carry row ids: a clicked row becomes row A and the
    previous A row B; a box or lasso around two points picks both."""
    def cb():
        sel = st.session_state.get(chart_key)
        points = (sel or {}).get("selection", {}).get("points", []) if sel else []
        picked = []
        for p in points:
            c = p.get("customdata")
            if isinstance(c, (list, tuple)):
                c = c[0] if c else None
            if c is not None and int(c) not in picked:
                picked.append(int(c))
        if not picked:
            return
        old = st.session_state.pair or (None, None)
        a, b = (picked[0], picked[1]) if len(picked) >= 2 else (picked[0], old[0] if old[0] != picked[0] else old[1])
        st.session_state.pair = (a, b if b is not None else a)
    return cb
