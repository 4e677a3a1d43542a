"""N-gram statistics: text is counted once into per-segment arrays that every metric reads."""

from ngrameval.ngrams.count import References, overlap_stats
from ngrameval.ngrams.stats import MetricRows, Stats

__all__ = ["MetricRows", "References", "Stats", "overlap_stats"]
