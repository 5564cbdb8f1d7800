"""bnfk_ui.warmup: one background thread per process that loads the compiled clustering and the export check,
and leaves the clustering's results unchanged."""

import numpy as np

from bnfk_core.analyses.cluster.correlation import correlation_clustering
from bnfk_ui import warmup


def test_one_thread_per_process_and_it_finishes():
    first = warmup.start()
    assert warmup.start() is first
    first.join(120)
    assert not first.is_alive()


def test_results_equal_after_the_warm_up():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(60, 4))
    K = A @ A.T
    cold = correlation_clustering(K, 3, restarts=5, seed=1, compiled=False)
    warmup.start().join(120)
    warm = correlation_clustering(K, 3, restarts=5, seed=1)
    assert np.array_equal(cold.labels, warm.labels)
    assert warm.cost == cold.cost or abs(warm.cost - cold.cost) < 1e-9 * abs(cold.cost)


def test_the_fisher_kernels_compiled_pair_sums_and_the_emoji_pattern_are_loaded_by_the_warm_up():
    """In a fresh process nothing else has called them: after the warm-up both have a compiled signature, and
    Streamlit's emoji pattern is compiled."""
    import subprocess
    import sys

    code = (
        "from bnfk_ui import warmup; from bnfk_core.kernels import fisher; "
        "import sys; assert not fisher._pair_kernel.signatures and 'streamlit.emojis' not in sys.modules; "
        "warmup.start().join(120); "
        "print(len(fisher._pair_kernel.signatures), len(fisher._pair_kernel_serial.signatures), "
        "'streamlit.emojis' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["1", "1", "True"]


def test_the_setup_scripts_two_warm_up_processes_cover_every_group_once():
    """run-app.sh compiles the kernels in two processes, each given ``--only`` a list of groups: together the
    lists must name every group of the warm-up exactly once (a group left out would compile on first call)."""
    import re
    from pathlib import Path

    from bnfk_core.analyses.warmup import GROUPS
    from bnfk_core.cli.warmup import GROUP_NAMES

    script = (Path(__file__).resolve().parents[1] / "run-app.sh").read_text()
    lists = re.findall(r"bnfk_core warmup --only (\S+)", script)
    assert len(lists) == 2
    named = [g for part in lists for g in part.split(",")]
    assert sorted(named) == sorted(GROUP_NAMES) == sorted(GROUPS)
