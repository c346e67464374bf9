"""MkDocs hooks: the pages that live outside docs/ (README.md as the home page, RESULTS.md,
CONTRIBUTING.md, CHANGELOG.md) are served from where they are, so each is written once, and
every page's links are written as repository paths (they work on GitHub) and rewritten to the
site's."""

from __future__ import annotations

import html
import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
#: site page -> its file in the repository
OUTSIDE_PAGES = {
    "index.md": "README.md",
    "results.md": "benchmarks/RESULTS.md",
    "contributing.md": "CONTRIBUTING.md",
    "changelog.md": "CHANGELOG.md",
}
#: The studies behind the results, a dated page each, served under studies/ and listed under Results.
STUDIES = "benchmarks/studies"
OUTSIDE_PAGES |= {f"studies/{page.name}": f"{STUDIES}/{page.name}" for page in sorted((ROOT / STUDIES).glob("*.md"))}
FIGURES = "benchmarks/figures"
#: folders served as they are, for download (the notebook)
SERVED_FOLDERS = ("notebooks",)
SITE_OF = {source: page for page, source in OUTSIDE_PAGES.items()}
LINK = re.compile(r"(\]\()([^)\s]+)(\))")
#: replaced by the tables of every algorithm's hyperparameters, drawn from their one declaration
HYPERPARAMETERS = "<!-- hyperparameters -->"


def on_config(config):
    """The studies in the navigation, under Results, newest first (mkdocs.yml names the headline page)."""
    studies = sorted((page for page in OUTSIDE_PAGES if page.startswith("studies/")), reverse=True)
    for k, entry in enumerate(config["nav"]):
        if isinstance(entry, dict) and entry.get("Results") == "results.md":
            config["nav"][k] = {"Results": ["results.md", {"Studies": [{study_title(page): page} for page in studies]}]}
    return config


def study_title(page: str) -> str:
    """A study's title in the navigation: its date and its page's first heading."""
    source = ROOT / OUTSIDE_PAGES[page]
    heading = source.read_text().split("\n", 1)[0].lstrip("# ").strip()
    return f"{source.name[:10]}: {heading}"


def on_files(files, config):
    for page, source in OUTSIDE_PAGES.items():
        files.append(File.generated(config, page, abs_src_path=str(ROOT / source)))
    for figure in sorted((ROOT / FIGURES).iterdir()):
        files.append(File.generated(config, f"figures/{figure.name}", abs_src_path=str(figure)))
    for folder in SERVED_FOLDERS:
        for path in sorted((ROOT / folder).iterdir()):
            files.append(File.generated(config, f"{folder}/{path.name}", abs_src_path=str(path)))
    return files


def site_path(repository_path: str) -> str | None:
    """Where a repository file is on the site, or None when it is not on it."""
    if repository_path in SITE_OF:
        return SITE_OF[repository_path]
    if repository_path.startswith(FIGURES + "/"):
        return "figures/" + repository_path[len(FIGURES) + 1 :]
    if repository_path.split("/")[0] in SERVED_FOLDERS:
        return repository_path
    if repository_path.startswith("docs/"):
        return repository_path[len("docs/") :]
    return None


def on_page_markdown(markdown, page, config, files):
    source = OUTSIDE_PAGES.get(page.file.src_uri, "docs/" + page.file.src_uri)
    folder = posixpath.dirname(source)

    def rewrite(match: re.Match[str]) -> str:
        target, _, anchor = match.group(2).partition("#")
        if not target or "://" in target or target.startswith("mailto:"):
            return match.group(0)
        site = site_path(posixpath.normpath(posixpath.join(folder, target)))
        if site is None:
            return match.group(0)  # left for MkDocs to report, under --strict an error
        relative = posixpath.relpath(site, posixpath.dirname(page.file.src_uri) or ".")
        return f"{match.group(1)}{relative}{'#' + anchor if anchor else ''}{match.group(3)}"

    if HYPERPARAMETERS in markdown:
        markdown = markdown.replace(HYPERPARAMETERS, hyperparameter_tables())
    return LINK.sub(rewrite, markdown)


def hyperparameter_tables() -> str:
    """A table per algorithm of the registry: each key, its default, what it may be, what it means."""
    from agents.common.configuration.hyperparameters import SelfPlay, describe_keys
    from agents.common.configuration.registry import ALGORITHMS

    def cell(text: str) -> str:
        return html.escape(text, quote=False)  # "lin_<number>" is not a tag

    def table(config_class: type) -> str:
        rows = [
            f"| `{key}` | `{default}` | {cell(valid)} | {cell(meaning)} |"
            for key, default, valid, meaning in describe_keys(config_class)
        ]
        return "| key | default | valid | meaning |\n|---|---|---|---|\n" + "\n".join(rows)

    tables = []
    for algo in ALGORITHMS.values():
        renamed = "".join(f" `{old}` is now `{new}`." for old, new in algo.schema.renamed.items())
        tables.append(
            f"**`{algo.name}`** ({algo.label}, `python -m {algo.alias}`, `{algo.config}`).{renamed}\n\n"
            + table(algo.config_class)
        )
    pool = "**`self_play`**, the pool's settings in a section's `self_play` dict (both trainers).\n\n"
    tables.append(pool + table(SelfPlay))
    return "\n\n".join(tables)
