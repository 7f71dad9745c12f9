"""Small fixes to the HTML of Jupyter Book 1, each found by the browser test (tests/browser).

* sphinx-thebe registers its configuration script once per reading of the sources, and a build
  that executes notebooks reads them twice: every page then declares ``const THEBE_JS_URL``
  twice and the browser reports a SyntaxError. The first copy of each script is kept.
* ``static/replicaplan.css``: glued numbers at the text's weight, readable captions, display
  equations that scroll with their number beside them, figures that scroll on a phone.
* Every figure's image gets the first sentence of the figure's caption as its alt text (myst-nb
  leaves the hashed file name), so a screen reader, and a reader whose image failed to load,
  read what it shows, without the whole caption twice.
* The page's download menu offers the chapter's MyST source (the ``.md`` a reader edits) beside
  the executed ``.ipynb``; the sources are copied to ``_sources/`` at the end of the build.
* ``static/search_fix.js``: search snippets without raw TeX and with words kept apart.
* Each figure's phone rendering (``figures.phone_layout``, carried in the notebook output's
  metadata) is written beside the desktop image in ``_images/`` and served to screens up to
  600 px wide by a ``<picture>`` around the figure's ``<img>``: a phone shows the whole figure,
  drawn for its width, where it used to show 46 % of the desktop one.
* ``static/math_scroll.js``: a display formula wider than its box gets a fading edge and a
  tab stop, so a reader sees that it continues and a keyboard can scroll it.
* ``static/menus.js``: the phone's contents panel closes once a section is chosen, and a
  closed panel gives the focus back to the button that opened it.
* Every page carries a description (its first paragraph, cut near 200 characters) and Open
  Graph tags, so a shared link shows a preview.
* pydata-sphinx-theme also loads Font Awesome's SVG-replacing script (1.5 MB), although its own
  stylesheet already draws every icon from the web font; the script tag and the file (with the
  theme's source maps, which no page loads) are removed from the site after the build.
"""

from __future__ import annotations

import itertools
import re
import shutil
from pathlib import Path

from docutils import nodes

STATIC = Path(__file__).resolve().parent / "static"


def _drop_duplicate_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        attributes = getattr(js, "attributes", {}) or {}
        key = (str(getattr(js, "filename", js) or ""), attributes.get("body", ""))
        if key in seen:
            continue
        seen.add(key)
        unique.append(js)
    context["script_files"] = unique


_TEX = [
    (r"\\text\{([^}]*)\}", r"\1"),
    (r"\\mathrm\{([^}]*)\}", r"\1"),
    (r"\\bar\\rho", "ρ̄"),
    (r"\\ast", "*"),
    (r"\\,|\\;|\\quad", " "),
    (r"\\nu", "ν"),
    (r"\\mu", "μ"),
    (r"\\lambda", "λ"),
    (r"\\tau", "τ"),
    (r"\\omega", "ω"),
    (r"\\rho", "ρ"),
    (r"\\cdot", "·"),
    (r"[{}]", ""),
    (r"\^", ""),
]


def _spoken(node) -> str:
    """A caption's text with its formulas in plain symbols (alt text cannot hold TeX)."""
    if isinstance(node, nodes.math):
        text = node.astext()
        for pattern, repl in _TEX:
            text = re.sub(pattern, repl, text)
        return text
    if isinstance(node, nodes.Text):
        return str(node)
    return "".join(_spoken(child) for child in node.children)


def _alt_from_captions(app, doctree, docname):
    for figure in doctree.findall(nodes.figure):
        captions = list(figure.findall(nodes.caption))
        if not captions:
            continue
        text = " ".join(_spoken(captions[0]).split())
        # the caption's first sentence (two if the first is a bare title): the caption itself
        # is read right after the image
        sentences = re.split(r"(?<=\.)\s", text)
        short = sentences[0]
        for more in sentences[1:]:
            if len(short) >= 40:
                break
            short += " " + more
        text = short
        for image in figure.findall(nodes.image):
            alt = image.get("alt", "")
            if not alt or re.fullmatch(r"[0-9a-f]{16,}(\.\w+)?|.*_images/.*", alt):
                image["alt"] = text


