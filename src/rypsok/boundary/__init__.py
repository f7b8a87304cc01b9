"""The content boundary: cleaning of external text (REQ-CTX-004, REQ-SEC-003, REQ-SEC-015).

Titles and snippets go through :func:`clean_field`, fetched content through
:func:`clean_content`; both report what they changed so the caller can add the notices
of CLR-11. The step order is defined in :mod:`rypsok.boundary.pipeline`.
"""

from rypsok.boundary.instructions import is_instruction_like
from rypsok.boundary.invisible import remove_invisible
from rypsok.boundary.pipeline import Cleaned, clean_content, clean_field

__all__ = ["Cleaned", "clean_content", "clean_field", "is_instruction_like", "remove_invisible"]
