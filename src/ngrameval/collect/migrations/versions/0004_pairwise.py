"""side-by-side (pairwise) studies: the second system of a trial, the side shown left, the winner and reason

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26

A new table only: existing studies are unchanged.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pair",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("trial_id", sa.Integer(), nullable=False),
        sa.Column("system_b", sa.String(length=255), nullable=False),
        sa.Column("output_b", sa.Text(), nullable=False),
        sa.Column("left", sa.String(length=1), nullable=False),
        sa.Column("winner", sa.String(length=4), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["trial_id"], ["trial.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("trial_id"),
    )


def downgrade() -> None:
    op.drop_table("pair")
