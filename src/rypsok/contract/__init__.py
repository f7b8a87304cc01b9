"""The tool contract: outcomes, error kinds and reasons, notice codes, response models, tools.

Everything a caller can see is defined here, as fixed vocabularies (REQ-SEC-016, CLR-4..7).
"""
