"""One small module per metric; each metric is a frozen configuration called on :class:`Stats`."""

from ngrameval.metrics.aev import AEv
from ngrameval.metrics.bleu import BLEU
from ngrameval.metrics.nist import NIST

__all__ = ["BLEU", "NIST", "AEv"]
