"""Alembic environment of ``ngrameval collect``: the URL comes from the config set by
:func:`ngrameval.collect.store.upgrade`; the target metadata is the store's models. Alembic runs this file;
imported any other way (pytest's doctest collection) it does nothing."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from ngrameval.collect.store import Base


def run() -> None:
    config = context.config
    url = config.get_main_option("sqlalchemy.url")
    if url is None:
        raise RuntimeError("no sqlalchemy.url: run migrations through ngrameval.collect.store.upgrade")
    engine = create_engine(url)
    with engine.connect() as connection:
        context.configure(
            connection=connection, target_metadata=Base.metadata, render_as_batch=url.startswith("sqlite")
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if hasattr(context, "config"):  # only inside an Alembic command
    run()
