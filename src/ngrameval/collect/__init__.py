"""``ngrameval collect``: a small web app that runs description, paraphrase and rating studies (Chen & Dolan
2011's two-tier video description collection; Belz & Reiter 2006's Latin-square rating experiments; WMT's Direct
Assessment) and exports what it collects in the layouts ``ngrameval corpus`` and ``ngrameval correlate`` read.

A room on top of the library: it uses :mod:`ngrameval.api`, :mod:`ngrameval.corpus` and :mod:`ngrameval.io`;
nothing below imports it. Its web dependencies are the ``collect`` extra (``pip install 'ngrameval[collect]'``).
"""
