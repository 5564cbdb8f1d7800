"""Subcommand ``options``: every option family as Markdown tables, written from the registries
(``python -m bnfk_core options -o docs/OPTIONS.md``).  It reads only the light member declarations, so it
starts at once."""

from __future__ import annotations

from ..registry import (
    CLASSIFIERS,
    CLUSTERERS,
    CRITERIA,
    ESTIMATORS,
    IMPUTERS,
    KERNELS,
    LEARNERS,
    MISSING_DATA,
    SCORES,
)
from .common import add_result_output

__all__ = ["options_markdown", "register", "SUBCOMMANDS"]

#: the subcommand this module adds, with its ``--help`` line
SUBCOMMANDS = {
    "options": "every option family (kernels, learners, scores, ...) as Markdown tables (docs/OPTIONS.md)"
}


def options_markdown() -> str:
    """``docs/OPTIONS.md``: one table per option family, written from the registries (their built-in members
    and every member registered since)."""

    def cell(text) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    psd = {True: "yes", False: "no", None: "unknown"}
    out = [
        "# Options (generated from `bnfk_core.registry`; do not edit)",
        "",
        "Every name below is accepted wherever its family is: the CLI flags, the app's widgets, the links "
        "and",
        "session files, and the Python API. Regenerate with `python -m bnfk_core options > docs/OPTIONS.md`.",
        "",
        "## Kernels (`kernel --kind`, `cluster`/`classify --kernel`)",
        "",
        "| name | label | abbr | family | PSD | shift for correlation clustering | network | description |",
        "|---|---|---|---|---|---|---|---|",
    ]
    out += [
        f"| `{k.name}` | {cell(k.label)} | {cell(k.abbr)} | {k.family} | {psd[k.psd]} | {k.shift} | "
        f"{'yes' if k.uses_network else 'no'} | {cell(k.description)} |"
        for k in KERNELS.values()
    ]
    out += [
        "",
        "## Structure-learning methods (`learn --structure`, `--structure`)",
        "",
        "| name | label | class as a node | optimises the score | options | at most variables | description "
        "|",
        "|---|---|---|---|---|---|---|",
    ]
    out += [
        f"| `{m.name}` | {cell(m.label)} | {'yes' if m.needs_class else 'no'} | "
        f"{'yes' if m.uses_score else 'no'} | "
        f"{cell(', '.join(f'`{o.name}`' for o in m.options if o.user) or '-')} | "
        f"{m.max_variables if m.max_variables is not None else '-'} | {cell(m.description)} |"
        for m in LEARNERS.values()
    ]
    out += ["", "## Scores (`--score`)", "", "| name | label | description |", "|---|---|---|"]
    out += [f"| `{s.name}` | {cell(s.label)} | {cell(s.description)} |" for s in SCORES.values()]
    out += [
        "",
        "## CPT estimators (`--params`)",
        "",
        "| name | label | pseudo-count | description |",
        "|---|---|---|---|",
    ]
    out += [
        f"| `{e.name}` | {cell(e.label)} | {'yes' if e.uses_pseudo_count else 'no'} | {cell(e.description)} |"
        for e in ESTIMATORS.values()
    ]
    out += [
        "",
        "## Missing cells in structure learning (`--missing-data`)",
        "",
        "| name | label | description |",
        "|---|---|---|",
    ]
    out += [f"| `{m.name}` | {cell(m.label)} | {cell(m.description)} |" for m in MISSING_DATA.values()]
    out += [
        "",
        "## Imputation methods (`impute-benchmark --methods`)",
        "",
        "| name | label | peer | needs | description |",
        "|---|---|---|---|---|",
    ]
    out += [
        f"| `{m.name}` | {cell(m.label)} | {'yes' if m.peer else 'no'} | {cell(m.needs or '-')} | "
        f"{cell(m.description)} |"
        for m in IMPUTERS.values()
    ]
    out += [
        "",
        "## Clustering algorithms (`cluster --algorithm`)",
        "",
        "| name | label | uses a kernel | description |",
        "|---|---|---|---|",
    ]
    out += [
        f"| `{c.name}` | {cell(c.label)} | {'yes' if c.uses_kernel else 'no'} | {cell(c.description)} |"
        for c in CLUSTERERS.values()
    ]
    out += [
        "",
        "## Classifiers (`classify --classifier`)",
        "",
        "| name | label | in tables | description |",
        "|---|---|---|---|",
    ]
    out += [
        f"| `{c.name}` | {cell(c.label)} | {cell(c.table_label)} | {cell(c.description)} |"
        for c in CLASSIFIERS.values()
    ]
    out += [
        "",
        "## Prototype criteria (`prototypes --criterion`)",
        "",
        "| name | label | description |",
        "|---|---|---|",
    ]
    out += [f"| `{c.name}` | {cell(c.label)} | {cell(c.description)} |" for c in CRITERIA.values()]
    out += [
        "",
        "## The options of every member",
        "",
        "What each member's behaviour takes, declared once in its family's `members.py` "
        "(`bnfk_core.registry.Option`) and checked where it enters: a name it does not declare or a value "
        "outside what is allowed is refused in one sentence. Options the code passes (a network, a "
        "callback) are left out.",
        "",
        "| family | member | option | allowed | default | what it does |",
        "|---|---|---|---|---|---|",
    ]
    families = (
        KERNELS,
        LEARNERS,
        SCORES,
        ESTIMATORS,
        MISSING_DATA,
        IMPUTERS,
        CLUSTERERS,
        CLASSIFIERS,
        CRITERIA,
    )
    out += [
        f"| {registry.family} | `{spec.name}` | `{o.name}` | {cell(o.describe())} | "
        f"{cell('-' if o.default is None else f'`{o.default!r}`')} | {cell(o.help)} |"
        for registry in families
        for spec in registry.values()
        for o in spec.options
        if o.user
    ]
    out += [
        "",
        "## The options every member of a family is handed",
        "",
        "What a family's entry point hands each of its members (`bnfk_core.registry.Registry.context`): a "
        "member that does not read one ignores it, but a value outside what is allowed is refused whichever "
        "member is chosen.",
        "",
        "| family | option | allowed | default | what it does |",
        "|---|---|---|---|---|",
    ]
    out += [
        f"| {registry.family} | `{o.name}` | {cell(o.describe())} | "
        f"{cell('-' if o.default is None else f'`{o.default!r}`')} | {cell(o.help)} |"
        for registry in families
        for o in registry.shared()
        if o.user
    ]
    return "\n".join(out) + "\n"


def _cmd_options(args) -> str:
    return options_markdown()


def register(sub) -> None:
    p = sub.add_parser(
        "options",
        help=SUBCOMMANDS["options"],
        description="Print every option family as Markdown tables (the source of docs/OPTIONS.md).",
    )
    add_result_output(p, ".md", "the Markdown tables")
    p.set_defaults(func=_cmd_options)
