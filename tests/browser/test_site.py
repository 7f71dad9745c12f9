"""The built site, opened in a real browser (Debian's headless Chromium driven by Selenium).

For every page: it loads with no console error; every formula has been typeset by MathJax (no
raw TeX left in the visible text); every image has loaded; every internal link, fragment
included, resolves; MathJax reports no error (no `mjx-merror` element); no page is wider than
the window at a phone's 390 px or a desktop's 1,400 px; each chapter's download link gives a
file that nbformat reads and validates as a notebook. The search page finds "goodput". A
screenshot of every page is saved under _build/screenshots/ for a person to look at. The site
is served from localhost and MathJax from the site itself, so the test needs no network at all.

Needs the site built into _build/html (make test builds it first) and /usr/bin/chromium with
/usr/bin/chromedriver (make test installs them from Debian's packages).
"""

import functools
import http.server
import re
import shutil
import socketserver
import threading
import urllib.parse
from pathlib import Path

import pytest

SITE = Path(__file__).resolve().parents[2] / "_build" / "html"
SCREENSHOTS = SITE.parent / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

pytestmark = pytest.mark.skipif(
    not (SITE / "index.html").exists()
    or not Path(CHROMIUM).exists()
    or not Path(CHROMEDRIVER).exists(),
    reason="needs the built site (_build/html) and Debian's chromium + chromium-driver",
)

PAGES = (
    sorted(
        str(p.relative_to(SITE))
        for p in SITE.rglob("*.html")
        if "_static" not in p.parts and "_sources" not in p.parts
    )
    if SITE.exists()
    else []
)
RAW_TEX = re.compile(
    r"\\\(|\\\)|\\\[|\\\]|\$\$|\\(frac|lambda|mu|rho|text|mathrm|lceil|rceil|dot|ast|sqrt)\b"
)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _Server(socketserver.ThreadingTCPServer):
    # Chromium keeps connections alive; closing must not wait for their handler threads
    daemon_threads = True
    block_on_close = False


@pytest.fixture(scope="module")
def server():
    handler = functools.partial(_Quiet, directory=str(SITE))
    with _Server(("127.0.0.1", 0), handler) as httpd:
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
        httpd.shutdown()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1300,1000",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    yield driver
    driver.quit()


def _open(browser, url):
    browser.get(url)
    # wait until MathJax (served from the site) has typeset the page, where the page uses it
    browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const wait = () => {
            if (document.readyState !== 'complete') { setTimeout(wait, 50); return; }
            if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
                MathJax.startup.promise.then(() => done(true), () => done(false));
            } else { done(true); }
        };
        wait();""")


def _visible_prose(browser):
    """Text of the page outside code blocks (code may legitimately hold TeX strings)."""
    return browser.execute_script("""
        const clone = document.querySelector('main, article, body').cloneNode(true);
        clone.querySelectorAll('pre, code, script, style, .highlight, mjx-assistive-mml')
            .forEach(e => e.remove());
        return clone.textContent;""")


@pytest.mark.parametrize("page", PAGES)
def test_page(browser, server, page):
    _open(browser, server + page)
    errors = [
        e
        for e in browser.get_log("browser")
        if e["level"] == "SEVERE" and "favicon.ico" not in e["message"]
    ]
    assert not errors, f"{page}: console errors: {errors}"

    raw = RAW_TEX.findall(_visible_prose(browser))
    assert not raw, f"{page}: raw TeX left in the visible text: {raw[:5]}"
    math_errors = browser.execute_script(
        "return Array.from(document.querySelectorAll('mjx-merror'))"
        ".map(e => e.getAttribute('data-mjx-error') || e.textContent);"
    )
    assert not math_errors, f"{page}: MathJax errors: {math_errors[:5]}"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(
        str(SCREENSHOTS / (page.replace("/", "__").removesuffix(".html") + ".png"))
    )

    # no page wider than a phone's or a desktop's window; a headless window cannot be narrower
    # than about 500 px, so the phone's viewport is emulated (a relayout, no reload)
    for width in (390, 1400):
        browser.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600},
        )
        try:
            inner, scroll = browser.execute_script(
                "const e = document.documentElement; return [e.clientWidth, e.scrollWidth];"
            )
        finally:
            browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        assert inner <= width, f"{page}: the window is {inner} px, not {width}"
        assert scroll <= inner + 1, f"{page}: {scroll} px wide in a {width} px window"

    if page.startswith("chapters/"):
        stem = Path(page).stem
        assert (SITE / "_sources" / "chapters" / f"{stem}.ipynb").exists(), page
        links = browser.execute_script(
            "return Array.from(document.querySelectorAll('a[href]'))"
            ".map(a => a.getAttribute('href'));"
        )
        assert any(h.endswith(f"{stem}.ipynb") for h in links), f"{page}: no .ipynb download link"
    if browser.execute_script("return document.querySelectorAll('.math').length"):
        typeset = browser.execute_script("return document.querySelectorAll('mjx-container').length")
        assert typeset > 0, f"{page}: math present but nothing typeset by MathJax"

    broken = browser.execute_script("""
        return Array.from(document.images)
            .filter(img => !(img.complete && img.naturalWidth > 0)).map(img => img.src);""")
    assert not broken, f"{page}: images that did not load: {broken}"

    hrefs = browser.execute_script(
        "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href);"
    )
    missing = []
    for href in hrefs:
        url = urllib.parse.urlsplit(href)
        if not href.startswith(server):
            continue
        target = SITE / urllib.parse.unquote(url.path).lstrip("/")
        if target.is_dir():
            target = target / "index.html"
        if not target.exists():
            missing.append(href)
        elif url.fragment and target.suffix == ".html":
            html = target.read_text(encoding="utf-8", errors="replace")
            if f'id="{url.fragment}"' not in html and f"id='{url.fragment}'" not in html:
                missing.append(href)
    assert not missing, f"{page}: internal links that do not resolve: {sorted(set(missing))[:10]}"


def test_downloaded_notebooks_open_as_notebooks(server):
    import urllib.request

    import nbformat

    chapters = sorted((SITE / "chapters").glob("*.html"))
    assert chapters
    for page in chapters:
        url = server + f"_sources/chapters/{page.stem}.ipynb"
        with urllib.request.urlopen(url) as response:
            nb = nbformat.reads(response.read().decode("utf-8"), as_version=4)
        nbformat.validate(nb)
        assert any(c.cell_type == "code" and c.get("outputs") for c in nb.cells), url


def test_search_finds_goodput(browser, server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    _open(browser, server + "search.html?q=goodput")
    results = WebDriverWait(browser, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#search-results li") or False
    )
    text = " ".join(r.text for r in results)
    assert "replica holds" in text.lower() or "glossary" in text.lower(), text
