"""``recallbench --help``: the choices of every config group, shared parts left out.

``conf/hydra/help/recallbench.yaml`` is Hydra's help template; its group list is the resolver
``recallbench_choices`` registered here (by ``cli.main``, before Hydra composes). A ``_``-prefixed
file is a shared part that choices extend through ``defaults`` (``conf/memory/_cosine_cut.yaml``),
never a choice, so it is not listed; Hydra's own ``$APP_CONFIG_GROUPS`` would list it.
"""

from __future__ import annotations

from pathlib import Path

from omegaconf import OmegaConf

from recallbench import CONF_DIR

RESOLVER = "recallbench_choices"


def config_choices(conf_dir: Path = CONF_DIR) -> str:
    """``group: a, b, c`` per config group (Hydra's own groups and ``_`` files left out)."""
    lines = []
    for group in sorted(p for p in Path(conf_dir).iterdir() if p.is_dir() and p.name != "hydra"):
        options = sorted(p.stem for p in group.glob("*.yaml") if not p.stem.startswith("_"))
        if options:
            lines.append(f"{group.name}: {', '.join(options)}")
    return "\n".join(lines)


def register_help_resolver() -> None:
    """Make ``${recallbench_choices:}`` resolvable (idempotent)."""
    OmegaConf.register_new_resolver(RESOLVER, lambda: config_choices(), replace=True)
