"""The values the judgment readers' options take, in a module that imports nothing: the command line's parser
offers them (``--judgments-layout``, ``--repeated``) without loading the readers (``score`` never reads judgments);
:mod:`ngrameval.io.judgments` imports them from here."""

from __future__ import annotations

LAYOUTS = ("auto", "long", "wide", "systems", "slots", "summeval")  # the judgment files' layouts
REPEATED = ("error", "mean")  # the same (system, segment, judge, criterion) twice: an error, or their mean
