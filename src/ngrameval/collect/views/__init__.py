"""The collect app's pages as module-level handlers, one module per audience (Datasette's ``views/`` is the
model): :mod:`.annotate` (arrival, consent, the task, completion, media, status) and :mod:`.admin` (login and
the admin area); :mod:`.base` holds what both use (the app's state, page rendering, the checked form, the
access checks). :mod:`ngrameval.collect.app` binds them to paths in one route table."""
