"""Text pipeline: normalise and tokenize (13a, intl, none, char, sacreBLEU extras), stop words, stemming."""

from ngrameval.text.pipeline import Encoder, Preprocess, preprocess, tokenize_lines
from ngrameval.text.stopwords import load_stopwords
from ngrameval.text.tokenize import TOKENIZERS

__all__ = ["TOKENIZERS", "Encoder", "Preprocess", "load_stopwords", "preprocess", "tokenize_lines"]
