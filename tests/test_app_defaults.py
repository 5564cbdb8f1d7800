"""Widget defaults come from one table (``bnfk_ui.state.choices.DEFAULTS``): the Imputation page opens
with the registry's benchmark settings (the ones a report or session file reads), and the Compare and
Prototypes pages' own keys are registered there too."""

from __future__ import annotations

from apptest_helpers import assert_clean, page_app

from bnfk_core.serving import settings
from bnfk_ui.state import choices


def test_every_setting_of_the_registry_has_its_default_in_the_one_table():
    for k, s in settings.REPORT_SETTINGS.items():
        assert choices.DEFAULTS[k] == s.default, k
    for k in ("cmp_vars", "cmp_rows", "cmp_seed", "cmp_kernel", "cmp_alpha", "proto_ks"):
        assert k in choices.DEFAULTS, k


def test_the_imputation_page_opens_with_the_registrys_benchmark_settings():
    at = page_app("imputation.py", 180).run()
    assert_clean(at)
    for k in ("imp_methods", "imp_structure", "imp_test", "imp_missing", "imp_repeats", "imp_seed"):
        assert at.session_state[k] == settings.REPORT_SETTINGS[k].default, k
    # the 435 rows of house votes: fewer than the registry's 500, so the page clamps to the table
    assert at.session_state["imp_rows"] == min(435, settings.REPORT_SETTINGS["imp_rows"].default)
    assert at.selectbox(key="imp_structure").value == settings.REPORT_SETTINGS["imp_structure"].default


def test_the_compare_page_reads_its_defaults_from_the_table():
    at = page_app("compare.py", 240).run()
    assert_clean(at)
    for k in ("cmp_seed", "cmp_kernel"):
        assert at.session_state[k] == choices.DEFAULTS[k], k
    assert at.session_state["cmp_rows"] == choices.DEFAULTS["cmp_rows"]
