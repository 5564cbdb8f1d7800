"""Where the bundled samples are: the checkout's ``sample_data`` folder, or the copy a wheel installs.

A clone runs from its own folder (``app.py`` beside ``sample_data/``).  ``pip install .`` installs the package
without the checkout, so the wheel carries the samples as data files (``pyproject.toml``,
``[tool.setuptools.data-files]``) under ``<prefix>/share/bnfk/sample_data`` -- the prefix of the environment
it was installed into, or the user's base for ``pip install --user``.  :func:`sample_dir` finds whichever is
there, the checkout first.
"""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path

__all__ = ["sample_dir", "SAMPLE_SUBDIR", "HYBRID_CLASS", "hybrid_entries", "sample_catalog"]

#: where a wheel's data files put the samples, below the installation scheme's ``data`` path
SAMPLE_SUBDIR = Path("share") / "bnfk" / "sample_data"

_CHECKOUT = Path(__file__).resolve().parents[2] / "sample_data"  # bnfk_core/data -> the project folder


def _candidates() -> list[Path]:
    out = [_CHECKOUT]
    schemes = [sysconfig.get_default_scheme()]
    user = sysconfig.get_preferred_scheme("user")
    if user not in schemes:
        schemes.append(user)
    for scheme in schemes:
        try:
            out.append(Path(sysconfig.get_paths(scheme)["data"]) / SAMPLE_SUBDIR)
        except KeyError:  # a scheme this platform does not have
            continue
    return out


def sample_dir() -> Path:
    """The folder of the bundled samples (``catalog.json`` and the CSV files).

    Returns
    -------
    pathlib.Path
        The checkout's ``sample_data`` when ``bnfk_core`` runs from a clone, else the installed copy; when
        neither has a ``catalog.json`` (a package copied without its data), the checkout's path, so that the
        error of whoever reads it names the folder the project expects.
    """
    for path in _candidates():
        if (path / "catalog.json").is_file():
            return path
    return _CHECKOUT


#: the class column each mixed sample of ``sample_data/hybrid/`` opens with (its outcome; none for Boston and
#: the survey)
HYBRID_CLASS = {"biopsy": "class", "pima": "type", "auto": "origin", "attrition": "Attrition"}


def hybrid_entries(path: Path) -> dict:
    """The mixed samples of ``sample_data/hybrid/catalog.json`` (``path``) and the other CSV files beside
    it, as entries of the samples' catalog named ``hybrid_<name>`` (the app and session files read them)."""
    with open(path, encoding="utf-8") as fh:
        cat = json.load(fh)
    for csv in sorted(path.parent.glob("*.csv")):  # the other mixed tables bundled there (see its README)
        if not any(e.get("file") == csv.name for e in cat.values()):
            with open(csv, encoding="utf-8") as fh:
                header, rows = fh.readline(), sum(1 for line in fh if line.strip())
            cat[csv.stem] = {
                "file": csv.name,
                "title": csv.stem.capitalize(),
                "description": f"A mixed table of {rows:,} rows (sample_data/hybrid/README.md: its source).",
                "rows": rows,
                "columns": header.count(",") + 1,
            }
    return {
        f"hybrid_{k}": {
            "file": f"hybrid/{e['file']}",
            "title": f"{e['title']} (mixed)",
            "description": e["description"],
            "class_column": HYBRID_CLASS.get(k),
            "missing_policy": "missing",
            "rows": e["rows"],
            "columns": e["columns"],
        }
        for k, e in cat.items()
    }


def sample_catalog(directory: Path) -> dict:
    """The bundled samples of ``directory`` (its ``catalog.json``, then the mixed tables of its ``hybrid/``
    folder, :func:`hybrid_entries`)."""
    with open(directory / "catalog.json", encoding="utf-8") as fh:
        cat = json.load(fh)
    mixed = directory / "hybrid" / "catalog.json"
    if mixed.is_file():
        cat.update(hybrid_entries(mixed))
    return cat
