"""Published numbers of the thesis and the paper, transcribed as data.

Sources (see the project's papers folder, not read by any code):

* Ebberstein & Holmberg (2019), MSc thesis, Chalmers, *Bayesian Network Fisher Kernel for
  Categorical Feature Spaces* -- Tables 4.1-4.4 (imputation), B.1-B.2 (their standard
  deviations), 5.1 and C.1-C.2 (clustering), 6.1-6.4 (structure segments), D.1-D.2
  (kernel classification).
* Leppä-aho, Silander & Roos (2020), *Bayesian network Fisher kernel for categorical feature
  spaces*, Behaviormetrika 47:81-103 -- Figs. 1-3 (data summarization; the figures are images,
  so only the text's claims about them are data here) and the run-time paragraph.

Every table is kept as the text block of the thesis (tab separated, as extracted), including
its decimal commas (Tables 5.1, 6.2, 6.3, C.1, C.2 print ``0,122``) and its ``-`` for "not
evaluated"; :func:`parse_block` turns a block into numbers.  Keeping the verbatim text makes the
transcription checkable line by line against the source.  Nothing here is computed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

__all__ = [
    "THESIS_DATASETS",
    "PAPER_DATASETS",
    "PublishedTable",
    "TABLES",
    "table",
    "parse_block",
    "PAPER_RUNTIMES",
    "PAPER_FIGURES",
    "PAPER_SETTINGS",
    "THESIS_SETTINGS",
    "number",
]

#: thesis row names -> sample_data file stems (catalog keys)
THESIS_DATASETS = {
    "Breast Cancer": "breast_cancer",
    "Hayes-Roth": "hayes_roth",
    "House Votes-84": "house_votes_84",
    "Lymphography": "lymphography",
    "Primary Tumor": "primary_tumor",
    "SPECT": "spect",
    "Tic-Tac-Toe": "tic_tac_toe",
}
#: paper data sets -> sample_data file stems
PAPER_DATASETS = {"waveform-5000": "waveform_5000", "nursery": "nursery", "letter": "letter"}


def number(text: str):
    """A published cell as a float: decimal comma or point; ``-`` (not evaluated) is None.

    Parameters
    ----------
    text : str

    Returns
    -------
    float or None
    """
    t = text.strip()
    if t in ("-", "–", ""):
        return None
    return float(t.replace(",", "."))


_LABELLED = re.compile(r"^\s*(-?[0-9]+[.,][0-9]+)\s*\((.+)\)\s*$")


def parse_block(block: str) -> tuple[tuple, dict, dict]:
    """(columns, {row name: (values...)}, {row name: (labels...)}) of a tab-separated table block.

    A cell like ``0.162 (SC-SH)`` (Table 6.1) gives the number and, in the labels, ``SC-SH``.

    Parameters
    ----------
    block : str

    Returns
    -------
    columns : tuple of str
    rows : dict
    labels : dict
    """
    lines = [ln for ln in block.strip("\n").splitlines() if ln.strip()]
    columns = tuple(c.strip() for c in lines[0].split("\t") if c.strip())
    rows, labels = {}, {}
    for ln in lines[1:]:
        cells = [c for c in ln.split("\t")]
        name, vals = cells[0].strip(), [c.strip() for c in cells[1:] if c.strip()]
        if len(vals) != len(columns):
            raise ValueError(f"row '{name}' has {len(vals)} cells for {len(columns)} columns")
        nums, labs = [], []
        for v in vals:
            m = _LABELLED.match(v)
            if m:
                nums.append(number(m.group(1)))
                labs.append(m.group(2).strip())
            else:
                nums.append(number(v))
                labs.append(None)
        rows[name] = tuple(nums)
        labels[name] = tuple(labs)
    return columns, rows, labels


@dataclass(frozen=True)
class PublishedTable:
    """One published table: id (e.g. ``"4.3"``), source, caption, what was measured, the values."""

    id: str
    source: str  # "thesis" or "paper"
    caption: str
    measured: str  # metric, unit, averaging
    block: str  # verbatim text of the table
    experiment: str  # the reproduce experiment that produces our side
    higher_is_better: bool = True

    @property
    def columns(self) -> tuple:
        return parse_block(self.block)[0]

    @property
    def rows(self) -> dict:
        return parse_block(self.block)[1]

    @property
    def labels(self) -> dict:
        return parse_block(self.block)[2]

    def value(self, row: str, column: str):
        """The published cell of ``row`` and ``column``.

        Parameters
        ----------
        row, column : str

        Returns
        -------
        float or None
        """
        return self.rows[row][self.columns.index(column)]

    def frame(self):
        """The table as a pandas DataFrame (rows: the thesis's data set names).

        Returns
        -------
        pandas.DataFrame
        """
        return pd.DataFrame.from_dict(self.rows, orient="index", columns=list(self.columns))


_IMPUTATION_RUNS = (
    "Macro average over 25 settings (test ratio 0.1-0.5 x ratio of missingness 0.1-0.5), "
    "10 runs each (250 runs): mean of the per-setting means"
)

TABLES: dict[str, PublishedTable] = {}


def _add(t: PublishedTable) -> None:
    TABLES[t.id] = t


_add(
    PublishedTable(
        "4.1",
        "thesis",
        "Macro average of accuracy on different datasets for the traditional methods. Each average is taken "
        "over "
        "250 runs and consists of 25 settings: Test ratio 0.1-0.5 and ratio of missingness 0.1-0.5.",
        "imputation accuracy (arg-max equals the hidden value); " + _IMPUTATION_RUNS,
        """
	BN	Mode	wKNN
Breast Cancer	0.584	0.523	0.476
Hayes-Roth	0.355	0.307	0.295
House Votes-84	0.744	0.525	0.684
Lymphography	0.647	0.603	0.571
Primary Tumor	0.768	0.751	0.607
SPECT	0.790	0.683	0.703
Tic-Tac-Toe	0.476	0.423	0.314
""",
        "thesis-imputation",
    )
)

_add(
    PublishedTable(
        "4.2",
        "thesis",
        "Macro average of accuracy on different datasets for the naive methods and their augmented models. "
        "Each "
        "average is taken over 250 runs and consists of 25 settings: Test ratio 0.1-0.5 and ratio of "
        "missingness "
        "0.1-0.5.",
        "imputation accuracy; " + _IMPUTATION_RUNS,
        """
	BN-Mode	Mode	BN-wKNN	wKNN
Breast Cancer	0.581	0.523	0.582	0.476
Hayes-Roth	0.331	0.307	0.378	0.295
House Votes-84	0.737	0.525	0.749	0.684
Lymphography	0.640	0.603	0.641	0.571
Primary Tumor	0.771	0.751	0.763	0.607
SPECT	0.779	0.683	0.792	0.703
Tic-Tac-Toe	0.473	0.423	0.491	0.314
""",
        "thesis-imputation",
    )
)

_add(
    PublishedTable(
        "4.3",
        "thesis",
        "Macro average of accuracy on different datasets for all methods. Each average is taken over 250 "
        "runs and "
        "consists of 25 settings: Test ratio 0.1-0.5 and ratio of missingness 0.1-0.5.",
        "imputation accuracy; " + _IMPUTATION_RUNS,
        """
	BN	BN-Mode	BN-wKNN	Mode	wKNN
Breast Cancer	0.584	0.581	0.582	0.523	0.476
Hayes-Roth	0.355	0.331	0.378	0.307	0.295
House Votes-84	0.744	0.737	0.749	0.525	0.684
Lymphography	0.647	0.640	0.641	0.603	0.571
Primary Tumor	0.768	0.771	0.763	0.751	0.607
SPECT	0.790	0.779	0.792	0.683	0.703
Tic-Tac-Toe	0.476	0.473	0.491	0.423	0.314
""",
        "thesis-imputation",
    )
)

_add(
    PublishedTable(
        "4.4",
        "thesis",
        "Macro averages of cross-entropy loss on different datasets for all methods. Each average is taken "
        "over 250 "
        "runs and consists of 25 settings: Test ratio 0.1-0.5 and ratio of missingness 0.1-0.5.",
        "imputation cross-entropy -log max(p_true, 1e-5) per hidden cell (nats); " + _IMPUTATION_RUNS,
        """
	BN	BN-Mode	BN-wKNN	Mode	wKNN
Breast Cancer	0.967	0.975	0.975	1.075	3.337
Hayes-Roth	1.257	1.265	1.312	1.218	4.480
House Votes-84	0.605	0.609	0.601	0.834	1.772
Lymphography	0.793	0.799	0.812	0.839	2.282
Primary Tumor	0.531	0.530	0.539	0.570	1.712
SPECT	0.493	0.507	0.515	0.604	1.246
Tic-Tac-Toe	1.008	1.030	1.010	1.068	5.104
""",
        "thesis-imputation",
        higher_is_better=False,
    )
)

_add(
    PublishedTable(
        "B.1",
        "thesis",
        "Standard deviation of the accuracy for all investigated datasets and methods. It is computed over "
        "250 runs "
        "consisting of 25 settings: Test ratio 0.1-0.5 and ratio of missingness 0.1-0.5.",
        "standard deviation of the per-run imputation accuracy over all 250 runs",
        """
	BN	BN-Mode	BN-wKNN	Mode	wKNN
Breast Cancer	0.045	0.046	0.045	0.039	0.046
Hayes-Roth	0.086	0.076	0.084	0.074	0.078
House Votes-84	0.025	0.025	0.023	0.026	0.032
Lymphography	0.041	0.039	0.039	0.036	0.046
Primary Tumor	0.023	0.024	0.025	0.025	0.039
SPECT	0.027	0.029	0.029	0.036	0.038
Tic-Tac-Toe	0.029	0.035	0.039	0.019	0.063
""",
        "thesis-imputation",
        higher_is_better=False,
    )
)

_add(
    PublishedTable(
        "B.2",
        "thesis",
        "Standard deviation of the cross-entropy loss for all investigated datasets and methods. It is "
        "computed over "
        "250 runs consisting of 25 settings: Test ratio 0.1-0.5 and ratio of missingness 0.1-0.5.",
        "standard deviation of the per-run imputation cross-entropy over all 250 runs",
        """
	BN	BN-Mode	BN-wKNN	Mode	wKNN
Breast Cancer	0.077	0.079	0.079	0.067	0.413
Hayes-Roth	0.096	0.093	0.122	0.077	0.930
House Votes-84	0.050	0.050	0.051	0.032	0.237
Lymphography	0.085	0.079	0.086	0.060	0.360
Primary Tumor	0.041	0.043	0.044	0.038	0.241
SPECT	0.054	0.060	0.063	0.030	0.219
Tic-Tac-Toe	0.036	0.037	0.044	0.010	0.967
""",
        "thesis-imputation",
        higher_is_better=False,
    )
)

_CLUSTER_ABBREV = (
    "Abbreviations: Correlation clustering (CC), Spectral clustering (SC), Fisher kernel (F), "
    "Hamming kernel (H), scaled-Hamming kernel (SH)."
)

_add(
    PublishedTable(
        "5.1",
        "thesis",
        "Adjusted Rand index averaged over 10 runs for different algorithm-kernel combinations. "
        + _CLUSTER_ABBREV,
        "adjusted Rand index of the clustering against the class labels (number of clusters = number of "
        "classes), "
        "mean over 10 runs",
        """
	CC-F	CC-H	CC-SH	SC-F	SC-H	SC-SH
Breast Cancer	0,122	-0,003	0,147	0,006	0,004	0,162
Hayes-Roth	0,082	-0,007	0,082	-0,009	-0,011	-0,009
House Votes-84	0,077	0,557	0,557	0,006	0,564	0,564
Lymphography	0,105	0,188	0,242	-0,018	0,258	0,259
Primary Tumor	0,035	0,081	0,123	0,076	0,083	0,076
SPECT	0,004	0,055	0,057	0,048	-0,061	-0,029
Tic-Tac-Toe	0,005	0,000	0,020	0,007	-0,001	-0,001
""",
        "thesis-clustering",
    )
)

_add(
    PublishedTable(
        "C.1",
        "thesis",
        "Adjusted mutual information averaged over 10 runs for all algorithm-kernel combinations. "
        + _CLUSTER_ABBREV,
        "adjusted mutual information against the class labels, mean over 10 runs",
        """
	CC-F	CC-H	CC-SH	SC-F	SC-H	SC-SH
Breast Cancer	0,069	-0,001	0,079	-0,003	0,000	0,078
Hayes-Roth	0,066	-0,008	0,066	-0,002	-0,011	-0,002
House Votes-84	0,055	0,485	0,475	-0,001	0,467	0,464
Lymphography	0,089	0,177	0,202	0,007	0,218	0,210
Primary Tumor	0,107	0,116	0,187	0,145	0,175	0,165
SPECT	0,018	0,103	0,125	0,002	0,108	0,126
Tic-Tac-Toe	0,004	0,006	0,006	0,000	-0,001	-0,001
""",
        "thesis-clustering",
    )
)

_add(
    PublishedTable(
        "C.2",
        "thesis",
        "V-measure averaged over 10 runs for all algorithm-kernel combinations. " + _CLUSTER_ABBREV,
        "V-measure against the class labels, mean over 10 runs",
        """
	CC-F	CC-H	CC-SH	SC-F	SC-H	SC-SH
Breast Cancer	0,075	0,002	0,084	0,000	0,003	0,081
Hayes-Roth	0,078	0,004	0,078	0,010	0,000	0,010
House Votes-84	0,058	0,495	0,484	0,001	0,476	0,472
Lymphography	0,138	0,218	0,268	0,039	0,288	0,273
Primary Tumor	0,224	0,195	0,286	0,308	0,336	0,330
SPECT	0,024	0,122	0,146	0,008	0,121	0,144
Tic-Tac-Toe	0,005	0,007	0,007	0,001	0,000	0,000
""",
        "thesis-clustering",
    )
)

_add(
    PublishedTable(
        "6.1",
        "thesis",
        "Adjusted Rand index for best structure using one arc. It is compared to the best result found in "
        "Table 5.1. " + _CLUSTER_ABBREV,
        "adjusted Rand index of correlation clustering with the Fisher kernel of the best single-arc network "
        "(exhaustive supervised search from the empty network), and the best entry of Table 5.1",
        """
	One arc	Best score previously
Breast Cancer	0.173	0.162 (SC-SH)
Hayes-Roth	0.093	0.082 (CC-F/SH)
House Votes-84	0.585	0.564 (SC-H/SH)
Lymphography	0.316	0.259 (SC-SH)
Primary Tumor	0.164	0.123 (CC-SH)
SPECT	0.066	0.057 (CC-SH)
Tic-Tac-Toe	0.069	0.020 (CC-SH)
""",
        "thesis-segments",
    )
)

_add(
    PublishedTable(
        "6.2",
        "thesis",
        "Theil's U for the class label conditioned on each variable individually, as well as the "
        "corresponding "
        "collapsed variable.",
        "uncertainty coefficient U(class | X) of the two variables of the best single arc and of their "
        "collapsed "
        "variable",
        """
	v_1	v_2	v_1 ∩ v_2
Breast Cancer	0,002	0,088	0,116
Hayes-Roth	0,181	0,178	0,431
House Votes-84	0,439	0,205	0,450
Lymphography	0,028	0,327	0,406
Primary Tumor	0,080	0,152	0,209
SPECT	0,039	0,033	0,062
Tic-Tac-Toe	0,015	0,015	0,031
""",
        "thesis-segments",
    )
)

_add(
    PublishedTable(
        "6.3",
        "thesis",
        "Cramer's V between the class label and each variable individually, as well as the corresponding "
        "collapsed "
        "variable.",
        "Cramér's V between the class and the two variables of the best single arc and their collapsed "
        "variable",
        """
	v_1	v_2	v_1 ∩ v_2
Breast Cancer	0,000	0,323	0,336
Hayes-Roth	0,459	0,455	0,621
House Votes-84	0,710	0,509	0,704
Lymphography	0,166	0,490	0,589
Primary Tumor	0,686	0,449	0,396
SPECT	0,177	0,153	0,220
Tic-Tac-Toe	0,130	0,130	0,177
""",
        "thesis-segments",
    )
)

_add(
    PublishedTable(
        "6.4",
        "thesis",
        "Adjusted Rand index for the best structure using two arcs compared to that of one arc.",
        "adjusted Rand index of correlation clustering with the Fisher kernel after a second greedily chosen "
        "arc",
        """
	Two arcs	One arc
Breast Cancer	0.204	0.173
Hayes-Roth	0.086	0.093
House Votes-84	0.606	0.585
Lymphography	0.316	0.316
Primary Tumor	0.201	0.164
SPECT	0.071	0.066
Tic-Tac-Toe	0.084	0.069
""",
        "thesis-segments",
    )
)

_CLASSIFY_ABBREV = "Abbreviations: Fisher kernel (F), Hamming kernel (H), scaled-Hamming kernel (SH)."

_add(
    PublishedTable(
        "D.1",
        "thesis",
        "Average accuracy over 10 runs for all combinations of classifier and kernel. " + _CLASSIFY_ABBREV,
        "test accuracy of kernel kNN (k = 7, uniform) and SVM (C = 1) over 10 random 80/20 splits; "
        "Lymphography and "
        "Primary Tumor were not evaluated ('-')",
        """
	kNN-F	kNN-H	kNN-SH	SVM-F	SVM-H	SVM-SH
Breast Cancer	0.671	0.736	0.705	0.693	0.700	0.693
Hayes-Roth	0.647	0.641	0.634	0.791	0.825	0.803
House Votes-84	0.915	0.924	0.907	0.876	0.952	0.943
Lymphography	-	-	-	-	-	-
Primary Tumor	-	-	-	-	-	-
SPECT	0.831	0.785	0.811	0.794	0.813	0.817
Tic-Tac-Toe	0.755	0.947	0.911	0.848	0.981	0.981
""",
        "thesis-classification",
    )
)

_add(
    PublishedTable(
        "D.2",
        "thesis",
        "Average cross-entropy loss over 10 runs for all combinations of classifier and kernel. "
        + _CLASSIFY_ABBREV,
        "test cross-entropy (log loss, nats) of the class probabilities over 10 random 80/20 splits",
        """
	kNN-F	kNN-H	kNN-SH	SVM-F	SVM-H	SVM-SH
Breast Cancer	0.897	1.013	0.951	0.611	0.595	0.616
Hayes-Roth	0.705	0.835	0.584	0.453	0.337	0.396
House Votes-84	0.264	0.329	0.366	0.355	0.134	0.164
Lymphography	-	-	-	-	-	-
Primary Tumor	-	-	-	-	-	-
SPECT	0.566	0.576	0.617	0.449	0.381	0.386
Tic-Tac-Toe	0.569	0.247	0.298	0.343	0.107	0.089
""",
        "thesis-classification",
        higher_is_better=False,
    )
)


def table(table_id: str) -> PublishedTable:
    """A published table by id (``"4.3"``, ``"5.1"``, ``"D.2"``, ...).

    Parameters
    ----------
    table_id : str

    Returns
    -------
    PublishedTable

    Raises
    ------
    KeyError
        For an unknown id.
    """
    try:
        return TABLES[str(table_id)]
    except KeyError:
        raise KeyError(f"No published table '{table_id}'; known: {', '.join(TABLES)}") from None


#: The thesis's experimental settings, as stated in its text.
THESIS_SETTINGS = {
    "structure": "exact search for the qNML-optimal DAG (Silander-Myllymäki), parameters by cNML",
    "missing_values": "original missing values are an extra category (thesis 3.4)",
    "imputation": {
        "test_ratios": [0.1, 0.2, 0.3, 0.4, 0.5],
        "missing_ratios": [0.1, 0.2, 0.3, 0.4, 0.5],
        "runs_per_setting": 10,
        "wknn_k": 3,
        "cross_entropy_floor": 1e-5,
    },
    "clustering": {
        "runs": 10,
        "cc_restarts": 25,
        "spectral": "scikit-learn defaults, k-means n_init 10, similarities shifted by their minimum",
        "cc_shift": "adaptive for H/SH, none for F",
    },
    "segments": {
        "algorithm": "correlation clustering",
        "metric": "adjusted Rand index",
        "search": "exhaustive over single arcs from the empty network, then a greedy second arc",
    },
    "classification": {"runs": 10, "split": "80/20", "knn_k": 7, "svm_C": 1.0},
}

#: The paper's data-summarization settings (section "Data summarization").
PAPER_SETTINGS = {
    "split": "50% train / 50% test",
    "discretization": "continuous features into (at most) 4 bins",
    "fig1_structure": "hill climbing with BIC (R package bnlearn), class treated as any other variable",
    "fig2_structure": "TAN",
    "fig3_structure": "KDB with K = 3",
    "parameters": "smoothed maximum likelihood, pseudo-count one",
    "k_values": "four subset sizes; the text names k = 200 and k = 1000",
    "random_subsets": 1000,
    "greedy_start": "best of the random subsets by the criterion",
    "parent_probabilities": "junction tree; sampling 10^6 rows when the tree width exceeds 10",
    "machine": "quad-CPU 3.10 GHz desktop computer, methods implemented in Python",
}

#: The paper's run times (paragraph after Fig. 1), seconds; ranges are (k = 200, k = 1000).
PAPER_RUNTIMES = {
    "text": (
        "To give a rough idea of the running times of the methods in Fig. 1, it took 17, 32 and 94 seconds "
        "to compute the parent probabilities and the Fisher kernel evaluations for training data points in "
        "data sets waveform-5000, nursery and letter, respectively. Running the greedy algorithm with the "
        "MMD distance for different subsets sizes took from 8 s (k = 200) to 3 min (k = 1000) in data set "
        "waveform-5000. For nursery and letter, the corresponding times were from 0.2 to 5 min and from 0.7 "
        "to 19 min, respectively. For the greedy chi2 method, the corresponding times ranged (in minutes) "
        "from 1 to 4, from 0.2 to 0.8 and from 1 to 5, respectively. To find the starting points for the "
        "greedy algorithms, sampling 1000 random subsets, recording both the MMD and chi2 statistics took "
        "from 9 to 18 s in waveform-5000, from 20 to 34 seconds in nursery and from 45 to 101 s in letter."
    ),
    "machine": PAPER_SETTINGS["machine"],
    "seconds": {
        # step: {dataset: (at k = 200, at k = 1000)} or a single number (independent of k)
        "kernel": {"waveform-5000": 17.0, "nursery": 32.0, "letter": 94.0},
        "greedy_mmd": {"waveform-5000": (8.0, 180.0), "nursery": (12.0, 300.0), "letter": (42.0, 1140.0)},
        "greedy_chi2": {"waveform-5000": (60.0, 240.0), "nursery": (12.0, 48.0), "letter": (60.0, 300.0)},
        "random_draws": {"waveform-5000": (9.0, 18.0), "nursery": (20.0, 34.0), "letter": (45.0, 101.0)},
    },
}


@dataclass(frozen=True)
class PaperFigure:
    id: str
    caption: str
    structure: str
    metrics: tuple
    claims: tuple = field(default_factory=tuple)  # (claim id, text) stated in the paper about the figure


PAPER_FIGURES = {
    "Fig. 1": PaperFigure(
        "Fig. 1",
        "Negative log likelihoods for different subset sizes and criterions in UCI datasets. Greedy methods "
        "refer "
        "to Algorithm 1 with the corresponding criterion. Full set represents the accuracy of the model "
        "trained "
        "with all the available data and random baseline is averaged result over models retrained with "
        "random "
        "subsets",
        "hc",
        ("nll",),
        (
            (
                "mmd_beats_chi2_and_random",
                "the Fisher kernel-based MMD finds more representative subsets than the compared criteria as "
                "measured "
                "by the log likelihood",
            ),
        ),
    ),
    "Fig. 2": PaperFigure(
        "Fig. 2",
        "Results on classification experiments for TAN. Misclassification rate on top and log loss on the "
        "bottom. Labeling of the lines follows Fig 1",
        "tan",
        ("error", "log_loss"),
        (
            (
                "mmd_beats_chi2_and_random",
                "in general the Fisher kernel-based selection criterion is able to find considerably better "
                "subsets in "
                "terms of both evaluation metrics",
            ),
            (
                "tan_smallest_k_close_to_full",
                "with TAN, the classification accuracy even with the smallest subset size is close to the "
                "full set "
                "accuracy in nursery and waveform-5000",
            ),
        ),
    ),
    "Fig. 3": PaperFigure(
        "Fig. 3",
        "Results on classification experiments for KDB. Missclassification rate on top and log loss on "
        "the bottom. Labeling of the lines follows Fig 1",
        "kdb",
        ("error", "log_loss"),
        (
            (
                "mmd_beats_chi2_and_random",
                "in general the Fisher kernel-based selection criterion is able to find considerably better "
                "subsets in "
                "terms of both evaluation metrics",
            ),
            (
                "kdb_nursery_small_k_near_random",
                "with KDB in data set nursery, the smallest subset sizes produce results close to or worse "
                "than the "
                "random sampling",
            ),
        ),
    ),
}
