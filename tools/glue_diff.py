"""Print every glued value that differs between the stored notebooks of a git revision and the
working tree: `python tools/glue_diff.py [REV]` (default HEAD). For closing notes: old -> new."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEY = "application/papermill.record/text/plain"


def glued(text: str) -> dict:
    out = {}
    for cell in json.loads(text)["cells"]:
        for o in cell.get("outputs", []):
            meta = o.get("metadata", {}).get("scrapbook", {})
            data = o.get("data", {})
            if meta.get("name") and KEY in data:
                out[meta["name"]] = data[KEY]
    return out


def main(rev: str = "HEAD") -> int:
    for nb in [ROOT / "intro.ipynb", *sorted((ROOT / "chapters").glob("*.ipynb"))]:
        rel = nb.relative_to(ROOT).as_posix()
        try:
            old = glued(
                subprocess.run(
                    ["git", "show", f"{rev}:{rel}"],
                    cwd=ROOT,
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
            )
        except subprocess.CalledProcessError:
            old = {}
        new = glued(nb.read_text())
        for name in sorted(set(old) | set(new)):
            if old.get(name) != new.get(name):
                print(f"{rel}: {name}: {old.get(name)} -> {new.get(name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
