"""Small fixes to the HTML of Jupyter Book 1, found by the browser test (tests/browser).

sphinx-thebe registers its configuration script once per reading of the sources, and a build
that executes notebooks reads them twice: every page then declares ``const THEBE_JS_URL`` twice
and the browser reports a SyntaxError. Keeping the first copy of each script restores a page
with no console error.
"""


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


def setup(app):
    app.connect("html-page-context", _drop_duplicate_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
