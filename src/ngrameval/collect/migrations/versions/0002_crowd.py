"""a real crowd: leases on stimuli, assignments with their own completion codes, Latin-square rows per judge
group, server-side trial times, consent and a training phase

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-26

Data carried over: every stored description becomes a closed lease (its annotator has been shown its stimulus),
each stimulus' ``done`` counts its descriptions, and a judge's existing row belongs to the square of their group.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "assignment",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("external", sa.String(length=128), nullable=False),
        sa.Column("code", sa.String(length=64), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["annotator_id"], ["annotator.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("code"),
        sa.UniqueConstraint("platform", "external", name="uq_assignment_platform_external"),
    )
    op.create_index("ix_assignment_annotator_id", "assignment", ["annotator_id"])
    op.create_table(
        "lease",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("stimulus_id", sa.Integer(), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("issued", sa.DateTime(), nullable=False),
        sa.Column("expires", sa.DateTime(), nullable=False),
        sa.Column("closed", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["annotator_id"], ["annotator.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["stimulus_id"], ["stimulus.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("annotator_id", "stimulus_id", name="uq_lease_once"),
        sa.UniqueConstraint("token"),
    )
    op.create_index("ix_lease_annotator_id", "lease", ["annotator_id"])
    op.create_index("ix_lease_stimulus_id", "lease", ["stimulus_id"])
    op.create_index("ix_lease_open", "lease", ["closed", "expires"])

    with op.batch_alter_table("annotator") as batch:
        batch.add_column(sa.Column("square", sa.String(length=32), nullable=True))
        batch.add_column(sa.Column("consented", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("trained", sa.String(length=8), nullable=True))
        batch.create_unique_constraint("uq_annotator_square_row", ["square", "judge_index"])
    with op.batch_alter_table("invite") as batch:
        batch.add_column(sa.Column("claim", sa.String(length=64), nullable=True))
    with op.batch_alter_table("description") as batch:
        batch.add_column(sa.Column("assignment_id", sa.Integer(), nullable=True))
        batch.create_index("ix_description_assignment_id", ["assignment_id"])
        batch.create_foreign_key(
            "fk_description_assignment", "assignment", ["assignment_id"], ["id"], ondelete="SET NULL"
        )
    with op.batch_alter_table("stimulus") as batch:
        batch.add_column(sa.Column("done", sa.Integer(), server_default="0", nullable=False))
        batch.add_column(sa.Column("control", sa.Boolean(), server_default=sa.false(), nullable=False))
    with op.batch_alter_table("trial") as batch:
        batch.add_column(sa.Column("lease", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("shown", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("assignment_id", sa.Integer(), nullable=True))
        batch.create_index("ix_trial_assignment_id", ["assignment_id"])
        batch.create_unique_constraint("uq_trial_lease", ["lease"])
        batch.create_foreign_key("fk_trial_assignment", "assignment", ["assignment_id"], ["id"], ondelete="SET NULL")

    # the work already stored: closed leases, fill counts, the squares of the judges already placed (before this
    # revision rows were numbered across groups, so they stay unique within each group)
    op.execute(
        "INSERT INTO lease (annotator_id, stimulus_id, token, issued, expires, closed) "
        "SELECT annotator_id, stimulus_id, token, created, created, created FROM description"
    )
    op.execute(
        "UPDATE stimulus SET done = (SELECT count(*) FROM description d "
        "WHERE d.stimulus_id = stimulus.id AND d.skipped = false)"
    )
    op.execute('UPDATE annotator SET square = "group" WHERE judge_index IS NOT NULL')
    op.execute("UPDATE trial SET lease = token WHERE token IS NOT NULL")


def downgrade() -> None:
    with op.batch_alter_table("trial") as batch:
        batch.drop_constraint("fk_trial_assignment", type_="foreignkey")
        batch.drop_constraint("uq_trial_lease", type_="unique")
        batch.drop_index("ix_trial_assignment_id")
        batch.drop_column("assignment_id")
        batch.drop_column("shown")
        batch.drop_column("lease")
    with op.batch_alter_table("stimulus") as batch:
        batch.drop_column("control")
        batch.drop_column("done")
    with op.batch_alter_table("description") as batch:
        batch.drop_constraint("fk_description_assignment", type_="foreignkey")
        batch.drop_index("ix_description_assignment_id")
        batch.drop_column("assignment_id")
    with op.batch_alter_table("annotator") as batch:
        batch.drop_constraint("uq_annotator_square_row", type_="unique")
        batch.drop_column("trained")
        batch.drop_column("consented")
        batch.drop_column("square")
    with op.batch_alter_table("invite") as batch:
        batch.drop_column("claim")
    op.drop_table("lease")
    op.drop_table("assignment")
