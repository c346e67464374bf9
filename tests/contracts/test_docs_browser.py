"""The docs site in a real browser: headless Chromium loads every page of the built site, and every
picture on it loads (the example figures the commands draw among them). Runs where Chromium and
Playwright are installed (CI installs both, .ci/run)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.helpers import REPO

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = next((path for name in ("chromium", "chromium-browser", "google-chrome") if (path := shutil.which(name))), None)
#: The example figures the docs show, each drawn by a command (benchmarks.docs_figures).
EXAMPLE_FIGURES = {"example_curves.png", "example_profiles.png", "example_elo.png", "example_probe.png"}


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium here")
def test_every_page_of_the_site_loads_every_picture_in_chromium(tmp_path):
    site = tmp_path / "site"
    subprocess.run(
        ["mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)],
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=True,
    )
    pages = sorted(path for path in site.rglob("index.html") if "search" not in path.parts)
    assert len(pages) > 10, pages
    shown, broken = set(), []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            for html in pages:
                page.goto(html.as_uri(), wait_until="load")
                for source, loaded, width in page.evaluate(
                    "[...document.images].map(i => [i.getAttribute('src'), i.complete, i.naturalWidth])"
                ):
                    shown.add(source.rsplit("/", 1)[-1])
                    if not (loaded and width > 0):
                        broken.append(f"{html.relative_to(site)}: {source}")
        finally:
            browser.close()
    assert not broken, broken
    assert EXAMPLE_FIGURES <= shown, sorted(shown)
