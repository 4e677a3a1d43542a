"""One small module per metric; each metric is a frozen configuration (called on :class:`Stats`, or, for
ROUGE, PINC and SE, scoring texts per segment)."""

from ngrameval.metrics.aev import AEv
from ngrameval.metrics.bleu import BLEU
from ngrameval.metrics.chrf import ChrF
from ngrameval.metrics.cider import Cider
from ngrameval.metrics.coco import CocoBleu, CocoRougeL
from ngrameval.metrics.nist import NIST
from ngrameval.metrics.rouge import Rouge
from ngrameval.metrics.ter import TER

__all__ = ["BLEU", "NIST", "TER", "AEv", "ChrF", "Cider", "CocoBleu", "CocoRougeL", "Rouge"]
