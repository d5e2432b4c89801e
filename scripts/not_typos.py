"""List the English words the room classifier would read as typos of a keyword.

Run from the repo root:  .venv/bin/python scripts/not_typos.py [/usr/share/dict/words]

The classifier forgives typos ("deploymnet" -> deployment), but a real word one or two edits
from a keyword is not a typo: "perfect" is not "prefect", "resolve" not "resolver", "contest"
not "conftest". This prints, for templates/rooms.yaml, the dictionary words the typo look-up
would map to a keyword, except inflections of it ("authorized" -> authorize, "downgraded" ->
downgrade: same word, different ending), as a YAML list to paste under `not_typos:`.
Re-run it after adding keywords. The word list is only read here, never shipped.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

from memory_tool.classify import _fuzzy_term, compile_rooms  # noqa: E402
from memory_tool.words import FUZZY_MIN_LEN  # noqa: E402

# A dictionary word that keeps all of a keyword but its last letters is an inflection of it
# (the stemmer misses some: "constrained"), and the typo match is right.
INFLECTION_SHARED = 2  # letters of the keyword's end that may differ


# Other spellings of a keyword, where the typo match is right.
VARIANTS = frozenset({"artefact", "artefacts", "carrousel", "carrousels", "gingko", "gingkos"})


# Left out to keep a user-facing file readable: nobody types these to a coding agent.
SKIP = frozenset({"incest", "whorehouse", "whorehouses"})


def is_inflection(word: str, form: str) -> bool:
    shared = len(os.path.commonprefix([word, form]))
    return shared >= min(len(word), len(form)) - INFLECTION_SHARED and shared >= 5


def main() -> None:
    source = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/dict/words")
    spec = yaml.safe_load((REPO / "templates" / "rooms.yaml").read_text(encoding="utf-8"))
    spec = {k: v for k, v in spec.items() if k != "not_typos"}
    rooms = compile_rooms(spec)
    forms = {term: form for form, term in rooms.fuzzy}
    # Lower-case entries only: capitalised ones are names ("Skinner", "Chanel").
    words = sorted({w for w in source.read_text(encoding="utf-8").split() if w.islower()})
    found = []
    for word in words:
        if len(word) < FUZZY_MIN_LEN or not word.isascii() or not word.isalpha():
            continue
        hit = _fuzzy_term(word, rooms)
        if word in VARIANTS or word in SKIP:
            continue
        if hit and not is_inflection(word, forms.get(hit[0], hit[0])):
            found.append((word, hit[0]))
    for word, term in found:
        print(f"  # {word} -> {term}", file=sys.stderr)
    print("not_typos: [" + ", ".join(w for w, _ in found) + "]")


if __name__ == "__main__":
    main()