def _lighter_page(app, pagename, templatename, context, doctree):
    """Keep each page's first load small: no sphinx-design assets (no page uses a design
    directive; the test that measures the first load would see it if one did), no Thebe (no
    page offers live code: the launch button goes to Binder), and the
    repository button drawn from the solid icon font the page loads anyway, so the 118 kB
    brands font is never fetched."""
    for key in ("css_files", "script_files"):
        files = context.get(key)
        if files:
            context[key] = [
                f
                for f in files
                if not any(
                    s in str(getattr(f, "filename", f))
                    for s in ("sphinx-design", "design-tabs", "sphinx-thebe")
                )
            ]
    for button in context.get("header_buttons", []):
        _solid_icons(button)


def _solid_icons(button) -> None:
    if "fa-github" in str(button.get("icon", "")):
        button["icon"] = "fa-solid fa-code-branch"
    url = str(button.get("url", ""))
    if "/edit/" in url and url.endswith(".ipynb"):
        # the file a person edits is the MyST source; the .ipynb is written by tools/notebooks.py
        button["url"] = url.removesuffix(".ipynb") + ".md"
    for inner in button.get("buttons", []):
        _solid_icons(inner)


def _md_source(app, pagename: str) -> Path | None:
    source = Path(app.srcdir) / f"{pagename}.md"
    if pagename.startswith("chapters/") and source.exists():
        return source
    return None


def _add_md_download(app, pagename, templatename, context, doctree):
    if _md_source(app, pagename) is None:
        return
    url = context["pathto"](f"_sources/{pagename}.md", 1)
    for button in context.get("header_buttons", []):
        if button.get("type") == "group" and "download" in button.get("icon", ""):
            button["buttons"].insert(
                0,
                {
                    "type": "link",
                    "url": url,
                    "text": ".md",
                    "tooltip": "Download the MyST source (the file to edit)",
                    "icon": "fas fa-file-lines",
                    "label": "download-md-button",
                },
            )


