"""Kernel classification (thesis App. D): kNN and SVM on a precomputed kernel over seeded train/test splits.

kNN (k = 7, uniform weights, neighbours by kernel distance, scikit-learn's KNeighborsClassifier) and SVM
(``SVC(kernel="precomputed", C=1)`` with calibrated probabilities) over seeded 80/20 splits, scored by
accuracy and log loss; the model behind the kernel (the Fisher network, or the marginal frequencies of
scaled-Hamming) is estimated
on the training split only.  The label column is never a feature.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.calibration import CalibratedClassifierCV
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC

from ...data.limits import guard_workspace
from ...registry import CLASSIFIERS, KERNELS
from .common import ClusterError, Progress, check_model, feature_columns

__all__ = [
    "CLASSIFIERS",
    "ClassificationResult",
    "knn_proba",
    "svm_proba",
    "classify",
    "classify_many",
    "classifier_label",
    "classification_table",
]


@dataclass
class ClassificationResult:
    kernel: str
    classifier: str
    accuracy: list
    log_loss: list
    seeds: list
    test_size: float
    n_classes: int
    seconds: float = 0.0
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        acc, ll = np.asarray(self.accuracy), np.asarray(self.log_loss)
        return {
            "kernel": self.kernel,
            "classifier": self.classifier,
            "accuracy": float(acc.mean()),
            "accuracy_std": float(acc.std()),
            "log_loss": float(ll.mean()),
            "log_loss_std": float(ll.std()),
            "accuracy_per_repeat": acc.tolist(),
            "log_loss_per_repeat": ll.tolist(),
            "seeds": list(self.seeds),
            "repeats": len(self.seeds),
            "test_size": self.test_size,
            "n_classes": self.n_classes,
            "notes": list(self.notes),
            "seconds": self.seconds,
        }


def _train_test_kernels(
    feats, kernel, tr, te, *, structure, score, params, seed, model, dag=None, kernel_options=None
):
    """(K_train_train, K_test_train, diag K_test_test) with the kernel fitted on the training rows only
    (``kernel_options`` go to the kernel's ``fit``, e.g. ``{"alpha": 0.5}``)."""
    train, test = feats.subset(tr), feats.subset(te)
    fitted = KERNELS[kernel].fit(
        train,
        model=model,
        dag=dag,
        structure=structure,
        score=score,
        params=params,
        seed=seed,
        **(kernel_options or {}),
    )
    return fitted.gram(train), fitted.gram(test, train), np.diag(fitted.gram(test)).copy()


def _settle_ties(*Ds):
    """The neighbour distances rounded to 12 significant digits of their largest value: kernels with few
    distinct values (Hamming, scaled-Hamming) have many exactly tied neighbours, and without this their
    order would follow the last bits of a floating-point sum -- which any change in summation order moves."""
    scale = max(float(np.abs(D).max(initial=0.0)) for D in Ds) or 1.0
    return tuple(np.round(D / scale, 12) * scale for D in Ds)


def knn_proba(Ktr, Kte, dte, ytr, classes, k, by: str = "distance"):
    """scikit-learn's uniform kNN, neighbours by kernel distance d(x,y) = sqrt(K(x,x) + K(y,y) - 2 K(x,y))
    (``by="distance"``) or by the kernel value itself, most similar first (``by="similarity"``)."""
    if by == "distance":
        dtr = np.diag(Ktr)
        Dtr = np.sqrt(np.clip(dtr[:, None] + dtr[None, :] - 2.0 * Ktr, 0.0, None))
        np.fill_diagonal(Dtr, 0.0)
        Dte = np.sqrt(np.clip(np.asarray(dte)[:, None] + dtr[None, :] - 2.0 * Kte, 0.0, None))
    elif by == "similarity":
        top = max(float(Ktr.max(initial=0.0)), float(Kte.max(initial=0.0)))
        Dtr, Dte = top - Ktr, top - Kte
    else:
        raise ClusterError(f"Unknown neighbour criterion '{by}'; choose distance or similarity.")
    Dtr, Dte = _settle_ties(Dtr, Dte)
    knn = KNeighborsClassifier(n_neighbors=min(int(k), Ktr.shape[0]), weights="uniform", metric="precomputed")
    knn.fit(Dtr, ytr)
    P = np.zeros((Kte.shape[0], len(classes)))
    P[:, np.searchsorted(classes, knn.classes_)] = knn.predict_proba(Dte)
    return P


def svm_proba(Ktr, Kte, ytr, classes, C):
    """SVC on a precomputed kernel with sigmoid-calibrated probabilities (columns in ``classes`` order)."""
    svc = SVC(kernel="precomputed", C=float(C))
    folds = min(5, int(np.bincount(np.searchsorted(classes, ytr)).max(initial=0)))
    smallest = int(np.min(np.unique(ytr, return_counts=True)[1]))
    P = np.zeros((Kte.shape[0], len(classes)))
    if smallest >= 2 and folds >= 2:
        model = CalibratedClassifierCV(svc, method="sigmoid", cv=min(folds, smallest), ensemble=False)
        model.fit(Ktr, ytr)
        P[:, np.searchsorted(classes, model.classes_)] = model.predict_proba(Kte)
    else:  # a class with one training row cannot be calibrated: hard votes
        svc.fit(Ktr, ytr)
        P[np.arange(len(P)), np.searchsorted(classes, svc.predict(Kte))] = 1.0
    return P


def classify(data, kernel: str, classifier: str, **options) -> ClassificationResult:
    """Kernel kNN / SVM over seeded train/test splits (thesis App. D); see :func:`classify_many`."""
    return classify_many(data, kernel, (classifier,), **options)[classifier]


def classify_many(
    data,
    kernel: str,
    classifiers: Sequence[str] = CLASSIFIERS,
    *,
    repeats: int = 10,
    seed: int = 0,
    test_size: float = 0.2,
    k: int = 7,
    C: float = 1.0,
    structure: str | None = None,
    score: str | None = None,
    params: str | None = None,
    model=None,
    dag=None,
    neighbours: str = "distance",
    progress: Progress | None = None,
    kernel_options: dict | None = None,
) -> dict:
    """Kernel kNN and/or SVM over ``repeats`` seeded train/test splits (thesis App. D).

    Split r uses ``seed + r`` (``sklearn.model_selection.train_test_split``, shuffled, not stratified);
    the kernel's model is estimated on its training rows (one kernel per split, shared by the
    classifiers).  kNN: scikit-learn's ``KNeighborsClassifier(k, weights="uniform",
    metric="precomputed")`` on the kernel distance (ties between equally distant rows broken as
    scikit-learn does); class probabilities are the vote shares.  ``neighbours="similarity"`` takes the
    ``k`` training rows with the largest K(x, y) instead -- the same for the Hamming kernel without
    missing cells (K(y, y) = 1), different for kernels whose self-similarity varies.  SVM:
    ``SVC(kernel="precomputed", C=C,
    probability=True, random_state=seed+r)``.  Log loss is scikit-learn's over all classes of the label
    column, probabilities clipped to [1e-15, 1].  Rows with a missing label are left out.

    The Fisher kernel's network: learned per training split with ``structure``/``score`` (``None``: the
    default recipe's, :data:`bnfk_core.learning.recipe.DEFAULT_RECIPE`),
    or a fixed ``dag`` whose CPTs are fitted per training split by ``params``, or a fixed ``model``
    (used as is -- its parameters may have seen the test rows' features, never their labels).
    ``kernel_options`` go to the kernel's ``fit`` (e.g. ``{"alpha": 0.5}`` for the normalised Fisher kernel;
    kernels ignore options they do not take).

    Returns ``{classifier: ClassificationResult}``.
    """
    KERNELS.check(kernel)  # an unknown name is refused here, before any work
    for c in classifiers:
        if c not in CLASSIFIERS:
            raise ClusterError(f"Unknown classifier '{c}'; choose one of {', '.join(CLASSIFIERS)}.")
        CLASSIFIERS.validate(c, {"k": k, "C": C, "neighbours": neighbours})
    if not 0 < float(test_size) < 1:
        raise ClusterError(f"test_size must be between 0 and 1, got {test_size}.")
    if int(repeats) < 1:
        raise ClusterError(f"repeats must be at least 1, got {repeats}.")
    if model is not None:
        check_model(model, data)
    guard_workspace("classification", int((data.labels() >= 0).sum()), test_size=float(test_size))
    if dag is not None and data.class_column in dag.nodes:
        raise ClusterError(
            f"The structure includes the label column '{data.class_column}'; the label is never a "
            "feature -- remove it from the structure."
        )
    t0 = time.perf_counter()
    y_all = data.labels()
    keep = np.flatnonzero(y_all >= 0)
    notes = []
    if len(keep) < len(y_all):
        notes.append(f"{len(y_all) - len(keep)} rows with a missing label left out")
    feats = feature_columns(data).subset(keep)
    y = y_all[keep]
    classes = np.unique(y)
    if len(classes) < 2:
        raise ClusterError(f"Label column '{data.class_column}' has fewer than two classes.")
    acc = {c: [] for c in classifiers}
    ll = {c: [] for c in classifiers}
    seeds = []
    for r in range(int(repeats)):
        s = int(seed) + r
        tr, te = train_test_split(np.arange(len(y)), test_size=float(test_size), random_state=s, shuffle=True)
        if len(np.unique(y[tr])) < 2:
            raise ClusterError(f"Split {r + 1} has a single class in its training rows; use more data.")
        Ktr, Kte, dte = _train_test_kernels(
            feats,
            kernel,
            tr,
            te,
            structure=structure,
            score=score,
            params=params,
            seed=s,
            model=model,
            dag=dag,
            kernel_options=kernel_options,
        )
        for clf in classifiers:
            P = CLASSIFIERS[clf].proba(Ktr, Kte, dte, y[tr], classes, k=k, C=C, neighbours=neighbours)
            pred = classes[np.argmax(P, axis=1)]
            acc[clf].append(float(accuracy_score(y[te], pred)))
            Pc = np.clip(P, 1e-15, 1.0)
            ll[clf].append(float(log_loss(y[te], Pc / Pc.sum(axis=1, keepdims=True), labels=classes)))
        seeds.append(s)
        if progress is not None:
            progress((r + 1) / repeats, f"{kernel}: split {r + 1}/{repeats}")
    secs = time.perf_counter() - t0
    return {
        c: ClassificationResult(
            kernel, c, acc[c], ll[c], list(seeds), float(test_size), len(classes), secs, list(notes)
        )
        for c in classifiers
    }


def classifier_label(classifier: str, *, k: int = 7, C: float = 1.0) -> str:
    """How a classifier of :data:`bnfk_core.registry.CLASSIFIERS` is named in tables, with its setting."""
    if classifier not in CLASSIFIERS:
        raise ClusterError(f"Unknown classifier '{classifier}'; choose one of {', '.join(CLASSIFIERS)}.")
    return CLASSIFIERS[classifier].table_label.format(k=int(k), C=C)


def classification_table(
    data,
    kernels: Sequence[str],
    classifiers: Sequence[str] = CLASSIFIERS,
    *,
    repeats: int = 10,
    seed: int = 0,
    k: int = 7,
    C: float = 1.0,
    model=None,
    structure: str | None = None,
    score: str | None = None,
    params: str | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """Every classifier on every kernel (:func:`classify_many`, thesis App. D) as one table:
    ``classifier, kernel`` (labels), ``accuracy, accuracy_std, log_loss, log_loss_std``, kernels outer.

    A network kernel (``KERNELS[name].uses_network``) given ``model`` keeps that network's structure and
    re-fits its CPTs on each training split with the model's own estimator (``model.fit_info["method"]``,
    else ``params``); without ``model`` the network is learned per split by ``structure``/``score``.
    The other kernels are fitted on each training split as always.
    """
    names = list(kernels)
    lines = []
    for j, kern in enumerate(names):
        spec = KERNELS[kern]
        net = spec.uses_network and model is not None
        est = (getattr(model, "fit_info", None) or {}).get("method", params) if net else params
        out = classify_many(
            data,
            kern,
            tuple(classifiers),
            repeats=repeats,
            seed=seed,
            k=k,
            C=C,
            dag=model.dag if net else None,
            params=est,
            structure=structure,
            score=score,
            progress=None
            if progress is None
            else (lambda f, msg, j=j: progress(min((j + f) / len(names), 1.0), msg)),
        )
        for clf, res in out.items():
            r = res.to_dict()
            lines.append(
                {
                    "classifier": classifier_label(clf, k=k, C=C),
                    "kernel": spec.label,
                    **{c: r[c] for c in ("accuracy", "accuracy_std", "log_loss", "log_loss_std")},
                }
            )
    return pd.DataFrame(
        lines, columns=["classifier", "kernel", "accuracy", "accuracy_std", "log_loss", "log_loss_std"]
    )


def _knn(Ktr, Kte, dte, ytr, classes, *, k: int = 7, neighbours: str = "distance", **_):
    return knn_proba(Ktr, Kte, dte, ytr, classes, k, neighbours)


def _svm(Ktr, Kte, dte, ytr, classes, *, C: float = 1.0, **_):
    return svm_proba(Ktr, Kte, ytr, classes, C)
