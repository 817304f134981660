"""What README and the docs tell a newcomer holds: every install line installs this project (from
this repository, since no release of ours is on PyPI and the name `memory-mcp` there belongs to
another project), the test command is the one CI runs, and the files and links they name exist."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
NAME = PYPROJECT["project"]["name"]

# An install command of pip, pipx or uv, wherever it stands (a code block, prose, a Python string).
INSTALL = re.compile(r"\b(?:pip3?|pipx|uv pip|uv tool) install\b(?P<rest>[^\n`]*)")
# Options whose value is the next word, not a target.
VALUE_OPTIONS = {"-p", "--python", "-c", "--constraint", "-t", "--target", "--prefix"}


def _texts() -> dict[str, str]:
    """Every file a person or an agent reads install advice from: README, CHANGELOG, docs, the plugin
    (its own files, not the links to the package), and the package and benchmarks (error messages,
    usage lines)."""
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md")),
             *sorted((ROOT / ".claude-plugin").iterdir())]
    files += [p for p in sorted((ROOT / "plugin").rglob("*"))
              if p.is_file() and not any(part.is_symlink() for part in [p, *p.parents] if part != ROOT)]
    files += sorted((ROOT / "memory_mcp").rglob("*.py")) + sorted((ROOT / "benchmarks").rglob("*.py"))
    # Tracked files only: a plugin environment's install leaves build/ and *.egg-info in plugin/
    # (old copies of the package), which are nobody's advice.
    tracked = set(_tracked())
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in files if p in tracked}


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalised as PyPI compares names."""
    return re.sub(r"[-_.]+", "-", re.split(r"[\[<>=;!~ @]", requirement, maxsplit=1)[0]).lower()


# What pyproject declares (dependencies, every extra's): a command may name these beside ours.
DECLARED = {_name(r) for r in [*PYPROJECT["project"]["dependencies"],
                               *(r for extra in PYPROJECT["project"]["optional-dependencies"].values() for r in extra)]}


def is_ours(target: str) -> bool:
    """A path (this checkout, a placeholder for it, the plugin's root in a shell variable) or a git
    URL: never a bare name, which pip would look up on PyPI."""
    if target.startswith((".", "/", "~", "$", "git+")):
        return True
    name, _, url = target.partition(" @ ")
    return bool(url) and url.startswith("git+") and _name(name) == _name(NAME)


def install_targets(text: str) -> list[str]:
    """The targets of each install command in `text`: its first word that is not an option, then the
    words after it for as long as they are ours or packages pyproject declares (a command in prose runs
    on into the sentence). A later word that names memory-mcp is a target too, so a stray
    `pip install . memory-mcp` is caught."""
    targets = []
    for match in INSTALL.finditer(text):
        words = [w.strip("'\"") for w in re.findall(r"'[^']*'|\"[^\"]*\"|[^\s'\"]+", match["rest"])]
        words = [f"{w} @ {words[i + 2]}" if words[i + 1:i + 2] == ["@"] and len(words) > i + 2 else w
                 for i, w in enumerate(words) if w != "@" and (i == 0 or words[i - 1] != "@")]
        found, skip = [], False
        for word in words:
            if word in ("&&", "||", ";", "|", "#") or word.startswith("#"):
                break
            if skip or word.startswith("-"):
                skip = not skip and word in VALUE_OPTIONS
                continue
            if found and not is_ours(word) and _name(word) not in DECLARED:
                if _name(word).startswith("memory-mcp"):
                    found.append(word)
                break
            found.append(word)
        targets += found
    return targets


def test_install_targets_are_read_the_way_pip_reads_them() -> None:
    assert install_targets("python3 -m venv .venv && .venv/bin/pip install -e . && x") == ["."]
    assert install_targets("pip install 'memory-mcp[semantic]'   # USE") == ["memory-mcp[semantic]"]
    assert install_targets('uv pip install -q -p "$VENV/bin/python" "$ROOT"') == ["$ROOT"]
    assert install_targets("""return f"off: pip install -e '.[{extra}]'" """) == [".[{extra}]"]
    assert install_targets("pip install 'memory-mcp-git[semantic] @ git+https://h/r.git'") == [
        "memory-mcp-git[semantic] @ git+https://h/r.git"]
    assert install_targets("`pip install -e . mypy==2.4.1 types-PyYAML` is enough") == [
        ".", "mypy==2.4.1", "types-PyYAML"]
    assert install_targets("pip install . memory-mcp and more") == [".", "memory-mcp"]
    assert not is_ours("memory-mcp[semantic]") and not is_ours("memory-mcp-git")
    assert is_ours(".[semantic]") and is_ours(f"{NAME} @ git+https://h/r.git")


def test_every_install_line_installs_this_project_from_this_repository() -> None:
    # README told a stranger `pip install 'memory-mcp[semantic]'`, which fetched an unrelated
    # placeholder package that owns the name on PyPI, and the extras did not exist there. Beside
    # this project, a command may name only what pyproject already declares (mypy for the checks).
    wrong = []
    for name, text in _texts().items():
        for match in INSTALL.finditer(text):
            targets = install_targets(match[0])
            if not targets or not is_ours(targets[0]) or any(
                    not is_ours(t) and (_name(t) not in DECLARED or _name(t).startswith("memory-mcp"))
                    for t in targets[1:]):
                wrong.append((name, match[0].strip()))
    assert not wrong, f"install lines that would fetch a package by name from PyPI: {wrong}"


