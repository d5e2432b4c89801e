#!/usr/bin/env python3
"""Screenshots of the web UI's main pages, for the README and docs/ui.md: builds the demo palace
(scripts/demo_palace.py) in a throwaway HOME, serves the UI on 127.0.0.1, and has Debian's
chromium (driven by Playwright) save one PNG per page into docs/images/.

    .venv/bin/python scripts/screenshots.py [--out DIR] [--chromium PATH] [--base DIR]

Needs the ui and test extras (./test.sh installs both) and chromium (apt-get install chromium).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
# Flags for a headless chromium run as root in a container, talking to nothing but 127.0.0.1.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WIDTH, HEIGHT = 1280, 860

# (file name, page): {name} is the id of the demo memory of that name.
ROOM_PROMPT = "/rooms?room=authentication&prompt=the+login+redirect+loops+after+a+token+refresh"
SHOTS = [
    ("ui-next-session.png", "/brief"),
    ("ui-rooms.png", ROOM_PROMPT),
    ("ui-memory.png", "/memory/{token-refresh}"),
    ("ui-inbox.png", "/inbox"),
    ("ui-learned.png", "/learned"),
    ("ui-sessions.png", "/sessions"),
    ("ui-health.png", "/health"),
]
# One fixed folder, not a random one: the paths the pages show stay the same from run to run.
DEMO_BASE = Path(tempfile.gettempdir()) / "memory-tool-demo"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "images")
    ap.add_argument("--chromium", default=CHROMIUM)
    ap.add_argument("--base", type=Path, default=DEMO_BASE, help="where the demo palace is built")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO / "scripts"))
    import demo_palace
    from playwright.sync_api import sync_playwright

    from memory_tool.ui.serve import Running

    base = args.base
    shutil.rmtree(base, ignore_errors=True)
    try:
        demo_palace.sandbox(base)
        palace = demo_palace.build(Path(os.environ["HOME"]))  # the project shows as ~/work/shop
        args.out.mkdir(parents=True, exist_ok=True)
        with Running(str(palace["root"])) as ui, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.goto(ui.url)  # trades the token for the cookie
            for name, target in SHOTS:
                page.goto(ui.origin + target.format(**palace["ids"]))
                page.screenshot(path=str(args.out / name))
                print(f"wrote {args.out / name}")
            browser.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