def _finish(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for source in sorted((Path(app.srcdir) / "chapters").glob("*.md")):
        target = out / "_sources" / "chapters" / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    tag = re.compile(r"\s*<(script|link)[^>]*fontawesome\.js[^>]*>(\s*</script>)?")
    # the search index and its tools, which the theme loads render-blocking in every page's
    # head: only the search page runs a search (search_as_you_type is off, and the header's
    # search box submits to search.html), so elsewhere they are 96 kB of nothing
    search = re.compile(
        r'\s*<script src="[^"]*(searchtools\.js|language_data\.js|searchindex\.js)[^"]*">'
        r"</script>"
    )
    for page in out.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        cleaned = tag.sub("", html)
        if page.name != "search.html":
            cleaned = search.sub("", cleaned)
        # the front page's title is the book's own: "X — X" in the tab and the bookmarks
        cleaned = re.sub(r"<title>(.+?) &#8212; \1</title>", r"<title>\1</title>", cleaned)
        cleaned = _solution_titles(cleaned)
        cleaned = _accessible_names(cleaned)
        if cleaned != html:
            page.write_text(cleaned, encoding="utf-8")
    for junk in ("fontawesome.js", "fontawesome.js.map", "fontawesome.js.LICENSE.txt"):
        (out / "_static" / "scripts" / junk).unlink(missing_ok=True)
    for source_map in (out / "_static").rglob("*.map"):
        source_map.unlink()
    _serve_phone_figures(out, Path(app.srcdir))


_SOLUTION_LINK = re.compile(
    r'(<p class="admonition-title">Solution to)<a class="reference internal" href="#[^"]*">'
    r"\s*(.*?)</a>"
)


def _solution_titles(html: str) -> str:
    """sphinx-exercise's solution bar: its title links back to the exercise, so a reader who taps
    the most visible thing in the bar is sent up the page instead of opening the solution; the
    link becomes plain words, and the bar opens the solution wherever it is tapped. Its content
    blocks all carry the id "solution-content" (or "exercise-content"): each gets its own."""
    html = _SOLUTION_LINK.sub(r"\1 \2", html)
    for kind in ("solution-content", "exercise-content"):
        count = itertools.count(1)
        html = re.sub(f'id="{kind}"', lambda _m, k=kind: f'id="{k}-{next(count)}"', html)
    return html


def _accessible_names(html: str) -> str:
    """Two accessibility defects the extensions write (axe): the bibliography's entries carry
    the deprecated role doc-biblioentry inside a role="list", which needs listitems; and the
    code toggles' ``aria-label="Toggle hidden content"`` replaces the words a reader sees ("Show
    code cell source"), so a voice-control user cannot name them: the label goes, the visible
    words name the control."""
    html = html.replace('role="doc-biblioentry"', 'role="listitem"')
    return html.replace('<summary aria-label="Toggle hidden content">', "<summary>")


def _phone_images(srcdir: Path) -> dict[str, tuple[bytes, int, int]]:
    """sha256 of each figure's desktop PNG (the name myst-nb gives its file in ``_images``) →
    its phone PNG and that PNG's design size, read from the executed notebooks."""
    import base64
    import hashlib
    import json

    found = {}
    for notebook in [*sorted((srcdir / "chapters").glob("*.ipynb")), srcdir / "intro.ipynb"]:
        if not notebook.exists():
            continue
        for cell in json.loads(notebook.read_text(encoding="utf-8")).get("cells", []):
            for output in cell.get("outputs", []):
                data = output.get("data", {}).get("image/png")
                phone = output.get("metadata", {}).get("image/png", {}).get("phone")
                if not (data and phone):
                    continue
                desktop = base64.b64decode("".join(data) if isinstance(data, list) else data)
                found[hashlib.sha256(desktop).hexdigest()] = (
                    base64.b64decode(phone["png"]),
                    int(phone["width"]),
                    int(phone["height"]),
                )
    return found


_IMG = re.compile(r'<img\b[^>]*\bsrc="(?P<dir>[^"]*_images/)(?P<hash>[0-9a-f]{64})\.png"[^>]*>')


def _serve_phone_figures(out: Path, srcdir: Path) -> None:
    phones = _phone_images(srcdir)
    if not phones:
        return
    for digest, (png, _, _) in phones.items():
        (out / "_images" / f"{digest}-phone.png").write_bytes(png)

    def picture(match) -> str:
        found = phones.get(match["hash"])
        if found is None:
            return match[0]
        img = match[0]
        if "decoding=" not in img:  # decoded off the main thread (loaded eagerly: within budget)
            img = img.replace("<img ", '<img decoding="async" ', 1)
        _, width, height = found
        src = f"{match['dir']}{match['hash']}-phone.png"
        return (
            f'<picture><source media="(max-width: 600px)" srcset="{src}" width="{width}" '
            f'height="{height}">{img}</picture>'
        )

    for page in out.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        served = _IMG.sub(picture, html)
        if served != html:
            page.write_text(served, encoding="utf-8")


def _page_description(app, pagename, templatename, context, doctree):
    """A ``<meta name="description">`` and Open Graph tags (title, description, URL), so a
    shared link shows a preview: the description is the page's first paragraph, cut at a
    sentence near 200 characters."""
    import html

    if doctree is None:
        return
    text = ""
    for paragraph in doctree.findall(nodes.paragraph):
        words = " ".join(_spoken(paragraph).split())
        if len(words) > 60:
            text = words
            break
    if not text:
        return
    if len(text) > 200:
        cut = text.rfind(". ", 0, 200)
        text = text[: cut + 1] if cut > 80 else text[:197].rsplit(" ", 1)[0] + "…"
    title = re.sub(r"<[^>]+>", "", context.get("title") or "")
    base = (app.config.html_baseurl or "").rstrip("/")
    url = f"{base}/{pagename}.html" if base else ""
    tags = [
        f'<meta name="description" content="{html.escape(text)}">',
        f'<meta property="og:title" content="{html.escape(title)}">',
        f'<meta property="og:description" content="{html.escape(text)}">',
        '<meta property="og:type" content="article">',
    ]
    if url:
        tags.append(f'<meta property="og:url" content="{html.escape(url)}">')
    context["metatags"] = context.get("metatags", "") + "\n".join(tags)


def _static_path(app, config):
    config.html_static_path.append(str(STATIC))


def setup(app):
    from bibstyle import register

    register()
    app.connect("config-inited", _static_path)
    app.add_css_file("replicaplan.css")
    app.add_js_file("search_fix.js", loading_method="defer")
    app.add_js_file("math_scroll.js", loading_method="defer")
    app.add_js_file("menus.js", loading_method="defer")
    app.connect("doctree-resolved", _alt_from_captions)
    app.connect("html-page-context", _drop_duplicate_scripts, priority=900)
    app.connect("html-page-context", _add_md_download, priority=900)
    app.connect("html-page-context", _lighter_page, priority=900)
    app.connect("html-page-context", _page_description, priority=900)
    app.connect("build-finished", _finish)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
