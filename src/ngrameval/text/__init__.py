"""Text pipeline: normalise and tokenize (13a, intl, none, char, sacreBLEU extras), stop words, stemming."""

from ngrameval.text.pipeline import Preprocess, preprocess
from ngrameval.text.stopwords import load_stopwords
from ngrameval.text.tokenize import TOKENIZERS, tokenize_lines

__all__ = ["TOKENIZERS", "Preprocess", "load_stopwords", "preprocess", "tokenize_lines"]
