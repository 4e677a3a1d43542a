"""error spans of ESA and MQM trials

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-26

A new table ``span`` (one row per marked span or omission of an answered trial); nothing else changes.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "span",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("trial_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("start", sa.Integer(), nullable=True),
        sa.Column("end", sa.Integer(), nullable=True),
        sa.Column("severity", sa.String(length=64), nullable=False),
        sa.Column("category", sa.String(length=160), nullable=False),
        sa.ForeignKeyConstraint(["trial_id"], ["trial.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("trial_id", "position", name="uq_span_position"),
    )
    op.create_index("ix_span_trial_id", "span", ["trial_id"])


def downgrade() -> None:
    op.drop_index("ix_span_trial_id", table_name="span")
    op.drop_table("span")
