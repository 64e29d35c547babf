"""Open a rendered report in headless Chromium (Debian's ``chromium``, driven by
Playwright): collect console errors, measure every chart, save a PNG of the page.

Used by ``wsbench report --screenshot`` (``make report``) and by the tests.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import WsbenchError

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1400, "height": 1000}
TIMEOUT_MS = 30_000


@dataclass(frozen=True)
class PageCheck:
    console_errors: list[str]
    charts: list[tuple[float, float]]  # width and height of every chart (svg or canvas) in CSS pixels
    failed_requests: list[str]  # anything the page tried to fetch and could not (it should fetch nothing)
    screenshot: Path


def check_page(index: Path, png: Path | None = None, full_page: bool = False) -> PageCheck:
    """Load ``index`` (a file) and report what a reader's browser would show wrong."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        raise WsbenchError("playwright is not installed (run: make setup)") from None
    if not Path(CHROMIUM).exists():
        raise WsbenchError(f"{CHROMIUM} not found (Debian package chromium; run: make setup)")
    png = png or index.with_name("screenshot.png")
    errors: list[str] = []
    failed: list[str] = []
    try:
        with sync_playwright() as pw, tempfile.TemporaryDirectory(prefix="wsbench-chromium-") as profile:
            browser = pw.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, headless=True, args=FLAGS, viewport=VIEWPORT)
            try:
                page = browser.new_page()
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.on("requestfailed", lambda r: failed.append(r.url))
                page.goto(index.resolve().as_uri(), wait_until="load", timeout=TIMEOUT_MS)
                sizes = page.evaluate("""() => [...document.querySelectorAll('figure svg, canvas')]
                    .map(e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; })""")
                page.screenshot(path=str(png), full_page=full_page)
            finally:
                browser.close()
    except Error as exc:
        raise WsbenchError(f"chromium could not show {index}: {str(exc).splitlines()[0]}") from None
    return PageCheck(errors, [(float(w), float(h)) for w, h in sizes], failed, png)
