"""Parts of the Latent classes page: the fits kept per setting, the identifiability and rank diagnostic of a
model, the modal classes against a column, and the model handed to the Kernel page or downloaded."""

import json

import streamlit as st

from bnfk_core.analyses.cluster.clustering import clustering_metrics
from bnfk_core.kernels.latent_fisher import LCA_FISHER, kernel_network
from bnfk_core.lca import fit_lca
from bnfk_core.lca.fibers import Moments, identifiability, rank_diagnostic
from bnfk_core.network.model import model_to_bif
from bnfk_core.views.figures import latent_classes as figs

from .. import common
from ..state import messages

__all__ = ["fitted", "fits", "identifiability_panel", "agreement", "hand_over"]


@st.cache_resource(show_spinner=False, max_entries=16)
def fitted(_feat, fingerprint: str, k: int, starts: int, seed: int):
    """The latent class model with ``k`` classes, the best of ``starts`` seeded EM starts, kept per data
    fingerprint and setting."""
    return fit_lca(_feat, k, starts, seed)


def fits(feat, ks, starts, seed):
    """The models for every number of classes in ``ks``, fitted under a progress bar (cached, see
    :func:`fitted`)."""
    bar = st.progress(0.0, text="Fitting…")
    out = []
    for j, k in enumerate(ks):
        bar.progress(j / len(ks), text=f"EM for {k} classes ({starts} starts)…")
        out.append(fitted(feat, feat.fingerprint(), int(k), int(starts), int(seed)))
    bar.empty()
    return out


def identifiability_panel(m, feat) -> None:
    """Whether the model's parameters are identifiable (Kruskal's condition, the fibers seed) and how many
    classes the data's cross-moments support (the rank diagnostic)."""
    st.subheader("Identifiability")
    v = identifiability(m)
    verdict = {True: "identifiable", False: "not identifiable", None: "not shown either way"}[
        v["identifiable"]
    ]
    st.metric(
        "Parameter sets with this distribution", str(v["parameter_sets"]), help=messages.plain(v["reason"])
    )
    st.caption(f"**{verdict}** — {messages.plain(v['reason'])}.")
    if v["kruskal"]:
        kr = v["kruskal"]
        st.caption(
            f"Kruskal ranks {kr['ranks']} (sum {kr['sum']}, needs {kr['needed']}) over three groups of "
            f"variables; the seed's condition {'holds' if v['seed_condition']['holds'] else 'fails'}."
        )
    r = rank_diagnostic(Moments.from_codes(feat.codes, feat.cardinalities), n_rows=feat.n_rows)
    st.caption(
        f"Rank diagnostic (data): the cross-moment matrix supports about **{r['classes_supported']}** "
        f"classes (detects at most {r['max_detectable']})."
    )
    st.plotly_chart(
        figs.singular_values_figure(r["singular_values"], r["tol"]),
        key="lca_sv",
        config={"displaylogo": False},
    )


def agreement(d, modal) -> None:
    """ARI, AMI and V-measure of the modal classes against a chosen column (the class column first)."""
    cols = [c for c in d.variables]
    if not cols:
        return
    default = cols.index(d.class_column) if d.class_column in cols else 0
    col = st.selectbox("Compare the modal classes with the column", cols, index=default, key="w_lca_label")
    lab = d.codes[:, d.index(col)]
    m = clustering_metrics(lab, modal)
    c1, c2, c3 = st.columns(3)
    c1.metric("ARI", f"{m['ari']:.3f}" if m["ari"] is not None else "–")
    c2.metric("AMI", f"{m['ami']:.3f}" if m["ami"] is not None else "–")
    c3.metric("V-measure", f"{m['v_measure']:.3f}" if m["v_measure"] is not None else "–")


def hand_over(m, feat) -> None:
    """Hand the model to the Kernel page's latent-class Fisher kernel, and download it (BIF, JSON)."""
    ss = st.session_state
    net = kernel_network(m)
    c1, c2, c3 = st.columns(3)
    if c1.button(
        "Use in the Kernel page",
        key="lca_use",
        icon=":material/hub:",
        help="The Kernel page's latent-class Fisher kernel then uses this model (hidden class node).",
    ):
        ss.lca_network = (feat.fingerprint(), net)
        st.success(f"The Kernel page's '{LCA_FISHER}' kernel now uses this {m.n_classes}-class model.")
    with c2:
        common.download(
            "Model (BIF)",
            model_to_bif(m.to_bayesnet()).encode("utf-8"),
            f"{common.dataset_name()}_lca{m.n_classes}.bif",
            "text/plain",
            key="dl_lca_bif",
        )
    with c3:
        common.download(
            "Model (JSON)",
            json.dumps(m.to_bayesnet().to_json_dict(), indent=1).encode("utf-8"),
            f"{common.dataset_name()}_lca{m.n_classes}.json",
            "application/json",
            key="dl_lca_json",
        )
