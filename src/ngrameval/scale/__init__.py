"""Every way of running at scale, one room (floor 8: above meta, below report): batches accumulated
(:mod:`.batches`), files of any length read in chunks (:mod:`.files`), one chunk measured and summed
(:mod:`.chunks`), NIST's reference counts in memory (:mod:`.refcounts`) and on disk (:mod:`.refspill`), statistics
counted once and kept in stats files, shards merged (:mod:`.stored`), and Dask (:mod:`.dask`, the ``ngrameval[dask]``
extra). Threads on one machine are the ground floor's
(:mod:`ngrameval.jobs`). Metrics know nothing of where they run: pieces of segments give summable rows
(:meth:`ngrameval.metrics.rows.RowMetric.rows`), added one segment after the other
(:func:`ngrameval.ngrams.stats.add_rows`)."""
