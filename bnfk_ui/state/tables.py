"""The table the pages work on: a bundled sample or an upload read in memory, or a large file's distinct rows
(weighted) and the seeded sample of them the row views use; its feature columns and the file as written."""

from __future__ import annotations

import io
import threading

import streamlit as st

from bnfk_core.data.reading import printable as _printable
from bnfk_core.data.table import CategoricalData, RawTable, load_csv, read_table
from bnfk_core.errors import BnfkError, DataError
from bnfk_core.network.model import BayesNet
from bnfk_core.network.textbook import TEXTBOOK_NETWORKS as TEXTBOOK_NAMES
from bnfk_core.network.textbook import textbook_network, textbook_sample

from .. import bigdata
from . import bigfiles
from .bigfiles import features_of, sampled, streamed
from .choices import SAMPLE_DIR, catalog, data_settings, na_values_of, textbook_of

__all__ = [
    "io_bytes",
    "network_of",
    "load",
    "data",
    "full_data",
    "model_features",
    "feature_data",
    "sample_note",
    "raw_table",
    "complete_rows",
]


def _source(dataset: str):
    """``(file name, bytes or None)`` of a sample or the upload; a large file is never read whole."""
    if dataset == "path":
        raise DataError("A file on the server is read in chunks, not as a whole.")
    name = textbook_of(dataset)
    if name is not None:
        raise DataError(
            f"The rows sampled from {name} are no file; download them from the Data page (Data as loaded)."
        )
    if dataset == "upload":
        up = st.session_state.get("upload")
        if up is None:
            raise DataError("No CSV has been uploaded yet.")
        return up
    cat = catalog()
    if dataset not in cat:
        raise DataError(f"There is no bundled dataset called '{dataset}'.")
    return (cat[dataset]["file"], None)


def io_bytes(name: str, content: bytes):
    """An uploaded file's bytes as a named file object (the loaders read its name for messages)."""
    b = io.BytesIO(content)
    b.name = name
    return b


@st.cache_resource(show_spinner=False, max_entries=32)
def _load(
    name: str, content: bytes | None, class_column, missing_policy, bins, drop_columns, na_values=None
) -> CategoricalData:
    src = str(SAMPLE_DIR / name) if content is None else io_bytes(name, content)
    return load_csv(
        src,
        class_column=class_column,
        missing_policy=missing_policy,
        discretize_bins=bins or None,
        drop_columns=drop_columns,
        na_values=na_values,
    )


def load(settings: dict) -> CategoricalData:
    """The table of ``settings`` as the pages that work on rows see it: the whole file, or for a large one
    (:func:`streamed`) a seeded sample of its rows (``view_rows``, ``view_seed``)."""
    if streamed(settings) is not None:
        w = full_data(settings)
        ss = st.session_state
        return sampled(w, w.fingerprint(), int(ss.view_rows), int(ss.view_seed))
    network = textbook_of(settings["dataset"])
    if network is not None:
        return _textbook_table(
            network,
            int(settings.get("textbook_rows", 2000)),
            int(settings.get("textbook_seed", 0)),
            settings["class_column"],
            tuple(settings["drop_columns"]),
        )
    name, content = _source(settings["dataset"])
    na = na_values_of(settings)
    args = (
        name,
        content,
        settings["class_column"],
        settings["missing_policy"],
        settings["bins"],
        tuple(settings["drop_columns"]),
        na,
    )
    key = (name, id(content), *args[2:6], tuple(na) if isinstance(na, list) else na)
    hit = _TABLES.get(key)
    if (
        hit is not None and hit[0] is content
    ):  # the same bytes object (kept in the entry, so its id is not reused)
        return hit[1]
    table = _load(*args)
    table.keep_fingerprint()  # shared by every session, never changed
    with _TABLES_LOCK:
        _TABLES[key] = (content, table)
        while len(_TABLES) > MAX_TABLES or (
            len(_TABLES) > 1 and sum(len(c) for c, _ in _TABLES.values() if c is not None) > MAX_TABLE_BYTES
        ):
            _TABLES.pop(next(iter(_TABLES)))
    return table


#: the tables :func:`load` handed out, by their reading arguments (an upload's bytes by identity, kept in the
#: entry so that their id is not reused): every page asks for the table several times a run, and Streamlit's
#: cache hashes its arguments (an upload's bytes included) on every call -- a tenth of a class's server time.
#: At most MAX_TABLES entries holding at most MAX_TABLE_BYTES of uploads (the oldest dropped first).
_TABLES: dict = {}
_TABLES_LOCK = threading.Lock()
MAX_TABLES = 32
MAX_TABLE_BYTES = 256 * 2**20


