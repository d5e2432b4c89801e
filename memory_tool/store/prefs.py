"""Questions about the user's own likes, habits and setup ("how should I write this commit?",
"set up my terminal the way I like it"), for the one ranking (``store.search``) to answer from
what the user said about themselves: ``user`` memories (identity) first, and a small, fixed
expansion of the question's words with the words such memories are written in.

Without the semantic extra, words are all search has, and a stated preference rarely shares
the question's: "I use fish and tmux" answers "set up my terminal" with no word in common. Two
small tables bridge that, both documented in docs/recall.md:
- PREFERENCE_CUES: how people state a preference ("I like", "I prefer", "I always"...);
- TOPICS: a question's topic word and the tools and habits a setup of that topic names.
Standard library only; nothing is compiled unless the question holds one of HINTS.
"""

from __future__ import annotations

import re

# A question about the user's preferences holds one of these (lower-cased substrings).
HINTS = (
    "should i", "should we", "my ", "i like", "i want", "i prefer", "do i", "prefer", "favo",
    "recommend", "suggest", "usual", "style", "the user", "convention", "habit", "how i ",
)  # fmt: skip

_ASKS = re.compile(
    r"\b(?:how|what|which|where|when)\s+(?:should|shall|do|would)\s+(?:i|we)\b"
    r"|\bshould\s+(?:i|we)\b"
    r"|\b(?:the\s+way|how)\s+(?:i|we)\s+(?:like|want|prefer|usually|normally|always)\b"
    r"|\b(?:do|does)\s+(?:i|the\s+user)\s+(?:like|want|prefer|use|usually)\b"
    r"|\b(?:i|the\s+user)\s+(?:like|likes|prefer|prefers|want|wants)\b"
    r"|\bmy\s+(?:usual|preferred|favou?rite|own|style|setup|set-up|config\w*|preferences?|"
    r"habits?|conventions?|defaults?|terminal|shell|editor|ide|prompt|dotfiles|workflow|"
    r"machine|laptop|environment|theme|keybindings?|aliases)\b"
    r"|\b(?:set\s*up|configure|install)\s+(?:my|me)\b"
    # "can you recommend..." asks for the user; "what did Melanie recommend" does not.
    r"|\b(?:can|could|would|will)\s+you\s+(?:recommend|suggest)\b"
    r"|\b(?:recommend|suggest)\w*\s+(?:me|for\s+me|to\s+me|us)\b"
    r"|\bwhat\s+style\b"
    r"|\b(?:coding|naming|commit|code)\s+(?:style|conventions?)\b",
    re.IGNORECASE,
)

# How a stated preference reads: added to the question's words.
PREFERENCE_CUES = ("prefer", "like", "always", "usually", "favorite", "favourite", "use", "want")

# A topic word of the question -> the words a preference about it is written in. Kept small
# and general (common developer setups), not fitted to any benchmark's memories.
# fmt: off
TOPICS: dict[str, tuple[str, ...]] = {
    "terminal": ("shell", "zsh", "bash", "fish", "tmux", "prompt", "starship", "theme", "font"),
    "shell": ("zsh", "bash", "fish", "starship", "prompt", "aliases", "dotfiles", "tmux"),
    "prompt": ("starship", "zsh", "fish", "shell"),
    "dotfiles": ("zsh", "bash", "fish", "vim", "git", "stow", "chezmoi"),
    "editor": ("vim", "neovim", "nvim", "emacs", "vscode", "code", "jetbrains", "ide", "theme"),
    "ide": ("vscode", "code", "jetbrains", "intellij", "pycharm", "vim", "neovim", "emacs"),
    "vim": ("neovim", "nvim", "lazyvim"),
    "commit": ("commits", "message", "messages", "conventional", "git", "squash", "small"),
    "commits": ("commit", "message", "conventional", "git", "squash", "small"),
    "branch": ("branches", "name", "naming", "git", "rebase", "merge"),
    "branches": ("branch", "name", "naming", "git", "rebase", "merge"),
    "merge": ("rebase", "squash", "merging", "pull", "request"),
    "pr": ("pull", "request", "requests", "review", "reviews", "prs"),
    "prs": ("pull", "request", "requests", "review", "reviews", "pr"),
    "review": ("pull", "request", "reviews", "approve", "comments"),
    "test": ("tests", "pytest", "jest", "vitest", "unittest", "assert", "fixtures", "tdd"),
    "tests": ("test", "pytest", "jest", "vitest", "unittest", "assert", "fixtures", "tdd"),
    "format": ("formatter", "black", "ruff", "prettier", "gofmt", "indent", "tabs", "spaces"),
    "formatting": ("formatter", "black", "ruff", "prettier", "gofmt", "indent", "tabs"),
    "lint": ("linter", "ruff", "eslint", "flake8", "mypy", "pylint"),
    "answer": ("answers", "terse", "short", "concise", "detailed", "explanations", "summaries"),
    "answers": ("answer", "terse", "short", "concise", "detailed", "explanations", "summaries"),
    "explain": ("explanations", "explanation", "example", "examples", "short", "detailed"),
    "explained": ("explanations", "explanation", "example", "examples", "short", "detailed"),
    "docs": ("documentation", "docstrings", "comments", "readme"),
    "comments": ("comment", "docstrings", "documentation"),
    "types": ("typing", "type", "hints", "mypy", "typescript"),
    "sql": ("orm", "queries", "query", "sqlalchemy", "raw"),
    "orm": ("sql", "queries", "sqlalchemy", "prisma", "django"),
    "python": ("pip", "uv", "poetry", "venv", "pyenv", "typing"),
    "package": ("npm", "pnpm", "yarn", "pip", "uv", "poetry", "cargo"),
    "dependencies": ("npm", "pnpm", "yarn", "pip", "uv", "poetry", "pin", "pinned"),
    "deploy": ("deploys", "release", "ci", "pipeline"),
    "logging": ("logs", "log", "structlog", "json"),
    "errors": ("error", "exceptions", "handling", "raise"),
    "font": ("fonts", "theme", "terminal"),
    "theme": ("dark", "light", "colour", "color", "scheme"),
    "keyboard": ("keybindings", "shortcuts", "vim", "layout"),
    "laptop": ("machine", "dotfiles", "setup", "shell", "editor"),
    "machine": ("laptop", "dotfiles", "setup", "shell", "editor"),
}
# fmt: on


def asks_preference(text: str) -> bool:
    """Whether ``text`` asks how the user likes something done, or about their own setup."""
    low = text.lower()
    return any(h in low for h in HINTS) and _ASKS.search(text) is not None


def expansion(terms: list[str]) -> list[str]:
    """Words to add to a preference question's ``terms``: the cues, then its topics' words."""
    out: list[str] = []
    seen = set(terms)
    for word in (*PREFERENCE_CUES, *(w for t in terms for w in TOPICS.get(t, ()))):
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out