def test_the_extras_that_name_a_distribution_name_this_one() -> None:
    # `test` brings `semantic` by naming the distribution itself; a stale name would install the
    # other project's package (or nothing) instead of this one's extra.
    for extra, requirements in PYPROJECT["project"]["optional-dependencies"].items():
        for requirement in requirements:
            name = re.split(r"[\[<>=;! ]", requirement, maxsplit=1)[0]
            if name.startswith("memory-mcp") or name.startswith("memory_mcp"):
                assert name == NAME, f"extra {extra!r} names {name!r}, not this distribution ({NAME!r})"


def test_the_licence_pyproject_names_is_there() -> None:
    assert PYPROJECT["project"]["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


def test_ci_runs_the_test_command_readme_gives() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = next(line for line in readme.splitlines() if "pip install" in line and "pytest" in line)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    extras = re.search(r"pip install -e ('[^']+')", command)
    assert extras, command
    assert f"pip install -q -e {extras[1]}\n" in ci, f".ci/run does not install {extras[1]} as README does"
    assert ".venv/bin/python -m pytest" in command and "\n.venv/bin/python -m pytest" in ci


def _tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / name for name in out.decode().split("\0") if name and (ROOT / name).is_file()]


def test_no_path_of_the_machine_the_work_was_done_on() -> None:
    # docs/performance.md and four benchmarks' usage lines named the folders of one development
    # machine (its snapshots, its evaluation data, its scratch space), which mean nothing elsewhere.
    machine = re.compile(r"(?<![\w.~-])/(?:work|root|tmp)/")
    found = []
    for path in _tracked():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # the plot
        found += [f"{path.relative_to(ROOT)}:{n}" for n, line in enumerate(text.splitlines(), 1)
                  if machine.search(line)]
    assert not found, f"machine paths: {found}"


# ---------------------------------------------------------------- what README and the docs name
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# A path rooted at one of the repository's folders, as prose, a code span or a code block names it.
REPO_PATH = re.compile(r"(?<![\w./-])((?:memory_mcp|tests|benchmarks|docs|plugin|store_template|\.ci)/[\w./-]*)")
MODULE = re.compile(r"(?<![\w./-])(memory_mcp(?:\.\w+)+)")
BARE_MODULE = re.compile(r"`(\w+\.py)`")
# What a run writes, git-ignored: named as where to look, not as files of the repository.
GENERATED = ("benchmarks/results/", "benchmarks/.node", ".ci/node-tools")
# docs/contributing.md's table of where each module went in the move to folders names the old ones.
HISTORY_SECTION = "## Where the modules went"


def _current(text: str) -> str:
    if HISTORY_SECTION not in text:
        return text
    start = text.index(HISTORY_SECTION)
    end = text.find("\n## ", start + len(HISTORY_SECTION))
    return text[:start] + (text[end:] if end >= 0 else "")


def _module_exists(dotted: str) -> bool:
    """`memory_mcp.index.schema` or `memory_mcp.recall.query.text_scores`: a module, and then a name
    it defines."""
    parts, path = dotted.split("."), ROOT
    for i, part in enumerate(parts):
        if (path / part).is_dir():
            path = path / part
        elif (path / f"{part}.py").is_file():
            rest = parts[i + 1:]
            source = (path / f"{part}.py").read_text(encoding="utf-8")
            return not rest or re.search(rf"^\s*(?:def |class |async def )?{rest[0]}\b", source, re.M) is not None
        else:
            return False
    return True


def test_readme_is_read_in_five_minutes() -> None:
    # It was 572 lines: a whole user guide and a module list. The guide is docs/guide.md now.
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


def test_the_paths_and_modules_readme_and_docs_name_exist() -> None:
    missing = []
    modules = {p.name for folder in ("memory_mcp", "tests", "benchmarks") for p in (ROOT / folder).rglob("*.py")}
    for doc in DOCS:
        text = _current(doc.read_text(encoding="utf-8"))
        for match in REPO_PATH.finditer(text):
            path = match[1].rstrip(".")
            if text[match.end():match.end() + 1] in ("*", "<", "{") or path.startswith(GENERATED):
                continue  # a pattern (tests/test_*.py, tests/<layer>/) or a run's output
            if not (ROOT / path).exists():
                missing.append(f"{doc.name}: {path}")
        missing += [f"{doc.name}: {m[1]}" for m in MODULE.finditer(text) if not _module_exists(m[1].rstrip("."))]
        missing += [f"{doc.name}: {m[1]}" for m in BARE_MODULE.finditer(text) if m[1] not in modules]
    assert not missing, f"named but not in the repository: {missing}"


def _anchors(text: str) -> set[str]:
    """GitHub's heading ids: lower case, punctuation but hyphens and underscores dropped, spaces to hyphens."""
    headings = re.findall(r"^#{1,6} (.+)$", re.sub(r"```.*?```", "", text, flags=re.S), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_every_relative_link_in_readme_and_the_docs_resolves() -> None:
    broken = []
    for doc in [*DOCS, ROOT / "CHANGELOG.md"]:
        text = doc.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a URL
            file, _, anchor = target.partition("#")
            linked = (doc.parent / file).resolve() if file else doc
            if not linked.exists():
                broken.append(f"{doc.name}: {target}")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked.read_text(encoding="utf-8")):
                broken.append(f"{doc.name}: {target} (no such heading)")
    assert not broken, f"links that lead nowhere: {broken}"
