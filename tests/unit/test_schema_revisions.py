"""The read-only commands check a database's schema without importing alembic
(store/engine.py `revisions`): what they read from the migration scripts must be what
alembic itself reads from them."""

from __future__ import annotations

from alembic.config import Config
from alembic.script import ScriptDirectory

from livereview.store.engine import MIGRATIONS, revisions


def test_the_revisions_read_without_alembic_are_alembic_s_own() -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    scripts = ScriptDirectory.from_config(config)
    known, head = revisions()
    assert known == {s.revision for s in scripts.walk_revisions()}
    assert head == scripts.get_current_head()
