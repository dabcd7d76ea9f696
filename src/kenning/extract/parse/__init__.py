"""The offline default extractor, read off a dependency parse (spaCy ``en_core_web_sm``)."""
from .extractor import ParseExtractor

__all__ = ["ParseExtractor"]
