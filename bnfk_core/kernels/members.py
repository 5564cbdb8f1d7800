"""The kernel family's built-in members, declared light (:data:`bnfk_core.registry.KERNELS` reads them on
first use).

Names, labels, abbreviations, PSD facts and descriptions only: each member's ``fit`` is a
:func:`~bnfk_core.registry.lazy` reference to the module that implements it (:mod:`.fisher`, :mod:`.hamming`,
:mod:`.similarity`), imported when the kernel is first fitted.  The latent-class Fisher kernel is declared
beside the latent class models (:mod:`bnfk_core.lca.members`).  Importing this module loads no numerical
library, so the CLI's ``--help`` lists the kernels at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..registry import Interval, KernelSpec, Option, lazy

__all__ = [
    "FISHER",
    "FISHER_NORMALIZED",
    "ALPHA",
    "SCALED_HAMMING",
    "HAMMING",
    "THESIS_KERNELS",
    "MEASURES",
    "MeasureInfo",
    "KERNELS",
    "SEED",
    "NETWORK_OPTIONS",
    "FISHER_OPTIONS",
    "FISHER_NORMALIZED_OPTIONS",
    "MEASURE_OPTIONS",
]

#: the kernel names of the paper and the thesis
FISHER, SCALED_HAMMING, HAMMING = "fisher", "scaled-hamming", "hamming"
#: the power- and L2-normalised Fisher kernel (:mod:`bnfk_core.kernels.fisher_normalized`)
FISHER_NORMALIZED = "fisher-normalized"
THESIS_KERNELS = (FISHER, HAMMING, SCALED_HAMMING)

_BORIAH = (
    "Boriah, Chandola & Kumar (2008), Similarity measures for categorical data: a "
    "comparative evaluation, SDM 2008, Table 2"
)


@dataclass(frozen=True)
class MeasureInfo:
    """Description of one measure (what a kernel registry shows)."""

    name: str
    label: str
    abbr: str
    psd: bool | None
    reference: str
    description: str


def _info(name, label, abbr, psd, original, description):
    return MeasureInfo(name, label, abbr, psd, f"{original}; as in {_BORIAH}", description)


MEASURES: dict[str, MeasureInfo] = {
    m.name: m
    for m in [
        _info(
            "overlap",
            "Overlap",
            "OV",
            True,
            "Simple matching",
            "Fraction of attributes on which the rows agree.",
        ),
        _info(
            "eskin",
            "Eskin",
            "ES",
            True,
            "Eskin et al. (2002)",
            "Mismatches on attributes with many values count as more similar: n^2/(n^2+2).",
        ),
        _info(
            "iof",
            "Inverse occurrence frequency",
            "IOF",
            False,
            "Sparck Jones (1972)",
            "Mismatches on rare values count as more similar: 1/(1 + log f(a) log f(b)).",
        ),
        _info(
            "of",
            "Occurrence frequency",
            "OF",
            False,
            "Sparck Jones (1972)",
            "Mismatches on frequent values count as more similar: 1/(1 + log(N/f(a)) log(N/f(b))).",
        ),
        _info(
            "lin",
            "Lin",
            "LIN",
            None,
            "Lin (1998), An information-theoretic definition of similarity",
            "Information-theoretic: matches weigh 2 log p(a), mismatches 2 log(p(a)+p(b)), "
            "normalised by the information of both rows.",
        ),
        _info(
            "lin1",
            "Lin1",
            "LIN1",
            False,
            "Boriah et al. (2008), a modification of Lin (1998)",
            "Lin with the information of all values whose frequency lies between those compared.",
        ),
        _info(
            "goodall1",
            "Goodall 1",
            "G1",
            True,
            "Goodall (1966), variant of Boriah et al. (2008)",
            "A match scores 1 minus the sum of p2 over values at most as frequent.",
        ),
        _info(
            "goodall2",
            "Goodall 2",
            "G2",
            True,
            "Goodall (1966), variant of Boriah et al. (2008)",
            "A match scores 1 minus the sum of p2 over values at least as frequent.",
        ),
        _info(
            "goodall3",
            "Goodall 3",
            "G3",
            True,
            "Goodall (1966), variant of Boriah et al. (2008)",
            "A match on value a scores 1 - p2(a): rare matches count more.",
        ),
        _info(
            "goodall4",
            "Goodall 4",
            "G4",
            True,
            "Goodall (1966), variant of Boriah et al. (2008)",
            "A match on value a scores p2(a): frequent matches count more.",
        ),
        _info(
            "smirnov",
            "Smirnov",
            "SM",
            True,
            "Smirnov (1968)",
            "Probability-based: matches on rare values and mismatches among rare values count more; "
            "weights 1/sum n_k.",
        ),
        _info(
            "gambaryan",
            "Gambaryan",
            "GA",
            True,
            "Gambaryan (1964)",
            "A match scores the binary entropy of its value's frequency; weights 1/sum n_k.",
        ),
        _info(
            "burnaby",
            "Burnaby",
            "BU",
            False,
            "Burnaby (1970)",
            "Mismatches on rare values get a low similarity (information-weighted).",
        ),
        _info(
            "anderberg",
            "Anderberg",
            "AN",
            False,
            "Anderberg (1973), Cluster analysis for applications",
            "Ratio of the weight of rare matches to the weight of all matches and mismatches.",
        ),
        MeasureInfo(
            "aitchison-aitken",
            "Aitchison-Aitken",
            "AA",
            True,
            "Aitchison & Aitken (1976), Multivariate binary discrimination by the kernel method, "
            "Biometrika 63(3):413-420",
            "Product kernel prod_k k(x_k, y_k): 1 - lambda if equal, lambda/(c_k - 1) otherwise "
            "(option bandwidth=lambda, default 0.1, capped at (c_k-1)/c_k).",
        ),
    ]
}


#: a seed of numpy's generators (any value numpy accepts; a negative one is refused)
SEED = Option(
    "seed", Interval(int, 0, 2**32 - 1), 0, "the seed of the network's learning (ties, restarts, EM)"
)

#: how a network kernel gets its network: handed over, fitted on a structure, or learned by a recipe
NETWORK_OPTIONS = (
    Option("model", None, None, "a fitted network used as it is", user=False),
    Option("dag", None, None, "a structure whose CPTs are fitted on the training rows", user=False),
    Option("recipe", None, None, "the recipe the network is learned by (a Recipe)", user=False),
    Option("structure", str, None, "the structure-learning method (replaces the recipe's)"),
    Option("score", str, None, "the structure score (replaces the recipe's)"),
    Option("params", str, None, "the CPT estimator (replaces the recipe's)"),
    SEED,
    Option("progress", None, None, "progress(fraction, message) while the network is learned", user=False),
)

#: the Fisher kernel's options (:func:`bnfk_core.kernels.fisher.fit_fisher`)
FISHER_OPTIONS = (
    *NETWORK_OPTIONS,
    Option("runner", None, None, "where the learning's counting passes run", user=False),
)

#: the normalised Fisher kernel's power: its default (chosen by measurement on half of the bundled labelled
#: sets, docs/KERNELS.md) and the range its widgets offer
ALPHA = Option(
    "alpha",
    Interval(float, 0, 1, closed="right"),
    0.25,
    "the power of the signed power map sign(z)|z|^alpha on every Fisher feature",
    ui_range=(0.02, 1.0, 0.01),
)

#: the normalised Fisher kernel's options (:func:`bnfk_core.kernels.fisher_normalized.fit_fisher_normalized`);
#: the defaults are its module's (DEFAULT_ALPHA, DEFAULT_NETWORK), chosen by measurement (docs/KERNELS.md)
FISHER_NORMALIZED_OPTIONS = (
    NETWORK_OPTIONS[0],
    NETWORK_OPTIONS[1],
    ALPHA,
    Option(
        "intra",
        ("none", "variable", "class-variable"),
        "none",
        "the blocks L2-normalised on their own after the power map (intra-normalisation)",
        none=False,
    ),
    NETWORK_OPTIONS[3],
    NETWORK_OPTIONS[4],
    NETWORK_OPTIONS[5],
    Option(
        "pseudo_count",
        Interval(float, 0, None, closed="neither"),
        None,
        "the CPT estimator's pseudo-count (default 1 for the latent class network, 5 for a learned one)",
    ),
    NETWORK_OPTIONS[2],
    SEED,
    NETWORK_OPTIONS[7],
    Option(
        "classes", Interval(int, 1, 1000), None, "the latent class network's classes (default n_clusters)"
    ),
    Option(
        "n_clusters",
        Interval(int, 1, None),
        None,
        "the clusters asked for (the latent class network's classes without classes; least BIC without both)",
    ),
    Option(
        "blanks",
        ("category", "missing"),
        None,
        "a blank read as its own category is kept ('category') or marginalised ('missing'; the latent "
        "class network's default)",
    ),
    Option(
        "empty_weight",
        Interval(float, 0, 1, closed="left"),
        0.25,
        "the empty network's share w of the default kernel (0: the latent class network alone)",
    ),
)

#: the similarity measures' options (:func:`bnfk_core.kernels.similarity.fit_measure`)
MEASURE_OPTIONS = (
    Option("variables", None, None, "the attributes to use, in this order (default every feature column)"),
    Option(
        "missing",
        ("renormalize", "zero"),
        "renormalize",
        "a pair's missing cells: averaged over the attributes observed in both rows, or counted as zero",
    ),
)

#: Aitchison-Aitken's options: the measures' and its bandwidth
AITCHISON_AITKEN_OPTIONS = (
    *MEASURE_OPTIONS,
    Option(
        "bandwidth",
        None,
        0.1,
        "lambda of the product kernel, one number or one per attribute (capped at (c_k - 1)/c_k)",
    ),
)


def _psd_note(psd: bool | None) -> str:
    return (
        " (positive semidefinite)"
        if psd
        else " (a similarity, not positive semidefinite)"
        if psd is False
        else " (positive semidefiniteness not proved)"
    )


#: the built-in kernels, in the order the faces offer them
KERNELS = (
    KernelSpec(
        name=FISHER,
        label="Fisher",
        abbr="F",
        fit=lazy("bnfk_core.kernels.fisher", "fit_fisher"),
        shift="none",
        psd=True,
        uses_network=True,
        family="fisher",
        description="Bayesian-network Fisher kernel, paper Theorem 1",
        options=FISHER_OPTIONS,
        gram=lazy("bnfk_core.kernels.fisher", "network_gram"),
    ),
    KernelSpec(
        name=SCALED_HAMMING,
        label="Scaled Hamming",
        abbr="SH",
        fit=lazy("bnfk_core.kernels.hamming", "fit_scaled_hamming"),
        shift="adaptive",
        psd=True,
        family="baseline",
        description="Fisher kernel of the empty network with marginal frequencies, thesis eq. 3.2",
    ),
    KernelSpec(
        name=HAMMING,
        label="Hamming",
        abbr="H",
        fit=lazy("bnfk_core.kernels.hamming", "fit_hamming"),
        shift="adaptive",
        psd=True,
        family="baseline",
        description="fraction of matching variables, thesis eq. 2.17",
    ),
    KernelSpec(
        name=FISHER_NORMALIZED,
        label="Fisher, power- and L2-normalised",
        abbr="FN",
        fit=lazy("bnfk_core.kernels.fisher_normalized", "fit_fisher_normalized"),
        shift="adaptive",
        psd=True,
        uses_network=True,
        family="fisher",
        description="signed power sign(z)|z|^alpha on every Fisher feature, then each row scaled to unit "
        "length "
        "(Perronnin, Sanchez & Mensink 2010); options alpha and the network's recipe (defaults "
        "chosen by measurement: docs/KERNELS.md)",
        options=FISHER_NORMALIZED_OPTIONS,
    ),
    *(
        KernelSpec(
            name=name,
            label=info.label,
            abbr=info.abbr,
            fit=lazy("bnfk_core.kernels.similarity", "fit_registered", name),
            shift="adaptive",
            psd=info.psd,
            uses_network=False,
            family="kernel" if name == "aitchison-aitken" else "measure",
            description=info.description + _psd_note(info.psd),
            options=AITCHISON_AITKEN_OPTIONS if name == "aitchison-aitken" else MEASURE_OPTIONS,
        )
        for name, info in MEASURES.items()
    ),
)
