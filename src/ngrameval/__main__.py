"""``python -m ngrameval``: runs the command through :mod:`_ngrameval_cli`, whose handler covers the import of the
command line (Ctrl-C then exits 130 with one line). The package itself is imported by Python before this module."""

from _ngrameval_cli import command

command()
