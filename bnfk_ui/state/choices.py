"""The visitor's choices (``st.session_state``): their defaults (:data:`DEFAULTS`, one table of every
widget key and its default, which every page reads) and the widgets bound to them.

Choices are stored under plain keys that no widget owns, so they survive page switches; widgets bind to them
with :func:`bind`.  :func:`data_settings` are the choices that say which table the pages work on.
"""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st

from bnfk_core.data.samples import hybrid_entries
from bnfk_core.kernels.fisher import FISHER, FISHER_NORMALIZED
from bnfk_core.network.textbook import TEXTBOOK_NETWORKS
from bnfk_core.registry import KERNELS
from bnfk_core.serving import settings

from .. import bigdata

__all__ = [
    "ROOT",
    "SAMPLE_DIR",
    "DEFAULT_DATASET",
    "TEXTBOOK_PREFIX",
    "textbook_of",
    "UPLOAD_MISSING_POLICY",
    "DEFAULTS",
    "ensure",
    "MEMORY_GIB_RANGE",
    "catalog",
    "memory_limit_bytes",
    "bind",
    "data_settings",
    "read_options",
    "na_values_of",
    "server_name",
    "cli_data_args",
]


ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DIR = ROOT / "sample_data"
DEFAULT_DATASET = "house_votes_84"
#: An upload starts as ``load_csv`` and the CLI read a file: missing tokens are missing cells (the
#: Data page can switch to "category"); a bundled sample opens with its catalog entry's policy.
UPLOAD_MISSING_POLICY = "missing"
#: the dataset of rows sampled from a textbook network is ``TEXTBOOK_PREFIX + name`` (``textbook:asia``),
#: its rows and seed the settings ``textbook_rows`` and ``textbook_seed``
TEXTBOOK_PREFIX = "textbook:"

#: every widget key (and every other choice) -> its default: the one table the pages read (:func:`ensure`);
#: the settings a link or session file carries come from the registry of :mod:`bnfk_core.serving.settings`
DEFAULTS = {
    "dataset": DEFAULT_DATASET,  # a sample name, "upload", "path" or "textbook:<network>"
    "upload": None,  # (file name, bytes) of the uploaded CSV
    "server_path": None,  # the file on the server of dataset "path" (read in chunks)
    "class_column": "class",
    "missing_policy": "category",  # the catalog's policy of DEFAULT_DATASET (checked by a test)
    "bins": 4,
    "drop_columns": [],
    "pair": None,  # (row a, row b) picked on the Kernel page
    **settings.defaults(),  # every page setting (learn_*, kernel_*, clu_*, …, memory_gib)
    # the Imputation page's benchmark (bounded by the registry: a report or session file reads them too)
    **{k: s.default for k, s in settings.REPORT_SETTINGS.items() if k.startswith("imp_")},
    # the Compare page (not carried by links)
    "cmp_vars": None,  # the segment's three variables; None: the table's first three
    "cmp_rows": 200,  # rows sampled (the page clamps them to the table, at most 1,000)
    "cmp_seed": 0,
    "cmp_kernel": FISHER,
    "cmp_alpha": float(KERNELS[FISHER_NORMALIZED].option("alpha").default),  # the kernel's declared power
    # the Prototypes page's learning curve: the subset sizes typed ("": the page's default sizes)
    "proto_ks": "",
}
MEMORY_GIB_RANGE = (settings.SETTINGS["memory_gib"].lo, settings.memory_ceiling_gib())


_CATALOG: list = [None, None]  # [modification times, the parsed catalog]


def catalog() -> dict:
    """The bundled samples (``sample_data/catalog.json``, then the mixed tables of ``sample_data/hybrid/``),
    read again only when a file changes (every page asks for it several times a run).  The dict is shared by
    every session: read it, never change it."""
    path, mixed = SAMPLE_DIR / "catalog.json", SAMPLE_DIR / "hybrid" / "catalog.json"
    mtime = (path.stat().st_mtime_ns, mixed.stat().st_mtime_ns if mixed.is_file() else 0)
    if _CATALOG[0] != mtime:
        with open(path, encoding="utf-8") as fh:
            cat = json.load(fh)
        if mixed.is_file():
            cat.update(hybrid_entries(mixed))
        _CATALOG[1] = cat
        _CATALOG[0] = mtime
    return _CATALOG[1]


def textbook_of(dataset: str) -> str | None:
    """The textbook network (:data:`bnfk_core.network.textbook.TEXTBOOK_NETWORKS`) whose sample the dataset
    ``dataset`` is, else None (also for an unknown network's name)."""
    if not isinstance(dataset, str) or not dataset.startswith(TEXTBOOK_PREFIX):
        return None
    name = dataset[len(TEXTBOOK_PREFIX) :]
    return name if name in TEXTBOOK_NETWORKS else None


def ensure(*keys: str) -> None:
    """Put :data:`DEFAULTS` of ``keys`` into ``st.session_state`` where they are missing (lists copied).

    A page calls it for the keys its widgets own: Streamlit drops a widget's key from the session after a run
    that did not draw the widget, and a default given through Session State only never clashes with a value
    a link or session file set (a ``value=`` passed too makes Streamlit warn)."""
    ss = st.session_state
    for k in keys:
        if k not in ss:
            v = DEFAULTS[k]
            ss[k] = list(v) if isinstance(v, list) else v


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


def data_settings(**override) -> dict:
    """The choices that say which table the pages work on (dataset and reading options; the rows and seed of a
    textbook sample), ``override`` applied."""
    ss = st.session_state
    s = {
        "textbook_rows": int(ss.get("textbook_rows", DEFAULTS["textbook_rows"])),
        "textbook_seed": int(ss.get("textbook_seed", DEFAULTS["textbook_seed"])),
        "dataset": ss.dataset,
        "class_column": ss.class_column,
        "missing_policy": ss.missing_policy,
        "bins": int(ss.bins),
        "drop_columns": tuple(ss.drop_columns),
        "na_values": ss.get("na_values"),
    }
    s.update(override)
    return s


def read_options(settings: dict | None = None) -> tuple:
    """The options the data of ``settings`` (default: the current data) are read with: (class column, missing
    policy, bins, drop columns)."""
    s = settings or data_settings()
    return (s["class_column"], s["missing_policy"], int(s["bins"]), tuple(s["drop_columns"]))


def na_values_of(settings: dict):
    """Which cell texts are missing: a sample's catalog list, else the Data page's choice (``na_values``:
    None = the empty field only, ``"default-list"``, or a comma list; :func:`bnfk_core.data.table.na_set`)."""
    entry = catalog().get(settings["dataset"])
    if entry is not None:
        return entry.get("na_values")
    return settings.get("na_values")


def server_name() -> str:
    """The current file on the server as visitors see it: its name in the operator's data folder."""
    p = st.session_state.get("server_path")
    return bigdata.shown_path(p) if p else ""


def cli_data_args(label_flag: str = "--label-column") -> list[str]:
    """The current data as arguments of ``python -m bnfk_core SUBCOMMAND``: the CSV (``DATA.csv`` for an
    upload) and the loading options that differ from the command line's defaults, so the command reads the
    same table as the app."""
    ss = st.session_state
    args = [
        f"$BNFK_DATA_DIR/{server_name()}"
        if ss.dataset == "path"
        else "DATA.csv"
        if ss.dataset == "upload" or textbook_of(ss.dataset)
        else f"sample_data/{catalog()[ss.dataset]['file']}"
    ]
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
