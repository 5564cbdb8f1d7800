"""Where the bundled samples are: the checkout's ``sample_data`` folder, or the copy a wheel installs.

A clone runs from its own folder (``app.py`` beside ``sample_data/``).  ``pip install .`` installs the package
without the checkout, so the wheel carries the samples as data files (``pyproject.toml``,
``[tool.setuptools.data-files]``) under ``<prefix>/share/bnfk/sample_data`` -- the prefix of the environment
it was installed into, or the user's base for ``pip install --user``.  :func:`sample_dir` finds whichever is
there, the checkout first.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

__all__ = ["sample_dir", "SAMPLE_SUBDIR"]

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
