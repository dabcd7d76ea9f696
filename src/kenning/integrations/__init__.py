"""Glue between kenning and other libraries, one module each; each imports its library only when imported.

- :mod:`kenning.integrations.anthropic`: core memory files as the Anthropic SDK's memory tool
  (``pip install 'kenning[anthropic]'``).
"""
