"""``reproduce lca``: latent class models against published numbers.

* **carcinoma** (Agresti's 118 slides x 7 pathologists, the example data of R's poLCA): the maximum
  log-likelihood for 2, 3 and 4 classes from ``starts`` seeded EM starts, next to poLCA's documented maxima
  -317.2568, -293.705, -289.2858; with the free-parameter count, BIC, AIC and how many starts reached the
  best.
* **ARI** of the modal classes of a K = (number of labels) model against the labels on house_votes_84,
  lymphography, zoo, soybean_small and spect (the thesis's loading: missing values as a category), next to the
  numbers of ``new-seeds-notes.md`` (best of 10 EM starts): 0.557, 0.329, 0.839, 1.000, 0.068.  A different
  seed and number of starts can end in another local maximum; the table says how many starts we ran.
"""

from __future__ import annotations

import pandas as pd
from sklearn.metrics import adjusted_rand_score

from ..analyses.cluster.clustering import default_n_clusters
from ..data.samples import sample_dir
from ..data.table import load_csv
from ..lca import fit_lca
from . import common as ex

__all__ = ["POLCA_CARCINOMA", "NOTES_ARI", "run_lca"]

#: poLCA's documented maxima of the carcinoma data (classes -> log-likelihood)
POLCA_CARCINOMA = {2: -317.2568, 3: -293.705, 4: -289.2858}
#: ARI of the latent class model's modal classes (best of 10 starts), new-seeds-notes.md
NOTES_ARI = {
    "house_votes_84": 0.557,
    "lymphography": 0.329,
    "zoo": 0.839,
    "soybean_small": 1.000,
    "spect": 0.068,
}


def carcinoma_table(starts: int, seed: int) -> pd.DataFrame:
    """The carcinoma data's maximum log-likelihood for each number of classes beside poLCA's.

    Parameters
    ----------
    starts, seed : int
        Of :func:`~bnfk_core.lca.model.fit_lca`.

    Returns
    -------
    pandas.DataFrame
    """
    data = load_csv(sample_dir() / "carcinoma.csv")
    rows = []
    for k, pub in POLCA_CARCINOMA.items():
        m = fit_lca(data, k, starts, seed)
        rows.append(
            {
                "classes": k,
                "loglik": m.loglik,
                "loglik_polca": pub,
                "difference": m.loglik - pub,
                "parameters": m.parameters,
                "bic": m.bic,
                "aic": m.aic,
                "starts_at_best": m.starts_at_best,
                "starts": m.starts,
                "iterations": m.iterations,
            }
        )
    return pd.DataFrame(rows)


def ari_table(starts: int, seed: int, names) -> pd.DataFrame:
    """ARI of the modal classes against the labels of the thesis data sets ``names``, beside the notes'
    values.

    Parameters
    ----------
    starts, seed : int
    names : sequence of str

    Returns
    -------
    pandas.DataFrame
    """
    rows = []
    for stem in names:
        d = ex.load_thesis_data(stem)
        feats = d.without_class()
        y = d.labels()
        ok = y >= 0
        k = default_n_clusters(d)
        m = fit_lca(feats, k, starts, seed)
        lab = m.modal_classes(feats)
        rows.append(
            {
                "dataset": stem,
                "rows": d.n_rows,
                "classes": k,
                "ari": float(adjusted_rand_score(y[ok], lab[ok])),
                "ari_notes": NOTES_ARI[stem],
                "difference": float(adjusted_rand_score(y[ok], lab[ok])) - NOTES_ARI[stem],
                "loglik": m.loglik,
                "starts_at_best": m.starts_at_best,
                "starts": starts,
            }
        )
    return pd.DataFrame(rows)


def run_lca(settings, w, progress) -> dict:
    """The ``lca`` experiment (module docstring).

    Parameters
    ----------
    settings : Settings
    w : Writer
        Writes the experiment's files.
    progress : callable(fraction, message) or None

    Returns
    -------
    dict
        The experiment's part of its manifest record (:func:`~bnfk_core.reproduce.experiments.run_experiment`
        adds the rest).
    """
    starts = 10 if settings.quick else 30
    names = list(settings.datasets or (("zoo", "soybean_small") if settings.quick else NOTES_ARI))
    bad = [s for s in names if s not in NOTES_ARI]
    if bad:
        raise ex.ReproduceError(
            f"'{bad[0]}' has no published latent-class ARI; choose from {', '.join(NOTES_ARI)}."
        )
    if progress is not None:
        progress(0.0, "carcinoma")
    car = carcinoma_table(starts, settings.seed)
    w.table(
        "lca_carcinoma",
        car,
        title="Latent class models on carcinoma: ours vs poLCA",
        caption="poLCA's documented maximum log-likelihoods of data(carcinoma): -317.2568 (2 classes), "
        "-293.705 (3), -289.2858 (4)",
        measured="best log-likelihood of EM from seeded random starts; parameters (K-1) + K * sum(r_i - 1)",
        setup=f"{starts} seeded starts (Dirichlet(1) profiles, uniform weights), seed {settings.seed}, "
        "stop when the mean log-likelihood per row gains < 1e-8",
    )
    if progress is not None:
        progress(0.5, "ARI against the labels")
    ari = ari_table(starts, settings.seed, names)
    w.table(
        "lca_ari",
        ari,
        title="Latent-class clustering: ARI of the modal classes against the labels",
        caption="new-seeds-notes.md: best of 10 EM starts, K = number of classes: house_votes_84 0.557, "
        "lymphography 0.329, zoo 0.839, soybean_small 1.000, spect 0.068",
        measured="ARI of the modal classes of the best of the starts",
        setup=f"{starts} seeded starts, seed {settings.seed}; missing values as a category (thesis loading); "
        "the label column is never a variable",
    )
    return {
        "starts": starts,
        "datasets": names,
        "carcinoma_max_abs_difference": float(car["difference"].abs().max()),
        "ari": {r.dataset: r.ari for r in ari.itertuples()},
    }
