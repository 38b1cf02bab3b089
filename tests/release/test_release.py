"""A released change is reworked, never edited.

Every Sqitch release tag in db/sqitch.plan has a manifest beside the plan,
db/TAG.sha256, listing the SHA-256 of each deploy, revert and verify script
of the changes it released. A database deployed from that release recorded
those scripts; `sqitch rework NAME` copies them to NAME@TAG.sql and leaves
NAME.sql free for the next release. These tests fail when a released
script, wherever it now lives, no longer matches its manifest, and when a
manifest no longer matches the SHA-256 its release recorded in
CHANGELOG.md (a manifest edited along with a script would otherwise hide
the edit). Git tags do not travel with the branch, so nothing here reads
one; a missing reference (manifest, changelog entry) fails the test.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from pathlib import Path

from taskboard import __version__

DB = Path(__file__).resolve().parents[2] / "db"
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
    """Where the script released in `tag` lives now: once reworked, Sqitch keeps it as
    NAME@LATER.sql, LATER being the last tag before the rework (`tag` or a later one)."""
    later = tags()[tags().index(tag) :]
    for candidate in later:
        reworked = path.with_name(f"{path.stem}@{candidate}.sql")
        if reworked.exists():
            return reworked
    return path


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


CHANGELOG = DB.parent / "CHANGELOG.md"
MANIFEST_LINE = re.compile(
    r"^Manifest: `db/(?P<tag>[^`]+)\.sha256` SHA-256 `(?P<digest>[0-9a-f]{64})`", re.M
)


def recorded_manifests() -> dict[str, str]:
    """tag -> the manifest's SHA-256, as each release's CHANGELOG entry records it."""
    return {m["tag"]: m["digest"] for m in MANIFEST_LINE.finditer(CHANGELOG.read_text())}


def test_every_manifest_matches_the_digest_its_release_recorded_in_the_changelog() -> None:
    recorded = recorded_manifests()
    for tag in tags():
        assert tag in recorded, f"CHANGELOG.md records no manifest digest for {tag}"
        assert sha256(DB / f"{tag}.sha256") == recorded[tag], (
            f"db/{tag}.sha256 differs from the manifest released in {tag}"
        )


def test_the_changelog_keeps_an_unreleased_section_above_the_releases() -> None:
    headings = re.findall(r"^## (.+)$", CHANGELOG.read_text(), re.M)
    assert headings and headings[0] == "[Unreleased]", headings[:2]


def test_the_driver_has_one_version() -> None:
    project = tomllib.loads((DB.parent / "pyproject.toml").read_text())["project"]
    assert project["version"] == __version__
