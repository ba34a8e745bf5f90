"""Repository hygiene that users notice: papers are cited by their authors (users have not
read the project's seed folder) and nothing reads a path outside the repository."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEXT = [p for folder in ("src", "tests", "docs", "benchmarks") for p in (ROOT / folder).rglob("*")
        if p.suffix in (".py", ".md", ".txt", ".toml") and "egg-info" not in str(p)] + [ROOT / "README.md"]


def test_papers_are_cited_by_authors_not_seed_numbers():
    pattern = re.compile(r"\bseeds? 00[0-9]", re.IGNORECASE)
    offenders = [str(p.relative_to(ROOT)) for p in TEXT if p != pathlib.Path(__file__) and pattern.search(p.read_text())]
    assert offenders == []


def test_no_path_outside_the_repository():
    pattern = re.compile(r"/work/|shared/(seeds|datasets)|\.\./shared")
    offenders = [str(p.relative_to(ROOT)) for p in TEXT if p != pathlib.Path(__file__) and pattern.search(p.read_text())]
    assert offenders == []
