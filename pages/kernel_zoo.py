"""Kernel zoo: the Fisher kernel among the categorical similarity measures of Boriah et al. (2008) -- the
stored run of ``python -m bnfk_core reproduce kernel-zoo -o docs/results`` (clustering ARI/AMI and kNN
accuracy on the bundled data sets, average ranks with the Nemenyi critical difference), plus the measures'
definitions and PSD flags.  Nothing is computed here."""

import json
import os
from pathlib import Path

import pandas as pd
import streamlit as st

from bnfk_core.kernels.similarity import BORIAH_MEASURES, MEASURES
from bnfk_core.registry import KERNELS
from bnfk_core.reproduce.kernel_zoo import METRICS, ZOO_DIR
from bnfk_core.views.figures import kernel_zoo as fig_zoo
from bnfk_ui import common

RESULTS = Path(os.environ.get("BNFK_RESULTS_DIR") or Path(__file__).resolve().parents[1] / "docs" / "results")
PSD = {True: "yes", False: "no (a similarity)", None: "unknown (no counterexample found)"}


@st.cache_data(show_spinner=False)
def _load(folder: str, stamp: float):
    zoo = Path(folder) / ZOO_DIR
    frames = {n: pd.read_csv(zoo / f"{n}.csv") for n in ("kernel_zoo", "kernel_zoo_ranks", "kernel_zoo_runs")}
    man = (
        json.loads((Path(folder) / "manifest.json").read_text())
        if (Path(folder) / "manifest.json").exists()
        else {}
    )
    md = (zoo / "kernel_zoo.md").read_text() if (zoo / "kernel_zoo.md").exists() else ""
    return frames, man.get("experiments", {}).get("kernel-zoo", {}), md


def _stamp(folder: Path) -> float:
    p = folder / ZOO_DIR / "kernel_zoo_ranks.csv"
    return p.stat().st_mtime if p.exists() else 0.0


def _measures_table() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "name": n,
                "measure": MEASURES[n].label,
                "PSD": PSD[MEASURES[n].psd],
                "correlation-clustering shift": KERNELS[n].shift,
                "what it does": MEASURES[n].description,
            }
            for n in BORIAH_MEASURES
        ]
    )


def page():
    st.caption(
        "Every similarity measure of Boriah, Chandola & Kumar (2008, Table 2) is a kernel of the registry "
        "(Kernel, Clustering and classification pages, CLI `--kernel`). Here they meet the Fisher kernel of "
        "four networks (empty, Chow-Liu, hc/BIC, exact qNML), the normalised Fisher kernel and the "
        "latent-class "
        "rows on the bundled data sets."
    )
    with st.expander("The measures, their PSD flags and what the shift means"):
        st.dataframe(_measures_table(), hide_index=True, key="df_zoo_measures")
        st.caption(
            "A measure that is not positive semidefinite is still a similarity: correlation clustering "
            "double-centres it (adaptive shift) and spectral clustering min-shifts it, neither needs PSD. "
            "The kernel distance behind kNN can then be negative (clipped at 0) and kernel PCA drops "
            "negative directions. With missing cells the weights are renormalised over the attributes "
            "observed in both rows, which can make any measure indefinite."
        )
    stamp = _stamp(RESULTS)
    if not stamp:
        st.info(
            f"No stored kernel-zoo run in `{RESULTS / ZOO_DIR}`. Run `python -m bnfk_core reproduce "
            "kernel-zoo "
            "-o docs/results` (or `--quick` for a smoke run of under a minute) and reload."
        )
    else:
        frames, rec, md = _load(str(RESULTS), stamp)
        summary, ranks, runs = frames["kernel_zoo"], frames["kernel_zoo_ranks"], frames["kernel_zoo_runs"]
        quick = " — quick run (smoke test: few data sets, rows and seeds)" if rec.get("quick") else ""
        st.markdown(
            f"**{summary['dataset'].nunique()} data sets · {len(ranks)} kernels · seeds "
            f"{', '.join(map(str, rec.get('seeds', [])))} · ≤ {rec.get('n_max', '?')} rows each** · wall "
            f"time {rec.get('wall_seconds', float('nan')):.0f} s{quick}"
        )
        metric = st.selectbox("Metric", list(METRICS), format_func=METRICS.get, key="w_zoo_metric")
        cd = (rec.get("tests", {}).get(metric) or {}).get("nemenyi_cd")
        st.plotly_chart(fig_zoo.rank_dot_figure(ranks, metric, METRICS[metric], cd), key="zoo_ranks")
        order = list(ranks.sort_values(metric)["label"])
        st.plotly_chart(fig_zoo.dataset_heatmap(summary, metric, METRICS[metric], order), key="zoo_heatmap")
        if rec.get("reading"):
            st.subheader("Reading")
            for line in rec["reading"]:
                st.markdown(f"- {line}")
        st.subheader("Average ranks")
        st.dataframe(ranks, hide_index=True, key="df_zoo_ranks")
        with st.expander("Networks used per data set"):
            st.dataframe(pd.DataFrame(rec.get("networks", {})).T, key="df_zoo_networks")
        c1, c2, c3, c4 = st.columns(4)
        with c1:
            common.download(
                "Summary CSV", summary.to_csv(index=False), "kernel_zoo.csv", "text/csv", key="dl_zoo_sum"
            )
        with c2:
            common.download(
                "Ranks CSV", ranks.to_csv(index=False), "kernel_zoo_ranks.csv", "text/csv", key="dl_zoo_rk"
            )
        with c3:
            common.download(
                "Runs CSV", runs.to_csv(index=False), "kernel_zoo_runs.csv", "text/csv", key="dl_zoo_runs"
            )
        with c4:
            common.download("Report (markdown)", md, "kernel_zoo.md", "text/markdown", key="dl_zoo_md")


if common.start("Kernel zoo", ":material/leaderboard:"):
    page()
