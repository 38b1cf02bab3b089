"""A released change is reworked, never edited.

Every Sqitch release tag in db/sqitch.plan has a manifest beside the plan,
db/TAG.sha256, listing the SHA-256 of each deploy, revert and verify script
of the changes it released. A database deployed from that release recorded
those scripts; `sqitch rework NAME` copies them to NAME@TAG.sql and leaves
NAME.sql free for the next release. These tests fail when a released
script, wherever it now lives, no longer matches what was released: the
manifest, and the git tag of the same name where the clone has it (a
manifest edited along with a script would otherwise hide the edit).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

DB = Path(__file__).resolve().parents[1] / "db"
KINDS = ("deploy", "revert", "verify")


def plan_entries() -> list[tuple[str, str]]:
    """('change', name) and ('tag', name) in plan order."""
    entries = []
    for line in (DB / "sqitch.plan").read_text().splitlines():
        if not line.strip() or line.startswith(("%", "#")):
            continue
        if line.startswith("@"):
            entries.append(("tag", line.split()[0][1:]))
        else:
            entries.append(("change", re.split(r"[\s\[]", line, maxsplit=1)[0]))
    return entries


def released_changes(tag: str) -> list[str]:
    """The changes the plan lists before `tag`, each once (a rework lists a name again)."""
    names: list[str] = []
    for kind, name in plan_entries():
        if kind == "tag" and name == tag:
            return names
        if kind == "change" and name not in names:
            names.append(name)
    raise AssertionError(f"no tag @{tag} in db/sqitch.plan")


def manifest(tag: str) -> dict[str, str]:
    entries = {}
    for line in (DB / f"{tag}.sha256").read_text().splitlines():
        digest, path = line.split(maxsplit=1)
        entries[path] = digest
    return entries


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def released_copy(path: Path, tag: str) -> Path:
    """Where the script released in `tag` lives now: NAME@TAG.sql once reworked."""
    reworked = path.with_name(f"{path.stem}@{tag}.sql")
    return reworked if reworked.exists() else path


def tags() -> list[str]:
    return [name for kind, name in plan_entries() if kind == "tag"]


def test_every_tag_has_a_manifest_of_exactly_the_scripts_it_released() -> None:
    assert "v0.1.0" in tags()
    for tag in tags():
        expected = {f"{kind}/{name}.sql" for name in released_changes(tag) for kind in KINDS}
        assert set(manifest(tag)) == expected, f"db/{tag}.sha256"


def test_released_scripts_are_unchanged() -> None:
    for tag in tags():
        for path, digest in manifest(tag).items():
            script = released_copy(DB / path, tag)
            assert sha256(script) == digest, (
                f"{script.relative_to(DB)} was released in {tag} and has changed since: "
                f"restore it and change it with `sqitch rework` instead"
            )


def git_tag_file(tag: str, path: str) -> bytes | None:
    """db/`path` as the git tag `tag` holds it; None when this clone has no such tag."""
    known = subprocess.run(
        ["git", "-C", str(DB), "rev-parse", "-q", "--verify", f"refs/tags/{tag}"],
        capture_output=True,
    )
    if known.returncode != 0:
        return None
    shown = subprocess.run(
        ["git", "-C", str(DB), "show", f"{tag}:db/{path}"], capture_output=True, check=True
    )
    return shown.stdout


def test_released_scripts_and_manifest_match_the_git_tag() -> None:
    for tag in tags():
        for path in [*manifest(tag), f"{tag}.sha256"]:
            released = git_tag_file(tag, path)
            if released is None:
                break  # no git tag in this clone: the manifest test above still holds
            current = DB / path if path.endswith(".sha256") else released_copy(DB / path, tag)
            assert current.read_bytes() == released, (
                f"{current.relative_to(DB)} differs from what git tag {tag} released"
            )
