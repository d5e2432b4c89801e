"""List the English words the room classifier would wrongly read as a keyword.

Run from the repo root:  .venv/bin/python scripts/not_typos.py [/usr/share/dict/words]

Two ways a real word can be mistaken for a keyword, and a list in rooms.yaml for each:

- ``not_typos``: the classifier forgives typos ("deploymnet" -> deployment), but a real word one
  or two edits from a keyword is not a typo: "perfect" is not "prefect", "resolve" not
  "resolver", "contest" not "conftest". Printed on stdout as a YAML list to paste, complete:
  every dictionary word the typo look-up maps to a keyword, except inflections of it
  ("authorized" -> authorize, "downgraded" -> downgrade: same word, different ending).
- ``false_friends``: the light stemmer gives some words a keyword's stem though they mean
  something else ("core" and "cors" both stem to "cor", "pipe" to "pip", "required" to
  "requir" like "requirements"). Whether two words sharing a stem share a meaning takes a
  reader ("timing" is about speed like "time"; "shipping" an address is not deploying), so the
  candidates are printed on stderr for review, and the chosen ones are kept by hand in
  rooms.yaml's `false_friends`.

Re-run it after adding keywords. The word list is only read here, never shipped.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

from memory_tool.store.classify import _fuzzy_term, compile_rooms  # noqa: E402
from memory_tool.store.words import FUZZY_MIN_LEN, STOP_WORDS, stem, tokenize  # noqa: E402

# Two words are forms of one word when, after their longest common start (at least
# INFLECTION_MIN_SHARED letters), what is left of each is an ending of English inflection or
# derivation: "downgraded"/"downgrade" ("d", ""), "authenticating"/"authentication" ("ng",
# "on"). Anything else left over is another word: "compose"/"composer" ("", "r"),
# "controlled"/"controller" ("d", "r"), "constrained"/"constraint" ("ed", "t"). The word side
# may not add an "e" ("core" is not "cors", "pipe" not "pip"); the keyword side may ("cache" ~
# "caching").
INFLECTION_MIN_SHARED = 4
WORD_ENDINGS = frozenset(
    {"", "s", "es", "d", "ed", "ing", "ng", "on", "ion", "ions", "ons", "ation", "ations",
     "ly", "y", "ies", "ied", "ic", "al", "ally", "ity", "ive"}
)  # fmt: skip
KEYWORD_ENDINGS = WORD_ENDINGS | {"e"}

# Other spellings and derived forms of a keyword that the ending rule above does not see, where
# the typo match is right ("inefficiency" is about speed like "inefficient").
VARIANTS = frozenset(
    {"artefact", "artefacts", "carrousel", "carrousels", "gingko", "gingkos", "attacked",
     "concurrence", "concurrently", "cryptographer", "cryptographers", "dependence",
     "hypotheses", "impersonator", "inefficiency", "interception", "interceptions", "optimizer",
     "router", "serialize", "serialized", "serializes"}
)  # fmt: skip

# Left out to keep a user-facing file readable: nobody types these to a coding agent.
SKIP = frozenset({"incest", "whorehouse", "whorehouses"})


def is_inflection(word: str, form: str) -> bool:
    shared = len(os.path.commonprefix([word, form]))
    if shared < min(INFLECTION_MIN_SHARED, len(form)):
        return False
    # A doubled last consonant is spelling, not an ending: "dropped" ~ "drop".
    rest = word[shared:]
    if rest[:1] == word[shared - 1 : shared] and rest[1:] in ("ed", "ing", "er", "ers"):
        rest = rest[1:]
    return rest in WORD_ENDINGS and form[shared:] in KEYWORD_ENDINGS


def keyword_forms(spec: dict[str, object]) -> dict[str, set[str]]:
    """Single-word keywords, aliases and weak words of every room, by stem."""
    forms: dict[str, set[str]] = {}
    for body in (spec.get("rooms") or {}).values():  # type: ignore[union-attr]
        for key in ("keywords", "aliases", "weak"):
            for value in (body or {}).get(key) or ():
                words = tokenize(str(value)).words
                if len(words) == 1:
                    forms.setdefault(stem(words[0]), set()).add(words[0])
    return forms


def main() -> None:
    source = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/dict/words")
    template = REPO / "memory_tool" / "templates" / "rooms.yaml"
    spec = yaml.safe_load(template.read_text(encoding="utf-8"))
    chosen = set(spec.get("false_friends") or ())
    spec = {k: v for k, v in spec.items() if k not in ("not_typos", "false_friends")}
    rooms = compile_rooms(spec)
    forms = {term: form for form, term in rooms.fuzzy}
    by_stem = keyword_forms(spec)
    # Lower-case entries only: capitalised ones are names ("Skinner", "Chanel").
    words = sorted({w for w in source.read_text(encoding="utf-8").split() if w.islower()})
    found = []
    for word in words:
        if not word.isascii() or not word.isalpha() or word in STOP_WORDS:
            continue
        keywords = by_stem.get(stem(word), set())
        if (
            keywords
            and word not in keywords | chosen
            and not any(is_inflection(word, k) for k in keywords)
        ):
            rooms_of = sorted(room for room, _ in rooms.terms.get(stem(word), ()))
            print(f"  false friend? {word} ~ {sorted(keywords)} {rooms_of}", file=sys.stderr)
        # Words that are keywords' forms are listed too: the typo look-up skips them only
        # while they stay keywords, and a user may drop one from their rooms.yaml.
        if len(word) < FUZZY_MIN_LEN or word in VARIANTS or word in SKIP:
            continue
        hit = _fuzzy_term(word, rooms)
        if hit and not is_inflection(word, forms.get(hit[0], hit[0])):
            found.append((word, hit[0]))
    for word, term in found:
        print(f"  # {word} -> {term}", file=sys.stderr)
    print("not_typos: [" + ", ".join(w for w, _ in found) + "]")


if __name__ == "__main__":
    main()
