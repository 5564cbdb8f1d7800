"""Imputation: the thesis's benchmark (hide cells at random, score BN / Mode / wKNN / ...) and
filling the loaded data's missing cells with the current model."""

import streamlit as st

from bnfk_core.analyses.impute import benchmark as impute_benchmark
from bnfk_core.analyses.impute import methods as impute_methods
from bnfk_core.kernels.embed import sample_rows
from bnfk_core.registry import IMPUTERS
from bnfk_ui import common
from bnfk_ui.sections import data as sec_data
from bnfk_ui.sections import hybrid as hybrid_section
from bnfk_ui.sections import imputation as sec_imp
from bnfk_ui.state import bigfiles, choices, hybrid, messages, tables

RATIOS = list(impute_benchmark.DEFAULT_RATIOS)  # the thesis grid: pick all five of each for its 25 settings


def page():
    hybrid_section.binned_notice(
        "The benchmark"
    )  # numbers kept: the hybrid network imputes under the second tab
    ss = st.session_state
    feat = tables.feature_data()
    t_bench, t_mine = st.tabs(["Benchmark", "Impute my data"])

    with t_bench:
        if hybrid.on():  # numbers kept: the mixed benchmark (RMSE of numbers, accuracy of categories) first
            hybrid_section.benchmark_panel()
            st.markdown("**The thesis's benchmark** (categories only)")
        st.caption(
            "The thesis's experiment (ch. 4): a random test part of the rows gets a fraction of its cells "
            "hidden "
            "completely at random; every method predicts a distribution for each hidden cell, scored by the "
            "accuracy of its most probable value and the cross-entropy (capped at −log 10⁻⁵). The class "
            "column "
            "is never imputed. Averages give every setting the same weight; the spread is over all runs."
        )
        c1, c2, c3 = st.columns([2, 2, 1.3])
        choices.ensure(*(k for k in choices.DEFAULTS if k.startswith("imp_")))
        ss.imp_rows = int(min(max(ss.imp_rows, 2), feat.n_rows))  # a link's or file's value: within the table
        with c1:
            methods = st.multiselect(
                "Methods",
                list(IMPUTERS),
                format_func=lambda m: IMPUTERS[m].label,
                key="imp_methods",
                help="The thesis's methods, networks learned from every row (BN (all rows), "
                "structural EM) and the peers analysts use (Mode, kNN on one-hot codes).",
            )
            structures = impute_benchmark.structure_choices()
            bn_structure = st.selectbox(
                "Structure of the BN methods (thesis protocol: {score} score, {params} CPTs)".format(
                    **impute_methods.IMPUTE_LEARN
                ),
                list(structures),
                format_func=structures.get,
                key="imp_structure",
            )
        with c2:
            trs = st.multiselect(
                "Test ratios",
                RATIOS,
                key="imp_test",
                help="Fraction of the rows that form the test part (thesis: 0.1–0.5).",
            )
            mrs = st.multiselect(
                "Missing ratios",
                RATIOS,
                key="imp_missing",
                help="Fraction of the test part's cells hidden (thesis: 0.1–0.5).",
            )
        with c3:
            repeats = st.number_input("Repeats per setting", 1, 20, key="imp_repeats")
            seed = st.number_input("Seed", 0, 10**6, key="imp_seed")
            n_rows = st.number_input(
                "Rows (sampled with the seed)",
                min(2, feat.n_rows),
                feat.n_rows,
                step=100,
                key="imp_rows",
                help=f"The default settles in seconds; all "
                f"{feat.n_rows:,} rows, every ratio and 10 repeats make the thesis's full run.",
            )
        n_runs = len(trs) * len(mrs) * int(repeats)
        bench = (
            feat if n_rows >= feat.n_rows else feat.subset(sample_rows(feat.n_rows, int(n_rows), int(seed)))
        )
        st.caption(
            f"{bench.n_rows:,} of {feat.n_rows:,} rows × {feat.n_vars} variables · {n_runs} runs per method. "
            "The thesis's full run (all rows, 25 settings × 10 repeats): `python -m bnfk_core "
            "impute-benchmark "
            f"{' '.join(choices.cli_data_args())} --full-grid`."
        )
        if st.button(
            "Run the benchmark", type="primary", disabled=not (methods and trs and mrs), key="imp_run"
        ):
            bar = st.progress(0.0, text="hiding cells")
            with common.shown_errors():
                res = impute_benchmark.benchmark(
                    bench,
                    methods,
                    test_ratios=sorted(trs),
                    missing_ratios=sorted(mrs),
                    repeats=int(repeats),
                    seed=int(seed),
                    structure=bn_structure,
                    **impute_methods.IMPUTE_LEARN,
                    progress=lambda f, msg: bar.progress(min(max(f, 0.0), 1.0), text=msg),
                )
                ss.imp_result = (feat.fingerprint(), res)
            bar.empty()
        stored = ss.get("imp_result")
        if stored and stored[0] == feat.fingerprint():
            sec_imp.benchmark_results(stored[1])

    with t_mine:
        if hybrid.on():  # numbers kept: the hybrid network fills numbers as numbers
            hybrid_section.impute_panel()
            return
        d = tables.data()
        big = bigfiles.streamed() is not None  # a file read in chunks: the sample here, all rows below
        offered = sec_imp.IMPUTERS_OFFERED
        which = (
            "current"
            if big
            else st.radio("Imputer", list(offered), format_func=offered.get, key="imp_network")
        )
        if not big:
            st.caption(sec_imp.ORDER_NOTE)
        n_missing = sec_data.missing_cells(tables.model_features()) if big else int((feat.codes < 0).sum())
        seed = int(ss.imp_seed)
        if n_missing == 0:
            msg = "The loaded feature columns have no missing cells."
            if ss.missing_policy == "category":
                msg += (
                    " Missing tokens are read as the category '?' under the current loading options; choose "
                    "'are missing values' on the Data page to impute them."
                )
            st.info(messages.plain(msg))
        elif not common.asked("Impute the missing cells", "imp_mine_run", d.fingerprint()):
            st.caption(
                f"{n_missing:,} missing cells: each is filled with its most probable value under the chosen "
                "imputer, given the row's observed values "
                + (
                    "(the network of the Structure page)."
                    if which == "current"
                    else "(learning from every row takes a while on a large table)."
                )
            )
        else:
            with common.shown_errors():
                sec_imp.fill_missing_cells(feat, d, which, seed, big)


if common.start("Imputation"):
    page()
