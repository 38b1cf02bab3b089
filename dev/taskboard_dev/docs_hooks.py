"""MkDocs hooks (mkdocs.yml, `hooks:`): the reference pages filled at build time.

Placeholder: the generated reference lands here.
"""

from __future__ import annotations
