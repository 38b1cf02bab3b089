"""The README stays a front page: short, and every link in it leads somewhere.

Its first Python example runs as written under `taskboard worker` against
the installed wheel in `make test-installed` (dev/taskboard_dev/installed.py),
and with the docs' examples (tests/release/test_docs_examples.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.database import DB_DIR

ROOT = DB_DIR.parent
README = ROOT / "README.md"
LINK = re.compile(r"\]\((?!https?://|mailto:)([^)#\s]*)(?:#([^)\s]*))?\)")


def heading_anchors(page: Path) -> set[str]:
    """The anchors MkDocs (and GitHub) give the page's headings."""
    anchors = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*$", page.read_text(), flags=re.MULTILINE):
        text = re.sub(r"[`*_]|\{.*\}$", "", heading).strip().lower()
        anchors.add(re.sub(r"\s+", "-", re.sub(r"[^\w\s-]", "", text)))
    return anchors


def test_the_readme_is_a_front_page() -> None:
    assert len(README.read_text()) <= 12_000


def test_every_link_of_the_readme_leads_somewhere() -> None:
    links = LINK.findall(README.read_text())
    assert links, "the README links into the docs"
    for target, anchor in links:
        path = ROOT / target
        assert path.exists(), f"README links to {target}, which does not exist"
        if anchor:
            assert anchor in heading_anchors(path), (
                f"README links to {target}#{anchor}: no such heading"
            )
