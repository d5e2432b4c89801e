#!/usr/bin/env python3
"""The README's example brief ("What a session gets"): `memory-tool wake` on the demo palace
(scripts/demo_palace.py), so the README shows what SessionStart really injects.

    .venv/bin/python scripts/readme_brief.py           # print the README's block
    .venv/bin/python scripts/readme_brief.py --write   # put it into README.md

tests/test_docs.py checks that README.md holds what this script generates now; run it with
`--write` after a change to the brief's wording or to the demo palace.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
# The demo palace's whole brief (614 tokens, 2.3 KB) does not fit the README's five-minute size
# cap (tests/test_docs.py): with this L2 budget it holds a critical rule, the user, two facts, the
# count of what was deferred and the hygiene line, about 1.2 KB.
README_L2_TOKENS = 150
# The demo project's id as sync records one (its origin URL): memory ids are seeded with it, so
# they do not depend on the folder the palace is built in.
PROJECT_ID = "github.com/dana/shop"
# The block: a text fence holding one fenced brief.
BLOCK = re.compile(r"```text\n<memory-context>\n.*?\n```\n", re.S)


def brief() -> str:
    """`memory-tool wake` in the demo project, built in a throwaway HOME: the brief and each
    layer's tokens against its budget (the frame and total lines left out, for the size cap)."""
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "scripts"))
    import demo_palace
    from click.testing import CliRunner

    from memory_tool.base import paths
    from memory_tool.base.config import config_path
    from memory_tool.cli.main import main as cli
    from memory_tool.store import palace, project_ids

    with tempfile.TemporaryDirectory(prefix="memory-tool-readme-") as tmp:
        demo_palace.sandbox(Path(tmp))
        home = Path(os.environ["HOME"])
        root = home / "work" / "shop"  # where demo_palace.build puts the project
        project_ids.record({paths.project_key(root): PROJECT_ID})
        palace.init_palace()
        config = config_path()
        text = config.read_text(encoding="utf-8")
        smaller = re.sub(r"(?m)^(\s*l2_tokens:)\s*\d+", rf"\1 {README_L2_TOKENS}", text)
        assert smaller != text, "the config template has no budgets.l2_tokens line"
        config.write_text(smaller, encoding="utf-8")
        demo_palace.build(home)
        result = CliRunner().invoke(cli, ["wake", "--cwd", str(root)])
        if result.exit_code != 0:
            raise RuntimeError(f"memory-tool wake failed: {result.output}")
        return result.output[: result.output.index("\nframe: ") + 1]


def block(text: str) -> str:
    return f"```text\n{text}```\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--write", action="store_true", help="replace the README's block")
    args = ap.parse_args(argv)
    new = block(brief())
    if not args.write:
        sys.stdout.write(new)
        return 0
    readme = README.read_text(encoding="utf-8")
    if len(BLOCK.findall(readme)) != 1:
        print("README.md should hold exactly one example brief block", file=sys.stderr)
        return 1
    README.write_text(BLOCK.sub(lambda _m: new, readme), encoding="utf-8")
    print(f"wrote the example brief into {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