@st.cache_resource(show_spinner=False, max_entries=len(TEXTBOOK_NAMES))
def network_of(name: str) -> BayesNet:
    """The textbook network ``name`` with its CPTs (:func:`~bnfk_core.network.textbook.textbook_network`),
    read once for the whole server: a network is never changed."""
    return textbook_network(name)


#: the rows sampled from a textbook network, by (network, rows, seed, class column, dropped columns): the
#: table depends on nothing of a session, so every session of the server shares it (the oldest dropped first)
_SAMPLES: dict = {}
MAX_SAMPLES = 16


def _textbook_table(name: str, rows: int, seed: int, class_column, drop_columns: tuple) -> CategoricalData:
    """The table of ``rows`` rows sampled from the textbook network ``name`` with ``seed``
    (:func:`~bnfk_core.network.textbook.textbook_sample`), ``class_column`` and ``drop_columns`` applied
    (a DataError names a column it does not have)."""
    key = (name, rows, seed, class_column, drop_columns)
    hit = _SAMPLES.get(key)
    if hit is not None:
        return hit
    try:
        table = textbook_sample(name, rows, seed, network=network_of(name))
        if drop_columns:
            table = table.drop(drop_columns)
        table = table.with_class(class_column)
    except BnfkError as exc:
        raise DataError(str(exc)) from None
    table.keep_fingerprint()  # shared by every session, never changed
    with _TABLES_LOCK:
        while len(_SAMPLES) >= MAX_SAMPLES:
            _SAMPLES.pop(next(iter(_SAMPLES)))
        _SAMPLES[key] = table
    return table


def data() -> CategoricalData:
    """The current dataset (class column included): all rows, or the sample of a large file's rows."""
    return load(data_settings())


def full_data(settings: dict | None = None, progress=None) -> CategoricalData:
    """All rows: a large file's distinct rows with their multiplicities (``WeightedData``, read in chunks
    under a progress bar when the server does not hold it yet), else :func:`data`."""
    s = settings or data_settings()
    big = streamed(s)
    return load(s) if big is None else bigfiles.read_whole(big, s, progress)


#: the feature table of each cached table, shared by every session (the tables are cached resources, never
#: changed): ``id(table) -> (table, its features)``, the table kept so that its id is not reused
_FEATURES: dict = {}
_FEATURES_LOCK = threading.Lock()
MAX_FEATURE_TABLES = 32


def without_class(d: CategoricalData) -> CategoricalData:
    """``d.without_class()`` once per table for the whole server: the pages ask for the features many times a
    run and every session of a class asks for the same ones (copying them was a sixth of a class's time)."""
    hit = _FEATURES.get(id(d))
    if hit is not None and hit[0] is d:
        return hit[1]
    feats = d.without_class().keep_fingerprint()
    with _FEATURES_LOCK:
        while len(_FEATURES) >= MAX_FEATURE_TABLES:
            _FEATURES.pop(next(iter(_FEATURES)))
        _FEATURES[id(d)] = (d, feats)
    return feats


def model_features() -> CategoricalData:
    """The features the structure is learned and the CPTs are fitted on: all rows (weighted for a large
    file)."""
    w = full_data()
    return features_of(w, w.fingerprint()) if streamed() is not None else without_class(w)


def feature_data() -> CategoricalData:
    """The kernel's feature columns: the data without the class column."""
    return without_class(data())


def sample_note() -> str | None:
    """For a large file, the sentence the pages that work on rows show; else None."""
    if streamed() is None:
        return None
    return bigdata.sample_sentence(full_data().n_rows, data().n_rows, int(st.session_state.view_seed))


@st.cache_resource(show_spinner=False, max_entries=8)
def _raw_table(name: str, content: bytes | None) -> RawTable:
    return read_table(SAMPLE_DIR / name if content is None else io_bytes(name, content))


def raw_table() -> RawTable:
    """The current dataset's file as written (every cell's text), for writing it back with only the
    imputed cells changed."""
    big = streamed()
    if big is not None:
        raise DataError(
            f"The app writes back only files it holds in memory; {_printable(big[1])} is read in chunks, "
            f"so complete it on the Imputation page or with: python -m bnfk_core impute {_printable(big[1])}."
        )
    return _raw_table(*_source(data_settings()["dataset"]))


def complete_rows() -> int:
    """Rows without missing feature cells among all rows (the rows the scores are computed on)."""
    f = model_features()
    ok = f.complete_rows()
    w = getattr(f, "weights", None)
    return int(ok.sum() if w is None else w[ok].sum())
