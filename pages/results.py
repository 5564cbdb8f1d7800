"""Results: the stored tables and figures of the last full reproduction run (docs/results/), ours next to
the thesis's and the paper's published numbers.  Nothing is computed here; the run is
``python -m bnfk_core reproduce all -o docs/results`` (see docs/RESULTS.md)."""

import os
from pathlib import Path

import plotly.io as pio
import streamlit as st

from bnfk_core.reproduce import EXPERIMENTS, stored_results
from bnfk_ui import common

RESULTS = Path(os.environ.get("BNFK_RESULTS_DIR") or Path(__file__).resolve().parents[1] / "docs" / "results")
TITLES = {
    "thesis-imputation": "Thesis: imputation (Tables 4.1-4.4, B.1-B.2)",
    "thesis-clustering": "Thesis: clustering (Tables 5.1, C.1-C.2)",
    "thesis-segments": "Thesis: structure segments (Tables 6.1-6.4)",
    "thesis-classification": "Thesis: kernel classification (Tables D.1-D.2)",
    "paper-summarization": "Paper: data summarization (Figs. 1-3)",
    "speed": "Paper: run times",
    "kernel-zoo": "Kernel zoo: similarity measures vs the Fisher kernel (see the Kernel zoo page)",
    "kgv": "Bach & Jordan: BIC / BDe / KGV networks on ALARM (Fig. 1)",
    "kgv-toy": "Bach & Jordan: toy discrete and linear-Gaussian networks, KL against size (Fig. 1, left)",
    "kgv-hybrid": "Bach & Jordan: held-out log-likelihood on hybrid UCI data, KGV vs BDe (Table 1)",
    "landscape": "Metagraph kernel: score landscapes (Yackley et al. Figs. 1, 4)",
    "lca": "Latent class models: carcinoma vs poLCA, ARI of latent-class clustering",
    "imputation-peers": "Imputation: bnfk beside kNN and the most frequent value",
}


@st.cache_data(show_spinner=False)
def _load(folder: str, stamp: float):
    return stored_results(folder)


def _stamp(folder: Path) -> float:
    p = folder / "manifest.json"
    return p.stat().st_mtime if p.exists() else 0.0


def page():
    st.caption(
        "The last full reproduction run of the thesis's tables and the paper's figures, stored in "
        "`docs/results/`. Each compared cell reads **ours (published)**; the full tables add the "
        "difference and our extra columns. docs/RESULTS.md explains every difference larger than the noise."
    )
    entries = _load(str(RESULTS), _stamp(RESULTS))
    if not entries:
        st.info(
            f"No stored results in `{RESULTS}`. Run `python -m bnfk_core reproduce all -o docs/results` "
            "(or `--quick` for a minutes-long check) and reload."
        )
    else:
        with st.expander("Run details (versions, machine, wall times)"):
            import json

            man_path = RESULTS / "manifest.json"
            man = json.loads(man_path.read_text())
            st.write(
                {
                    "versions": man.get("versions"),
                    "machine": man.get("machine"),
                    "wall seconds": {e["name"]: round(e["record"]["wall_seconds"], 1) for e in entries},
                }
            )
            common.download(
                "manifest.json", man_path.read_bytes(), "manifest.json", "application/json", key="dl_manifest"
            )
        names = [e["name"] for e in entries]
        pick = st.radio(
            "Experiment",
            names,
            format_func=lambda n: TITLES.get(n, n),
            horizontal=True,
            key="w_results_experiment",
        )
        e = next(x for x in entries if x["name"] == pick)
        rec = e["record"]
        quick = " (quick run: fewer data sets, settings and repeats)" if rec.get("quick") else ""
        st.markdown(
            f"**Wall time** {rec['wall_seconds']:.0f} s · **seed** {rec.get('seed')} · "
            f"**structure** {rec.get('structure', '')} · finished {rec.get('finished', '')}{quick}"
        )
        full = st.toggle("Show all columns (ours, published, difference, extras)", key="w_results_full")
        for t in e["tables"]:
            st.subheader(t["title"])
            st.caption(t["setup"])
            df = t["frame"]
            if not full:
                ours = [c for c in df.columns if c.endswith(" (ours)")]
                show = ["dataset"] if "dataset" in df.columns else []
                for c in ours:
                    base = c[: -len(" (ours)")]
                    if f"{base} (published)" in df.columns:
                        show += [c, f"{base} (published)"]
                df = df[show] if len(show) > 1 else df
            st.dataframe(df, hide_index=True, key=f"df_{t['stem']}")
            c1, c2 = st.columns(2)
            with c1:
                common.download(
                    "CSV",
                    (RESULTS / f"{t['stem']}.csv").read_bytes(),
                    f"{t['stem']}.csv",
                    "text/csv",
                    key=f"dl_{t['stem']}_csv",
                )
            with c2:
                common.download(
                    "Markdown", t["markdown"], f"{t['stem']}.md", "text/markdown", key=f"dl_{t['stem']}_md"
                )
        for stem, path in e["figures"]:
            fig = pio.from_json(path.read_text())
            st.plotly_chart(fig, key=f"fig_{stem}", config={"displaylogo": False})
            common.download_figure(fig, stem)
        missing = [TITLES.get(n, n) for n in EXPERIMENTS if n not in names]
        if missing:
            st.caption("Not in this run: " + "; ".join(missing) + ".")


if common.start("Results", ":material/fact_check:"):
    page()
