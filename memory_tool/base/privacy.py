"""Keep secrets and private text out of memory, and keep memory text inside its fence.

Everything that writes memory to disk calls :func:`sanitize` first (``<private>`` spans
removed, then secrets replaced by ``[REDACTED:<kind>]``). Everything that injects memory into
the model's context wraps it in ``<memory-context>`` … ``</memory-context>`` and passes each
memory's text through :func:`escape_fence` so stored text can neither close that fence nor
forge one of our tags. Text captured back from a session goes through :func:`strip_injected`
so we never store what we injected ourselves.

Runs on hook paths (every prompt), so: stdlib ``re`` only, patterns compiled once at import.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = [
    "FENCE_LOOKALIKE",
    "FENCE_TAG",
    "LazyPattern",
    "OUR_TAGS",
    "REDACTION_PATTERNS",
    "escape_fence",
    "redact",
    "sanitize",
    "strip_injected",
    "strip_private",
]


class LazyPattern:
    """A regex compiled on first use.

    Compiling this module's ~25 patterns costs ~7 ms, a third of a hook's whole budget; a
    UserPromptSubmit hook that only escapes the fence should not pay for redaction patterns.

    ``hints``: lower-case substrings of which every match holds at least one. A text with none
    of them cannot match, so ``may_match`` rules it out by substring tests, without compiling or
    running the regex: the hook's per-prompt patterns (follow-ups, closings, past questions,
    special tokens) then cost nothing on most prompts.
    """

    __slots__ = ("_compiled", "_flags", "hints", "source")

    def __init__(self, source: str, flags: int = 0, hints: Sequence[str] = ()) -> None:
        self.source = source
        self._flags = flags
        self.hints = tuple(hints)
        self._compiled: re.Pattern[str] | None = None

    def may_match(self, low: str) -> bool:
        """False when ``low`` (the text, lower-cased) holds none of the hints."""
        return not self.hints or any(hint in low for hint in self.hints)

    def found(self, text: str) -> bool:
        """Whether the pattern occurs in ``text``, ruled out by the hints first."""
        return self.may_match(text.lower()) and self.compiled.search(text) is not None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source, self._flags)
        return self._compiled

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str) -> str:
        return self.compiled.sub(repl, text)

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled.match(text)

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)

    def split(self, text: str) -> list[str | Any]:
        return self.compiled.split(text)

    def findall(self, text: str) -> list[Any]:
        return self.compiled.findall(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.compiled.fullmatch(text)


# --------------------------------------------------------------------------------------------
# <private> spans
# --------------------------------------------------------------------------------------------

# Opening tag may carry attributes (`<private reason="x">`); both tags case-insensitive and
# tolerant of inner whitespace (`< / PRIVATE >`) so a sloppy close still closes.
# `<private-notes>` is a different tag; `<private/>` is empty and changes nothing.
_PRIVATE_TAG = LazyPattern(r"<\s*(/?)\s*private(?![\w-])([^<>]*)>", re.IGNORECASE)


def strip_private(text: str) -> str:
    """Remove every ``<private>…</private>`` span, tags included.

    Nesting is counted, so ``<private>a<private>b</private>c</private>`` removes all of it. An
    unclosed ``<private>`` removes everything after it (fail closed: a forgotten close tag must
    not leak the rest). A stray ``</private>`` with nothing open is dropped and the text around
    it kept.
    """
    if "<" not in text:
        return text
    out: list[str] = []
    depth = 0
    pos = 0
    for m in _PRIVATE_TAG.finditer(text):
        if depth == 0:
            out.append(text[pos : m.start()])
        if m.group(1):  # closing tag
            depth = max(0, depth - 1)
        elif not m.group(2).rstrip().endswith("/"):  # self-closing opens nothing
            depth += 1
        pos = m.end()
    if depth == 0:
        out.append(text[pos:])
    return "".join(out)


# --------------------------------------------------------------------------------------------
# Secret redaction
# --------------------------------------------------------------------------------------------

_Replacer = Callable[["re.Match[str]"], str]

_REDACTED_PREFIX = "[REDACTED"


def _whole(kind: str) -> _Replacer:
    """Replace the entire match."""
    tag = f"[REDACTED:{kind}]"
    return lambda _m: tag


def _splice(m: re.Match[str], group: str, replacement: str) -> str:
    """The match with one group replaced, everything around it kept."""
    start, end = m.span(group)
    base = m.start()
    whole = m.group(0)
    return whole[: start - base] + replacement + whole[end - base :]


def _group(kind: str, group: str = "secret") -> _Replacer:
    """Replace only the named group, keeping the context (key name, user, host) around it."""
    tag = f"[REDACTED:{kind}]"

    def repl(m: re.Match[str]) -> str:
        if m.group(group).startswith(_REDACTED_PREFIX):  # a more specific pattern got it
            return m.group(0)
        return _splice(m, group, tag)

    return repl


# The key of an assignment: a whole identifier whose last word is a secret keyword
# (`password`, `DB_PASSWORD`, `github_token`, `clientSecret`, `x-api-key`, `SECRET_KEY`).
# Anchored at an identifier start and required to END at the keyword, so `max_tokens`,
# `token_count`, `secretary`, `password_reset` never match. `pwd` is deliberately absent:
# `PWD=/home/me` is the working directory, not a password.
_KEY = r"""
    (?<![\w.-])
    (?P<key>[A-Za-z0-9_.-]*?
        (?P<kw>passw(?:or)?d|passphrase|secret|token|api[_-]?key|apikey
            |(?:secret|private|access|signing|encryption|master|app)[_-]?key)
    )
    (?![\w-])
"""

# `key = "value"` / `key: 'value'` with a quoted value: env, YAML, JSON, Python, TOML. The
# key may itself be quoted (JSON). `==` is a comparison and `::` a scope, not assignments.
_ASSIGN_QUOTED = LazyPattern(
    _KEY
    + r"""
    ["']?[ \t]*(?:=(?!=)|:(?!:))[ \t]*
    (?P<q>["'])(?P<secret>(?:\\.|(?!(?P=q))[^\\\n])+)(?P=q)
    """,
    re.IGNORECASE | re.VERBOSE,
)

# `key=value` with an unquoted value (env files, shell, CLI flags, query strings). The value
# ends at whitespace, a quote or `&` (the next query parameter).
_ASSIGN_EQ_BARE = LazyPattern(
    _KEY + r"""["']?[ \t]*=(?!=)[ \t]*(?P<secret>[^\s'"`&]+)""",
    re.IGNORECASE | re.VERBOSE,
)

# A command's secret flag with its value after a space: `--password vqrt-hmkz-plwe-yoxa`,
# `--token "…"` (blind28: a notarytool app password reached the hot file and a cold summary).
# The flag must end at the keyword (`--token-file path`, `--password-stdin` stay) and the value
# is no other flag.
_FLAG_BARE = LazyPattern(
    r"""(?<![\w-])--?(?P<key>[A-Za-z0-9_-]*?(?P<kw>passw(?:or)?d|passphrase|secret|token
        |api[_-]?key|apikey))(?![\w-])[ \t]+
        (?P<secret>"[^"\n]+"|'[^'\n]+'|[^\s'"`\-][^\s'"`]*)""",
    re.IGNORECASE | re.VERBOSE,
)

# `key: value` unquoted (YAML). Prose uses colons too ("Token: we refresh it hourly"), so
# only a key at the start of a line whose value is a single word ending the line counts.
_ASSIGN_COLON_BARE = LazyPattern(
    r"(?m)^[ \t]*(?:-[ \t]+)?" + _KEY + r"""[ \t]*:[ \t]*(?P<secret>[^\s'"`#]+)[ \t]*$""",
    re.IGNORECASE | re.VERBOSE,
)

# A password said in prose: "the QA account is qa@x.dev, password Kestrel-5521", "the password
# is hunter2". Only a value with a letter and a digit, six characters at least, counts: "password
# reset", "password length 12" and "password hashing with bcrypt" stay as they are. "pw" and
# "pwd" count in prose ("the staging user is claims_rw, pw Quillfeather-2231"; blind12), not as
# a key (`PWD=/home/me` is the working directory); so does a binding, seed or recovery phrase
# ("the elrs binding phrase is copper-heron-77"; blind15). Up to four words may say whose it is
# ("the app-specific password for the studio apple id is …"), and an app password in its own
# form (four groups of four letters: hkqz-wtrp-mvne-gxla) counts without a digit.
_PROSE_PASSWORD = LazyPattern(
    r"""(?<![\w-])(?P<key>(?P<kw>passw(?:or)?d|passphrase|passcode|pwd?
        |(?:binding|seed|recovery|secret|pass)[ \t]+phrase))(?![\w-])
        (?:[ \t]+(?:for|of|to)(?:[ \t]+[\w.\-]+){1,4}?(?=[ \t]+(?:is|was)\b))?
        # "the password's Gaivota_1987" (blind25)
        (?:'s|[ \t]+(?:is|was))?[ \t]*[,:]?[ \t]+
        (?P<secret>(?=[^\s'"`]*\d)(?=[^\s'"`]*[A-Za-z])[^\s'"`]{6,}
          |[a-z]{4}(?:-[a-z]{4}){3}(?![\w-]))""",
    re.IGNORECASE | re.VERBOSE,
)

# A token or key said in prose: "the crates.io token for CI is cio8Hq2Zt…", "the API key: 9f…"
# (not a bare "key": "the key for staging is k8s-staging-v2" names a cluster).
# Up to four words may name what it is for; only a long value with a letter and a digit (16
# characters at least) counts: "the token for CI is stored in vault" stays as it is.
# A name from an environment may lead it ("UNITY_SERIAL is F3-7KQ2-…"), and a licence serial
# counts (blind18); a value may hold a colon ("my CDS key is 28417:4f1c2e9a-…"; blind17).
_PROSE_TOKEN = LazyPattern(
    r"""(?<![\w-])(?P<key>(?:[A-Za-z0-9]+_)*(?P<kw>token|secret|api[ \t]?key|access[ \t]key|key
          # BLE's long-term, identity and pre-shared keys ("fixed LTK for now: 3F 9A 07 …"; blind34)
          |ltk|irk|psk|csrk
          # "appkey is 5E0D…" (LoRaWAN's AppKey, NwkKey; blind23)
          |app[ \t]?key|nwk[ \t]?key|app[ \t]?s[ \t]?key|nwk[ \t]?s[ \t]?key
          |serial|licen[cs]e[ \t_-]?key
          # "app id is 7f3c9a1e…" (an openexchangerates key; blind31): a random value only
          |app[ \t_-]?id))(?![\w-])
        # "the shared secret from app store connect is …" (blind25)
        (?:[ \t]+(?:for|of|to|from|on|in)(?:[ \t]+[\w.\-]+){1,4}?)?
        # "the storage key for uploads later, it's 3b9f0c2e-…" (blind30)
        [ \t]*(?:(?:is|was)[ \t]*[,:]?|[,:]|,?[ \t]+it(?:'s|[ \t]+is))[ \t]+
        (?P<secret>(?=[^\s'"`]*\d)(?=[^\s'"`]*[A-Za-z])[A-Za-z0-9_\-+/=.:]{16,}
          # "the datahub key is 7c1e 90ab 44f2 d3e8 b61a 0c57 e3f9 2a10 (no spaces obviously)"
          # (blind29): four or more groups of hex digits with spaces between them, or eight or
          # more bytes ("3F 9A 07 C1 5E 22 B8 D4 …"; blind34).
          |(?=[0-9a-f \t]*\d)(?=[0-9a-f \t]*[a-f])
           (?:[0-9a-f]{4,8}(?:[ \t]+[0-9a-f]{4,8}){3,}|[0-9a-f]{2}(?:[ \t]+[0-9a-f]{2}){7,})
           (?![\w-]))""",
    re.IGNORECASE | re.VERBOSE,
)
# A login said as "user / password" ("staging site login for the e2e tests is admin /
# Blueberry-Cardigan-88"; blind17): the password, with a letter and a digit.
_PROSE_LOGIN = LazyPattern(
    r"""(?<![\w-])(?:login|log-in|credentials?|creds)(?![\w-])(?:[ \t]+[\w.\-]+){0,6}?
        [ \t]+(?:is|are|[:=])[ \t]+(?:
          [\w.@\-]+[ \t]*/[ \t]*
          (?:(?P<secret>(?=[^\s'"`,]*\d)(?=[^\s'"`,]*[A-Za-z])[^\s'"`,]{6,})
          # "my login there is rdias / lapwing sorrel 63 (with the spaces, …)" (blind32)
            |(?P<phrase>[a-z]{3,12}(?:[ \t]+[a-z0-9]{2,12}){1,5})(?=[ \t]*(?:[.,;:!(\n]|$)))
        # "the root login on mgmt is still Tangerine-lobster-1987" (blind24): the password
        # alone, a word of 8 or more with a letter and a digit that is no path, address or URL.
        | (?:still[ \t]+)?(?P<alone>(?=[^\s'"`,]*\d)(?=[^\s'"`,]*[A-Za-z])(?![^\s'"`,]*[/@:])
            [^\s'"`,]{8,}?)(?=[.,;!)]*(?:\s|$)))""",
    re.IGNORECASE | re.VERBOSE,
)

# A password said as words with spaces: "its password is velvet ferry ninety otter (yes with the
# spaces)" (blind20: it reached the hot file and a cold summary). Three to six plain words that
# end the clause, none of them a word prose is made of ("the password is stored in vault", "is
# the same as staging" stay).
_PROSE_PASSPHRASE = LazyPattern(
    r"""(?<![\w-])(?:passw(?:or)?d|passphrase|pass[ \t]+phrase|pwd?)(?![\w-])
        (?:[ \t]+(?:for|of|to)(?:[ \t]+[\w.\-]+){1,4}?)?[ \t]+(?:is|was|[:=])[ \t]+
        (?P<secret>[a-z]{3,12}(?:[ \t]+[a-z]{3,12}){2,5})(?=[ \t]*(?:[.,;:!(\n]|$))""",
    re.IGNORECASE | re.VERBOSE,
)
# A key pair said in prose: "auth keys for repo.magento.com are public 5e7a… / private b91d…"
# (blind26): each long value (16+ characters with a letter and a digit) after public/private.
_KEY_PAIR = LazyPattern(
    r"""(?<![\w-])(?:public|private)(?:[ \t]+key)?[ \t]*[:=]?[ \t]+
        (?P<secret>(?=[\w\-]*\d)(?=[\w\-]*[A-Za-z])[\w\-]{16,})(?![\w-])""",
    re.IGNORECASE | re.VERBOSE,
)
_PROSE_WORDS = frozenset(
    "the and for with from into onto that this those these than then there their they them "
    "stored kept saved managed rotated set changed reset same different "
    "not too very also just only still already now here in on at to of by as is are was were "
    "be been being has have had will would should could can must may might our your my its "
    "his her all any some every each one two three vault env file files config manager "
    "secret secrets somewhere elsewhere there below above attached shared sent".split()
)


def _passphrase(m: re.Match[str]) -> str:
    words = m.group("secret").lower().split()
    if any(w in _PROSE_WORDS for w in words):
        return m.group(0)
    return _splice(m, "secret", "[REDACTED:password]")


# A credential with no name next to it: one word of 24 characters or more that mixes at least
# four digits, four capitals and four small letters (cio8Hq2ZtV5mR1xW7bN4kP9dJ3sL6fY0aCe). A
# git hash (no capitals), a UUID, a path or a CamelCase name from code (few digits) is none.
_RANDOM_WORD = LazyPattern(r"(?<![\w/.\-])(?P<secret>[A-Za-z0-9]{24,})(?![\w/\-]|\.\w)")
RANDOM_MIN_EACH = 4

# A password said with no name next to it: "rotated the keystore password … new one is
# tundra!Parsnip62" (blind5). One word of 8-40 characters with a small letter, a capital, a
# digit and a symbol is a password in prose; not code ("a!=B2", "x==Y1"), a mail address or a
# URL.
_PASSWORD_WORD = LazyPattern(
    r"""(?<![\w/.\-@!#$%^&*?~+=])
        (?P<secret>(?=[\w!@#$%^&*?~+\-]*[a-z])(?=[\w!@#$%^&*?~+\-]*[A-Z])(?=[\w!@#$%^&*?~+\-]*\d)
        (?=[\w\-]*[!@#$%^&*?~+][\w!@#$%^&*?~+\-]*[A-Za-z0-9])
        (?!(?i:ctrl|shift|alt|cmd|tab|meta|option|fn)\+)
        [A-Za-z0-9][\w!@#$%^&*?~+\-]{7,39})
        (?![\w/\-@!#$%^&*?~+=.]*[\w/])""",
    re.VERBOSE,
)


# A bare "key" names too much ("the key for staging is k8s-staging-v2"): its value counts only
# with a part of 16 characters or more that mixes letters and digits ("the sending key is
# key-1ef18336…").
_LONG_RANDOM_PART = LazyPattern(r"(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{16,}")


# A UUID said as a key ("key is 3e9a71c4-0b5d-…"; blind16: an API key reached a captured
# memory, the hot file and a cold summary): many services hand out UUIDs as keys.
_UUID_IN = LazyPattern(
    r"(?<![0-9a-f])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9a-f])",
    re.IGNORECASE,
)
# A licence serial: five or more groups of 2-5 capitals and digits ("F3-7KQ2-9XPL-M4TD-8WRC").
_SERIAL_GROUPS = LazyPattern(r"^[A-Z0-9]{2,5}(?:-[A-Z0-9]{2,5}){4,}$")
# A key in dashed groups of hex digits that is no UUID ("3b9f0c2e-7a41-4d8b-9e63f15a2c7d-04b8-4e1f";
# blind30): four or more groups, 24 hex digits at least.
_HEX_DASHED = LazyPattern(
    r"^(?=(?:-?[0-9a-f]){24})[0-9a-f]{4,12}(?:-[0-9a-f]{4,12}){3,}$", re.IGNORECASE
)
# A key written in groups with spaces ("7c1e 90ab 44f2 d3e8 …"; blind29).
_HEX_GROUPS = LazyPattern(
    r"^(?:[0-9a-f]{4,8}(?:[ \t]+[0-9a-f]{4,8}){3,}|[0-9a-f]{2}(?:[ \t]+[0-9a-f]{2}){7,})$",
    re.IGNORECASE,
)


def _curl_user(m: re.Match[str]) -> str:
    if _REDACTED_PREFIX in m.group(0)[m.start("user") - m.start() :]:
        return m.group(0)  # redacted already: redact() is idempotent
    out = _splice(m, "secret", "[REDACTED:password]")
    user = m.group("user")
    if _LONG_RANDOM_PART.fullmatch(user):
        start = m.start("user") - m.start()
        out = out[:start] + "[REDACTED:token]" + out[start + len(user) :]
    return out


def _login(m: re.Match[str]) -> str:
    if m.group("secret"):
        return _splice(m, "secret", "[REDACTED:password]")
    if m.group("phrase"):
        if any(w in _PROSE_WORDS for w in m.group("phrase").lower().split()):
            return m.group(0)  # "the login is admin / the usual one"
        return _splice(m, "phrase", "[REDACTED:password]")
    # Said alone, a password has two digits and a capital or a symbol: "the login is
    # oauth2-based" names a kind of login.
    word = m.group("alone")
    mixed = any(c.isupper() for c in word) or any(c in "!#$%^&*_+=?~" for c in word)
    if sum(c.isdigit() for c in word) < 2 or not mixed:
        return m.group(0)
    return _splice(m, "alone", "[REDACTED:password]")


def _prose_token(m: re.Match[str]) -> str:
    value = _TRAILING_CODE_PUNCT.sub("", m.group("secret"))
    if (
        m.group("kw").lower().replace("_", " ").replace("-", " ")
        in ("key", "serial", "app id", "appid", "ltk", "irk", "psk", "csrk")
        and not _LONG_RANDOM_PART.search(value)
        and not _UUID_IN.search(value)
        and not _SERIAL_GROUPS.match(value)
        and not _HEX_GROUPS.match(value)
        and not _HEX_DASHED.match(value)
    ):
        return m.group(0)
    return _assignment(bare=True)(m)


def _random_word(m: re.Match[str]) -> str:
    word = m.group("secret")
    digits = sum(c.isdigit() for c in word)
    upper = sum(c.isupper() for c in word)
    lower = sum(c.islower() for c in word)
    if min(digits, upper, lower) < RANDOM_MIN_EACH:
        return word
    return "[REDACTED:secret]"


# Assignment values that are placeholders or code, not secrets: redacting them would only
# destroy useful text (`password=None`, `token=$GITHUB_TOKEN`, `api_key=os.environ[...]`,
# `token=request.headers[...]`, `secret=get_secret()`).
_NOT_A_SECRET_VALUE = LazyPattern(
    r"""(?ix)
    (?: none | null | nil | true | false | undefined )[,;)\]}]*$
    | \$                                    # shell / template variable: $TOKEN, ${TOKEN}
    | \[REDACTED                            # already redacted by a more specific pattern
    | <[^<>]*>$                             # <your-token-here>
    | \{\{                                  # {{ secrets.TOKEN }}
    | %\(                                   # %(password)s
    | \*+$                                  # ****
    | (?:os\.environ|os\.getenv|process\.env)
    | [A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*[(\[]   # a call or subscript: get_token(), env["X"]
    """
)

# Trailing punctuation that closes the surrounding code or sentence, not the secret:
# `f(password=abc)`, `password=hunter2. Never log …` (the full stop stays, so the text after
# it is still a sentence of its own; at worst one character of a secret stays in view).
_TRAILING_CODE_PUNCT = LazyPattern(r"[.!?,;)\]}]+$")


def _kind_for(keyword: str) -> str:
    kw = keyword.lower()
    if kw.startswith("pass") or kw in ("pw", "pwd") or kw.endswith("phrase"):
        return "password"
    if kw == "token":
        return "token"
    if kw.startswith("api"):
        return "api_key"
    return "secret"


def _assignment(*, bare: bool) -> _Replacer:
    def repl(m: re.Match[str]) -> str:
        value = m.group("secret")
        if _NOT_A_SECRET_VALUE.match(value):
            return m.group(0)
        tail = ""
        if bare:
            trailing = _TRAILING_CODE_PUNCT.search(value)
            if trailing:
                value, tail = value[: trailing.start()], trailing.group(0)
        # `password=password`, `token = token`: passing a variable along, not a secret.
        if not value or value.lower() in (m.group("key").lower(), m.group("kw").lower()):
            return m.group(0)
        return _splice(m, "secret", f"[REDACTED:{_kind_for(m.group('kw'))}]{tail}")

    return repl


# (kind, pattern, replacer), applied in order. Order matters: whole key blocks first, then
# vendor prefixes (Anthropic before the generic OpenAI sk-), then context patterns (URLs,
# headers, assignments) which skip values a more specific pattern already redacted, so the
# most specific kind wins and redact() is idempotent.
REDACTION_PATTERNS: tuple[tuple[str, LazyPattern, _Replacer], ...] = (
    # PEM / OpenSSH private keys, header to footer. An unterminated block (a paste cut short)
    # is redacted to the end of the text: fail closed.
    (
        "private_key",
        LazyPattern(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----"
            r".*?(?:-----END[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
        _whole("private_key"),
    ),
    # Anthropic: sk-ant-api03-…, sk-ant-admin01-…. Before the OpenAI pattern, which would
    # otherwise claim it as sk-….
    ("anthropic_key", LazyPattern(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), _whole("anthropic_key")),
    # GitHub: classic ghp_/gho_/ghu_/ghs_/ghr_ (36 chars after the prefix) and fine-grained
    # github_pat_ (82). Minimums a little lower to catch older and hand-made test tokens.
    (
        "github_token",
        LazyPattern(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})\b"),
        _whole("github_token"),
    ),
    # Stripe secret / restricted keys (live and test: both are credentials).
    (
        "stripe_key",
        LazyPattern(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b"),
        _whole("stripe_key"),
    ),
    # Slack bot / user / app-level / refresh tokens.
    ("slack_token", LazyPattern(r"\bxox[baprs]-[A-Za-z0-9-]{10,}"), _whole("slack_token")),
    # Incoming webhooks: the URL is the credential ("https://hooks.slack.com/services/T…/B…/<secret>",
    # "https://discord.com/api/webhooks/<id>/<token>"; blind24). The host and ids stay.
    (
        "webhook_token",
        LazyPattern(
            r"(?:hooks\.slack\.com/(?:services|workflows|triggers)/[A-Z0-9]+/[A-Z0-9]+/"
            r"|discord(?:app)?\.com/api/webhooks/\d+/)(?P<secret>[A-Za-z0-9_\-]{16,})"
        ),
        _group("webhook_token"),
    ),
    # curl's basic auth: `curl -u <user>:<password>` (blind26: a Sendcloud key pair reached the
    # hot file, a cold summary and a captured memory). The user goes too when it is a key (16+
    # characters with a letter and a digit).
    (
        "curl_user",
        LazyPattern(
            r"\bcurl\b[^\n]{0,200}?(?<![\w-])(?:-u|--user)[ \t=]+['\"]?(?P<user>[^\s:'\"]+):"
            r"(?P<secret>(?=[^\s'\"]*[A-Za-z])[^\s'\"]+)"
        ),
        _curl_user,
    ),
    # Mailgun's API keys: "key-" and 32 hex digits.
    ("mailgun_key", LazyPattern(r"\bkey-[0-9a-f]{32}\b"), _whole("mailgun_key")),
    # OpenAI: sk-…, sk-proj-…, sk-svcacct-…. Must contain a digit, so a long hyphenated
    # slug that happens to start "sk-" is not taken for a key.
    (
        "openai_key",
        LazyPattern(r"(?<![A-Za-z0-9_-])sk-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}"),
        _whole("openai_key"),
    ),
    # Google API keys: AIza + 35 chars.
    (
        "google_api_key",
        LazyPattern(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
        _whole("google_api_key"),
    ),
    # JWTs: base64url header and payload both start with eyJ (`{"`); signature may be empty.
    (
        "jwt",
        LazyPattern(
            r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"
        ),
        _whole("jwt"),
    ),
    # AWS access key ids: long-term (AKIA) and temporary (ASIA). Exactly 20 upper/digits.
    (
        "aws_access_key",
        LazyPattern(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
        _whole("aws_access_key"),
    ),
    # scheme://user:password@host: keep scheme, user and host so the text stays useful.
    # `host:8080/path` has no `@`, `git@github.com:org/repo` has no scheme: neither matches.
    (
        "url_password",
        LazyPattern(
            # A password pasted raw may hold "#" or "?" ("…:gL8#vQ2m!Rx7@paddle-db…"; blind24).
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://(?P<user>[^\s:/?#@\[\]]*):(?P<secret>[^\s/@]+)@"
            r"(?=[A-Za-z0-9\[])"
        ),
        _group("url_password"),
    ),
    # scheme://key@host with no password: a Sentry DSN (https://<32 hex>@o1.ingest.sentry.io/5),
    # a token used as the user (https://x-token@…). Only a long part with a letter and a digit
    # counts, so `ssh://git@host` and `https://deploy-bot@host` keep their user (blind12: a DSN
    # reached a memory file, the hot file and a cold summary).
    (
        "url_token",
        LazyPattern(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://"
            r"(?P<secret>(?=[\w.~-]*\d)(?=[\w.~-]*[A-Za-z])[\w.~-]{16,})@(?=[A-Za-z0-9\[])"
        ),
        _group("url_token"),
    ),
    # Authorization headers: `Authorization: Bearer x`, `"Authorization": "token x"`,
    # `-H 'Authorization: Basic x'`.
    (
        "bearer_token",
        LazyPattern(
            r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?\s*(?:bearer|token)\s+"
            r"(?P<secret>[A-Za-z0-9._~+/=-]+)"
        ),
        _group("bearer_token"),
    ),
    (
        "basic_auth",
        LazyPattern(
            r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?\s*basic\s+(?P<secret>[A-Za-z0-9+/=]+)"
        ),
        _group("basic_auth"),
    ),
    # Any other scheme in an Authorization or API-key header: `Authorization: Apikey 3f9c…`
    # (blind20: a UUID key reached the hot file and a cold summary), `X-Api-Key: …`. Only a
    # value of 12 characters or more with a digit counts ("Authorization: required").
    (
        "header_key",
        LazyPattern(
            r"(?i)\b(?:authorization|x-api-key|api-key|x-auth-token|x-access-token)[\"']?\s*[:=]"
            r"\s*[\"']?\s*(?:(?!bearer\b|token\b|basic\b)[a-z][\w-]{1,20}\s+)?"
            r"(?P<secret>(?=[\w.~+/=:-]*\d)[A-Za-z0-9._~+/=:-]{12,})"
        ),
        _group("header_key"),
    ),
    # A bare `Bearer <token>` outside a header: capitalised, 20+ chars and containing a
    # digit, so "Bearer authentication" or "bearer tokens expire" stay.
    (
        "bearer_token",
        LazyPattern(r"\bBearer\s+(?P<secret>(?=[A-Za-z._~+/-]*[0-9])[A-Za-z0-9._~+/-]{20,}=*)"),
        _group("bearer_token"),
    ),
    # AWS secret access keys: 40 base64 chars, only recognisable next to their key name.
    (
        "aws_secret_key",
        LazyPattern(
            r"(?i)(?<![A-Za-z0-9])(?:aws[_-]?)?secret[_-]?(?:access[_-]?)?key[\"']?\s*[:=]\s*"
            r"[\"']?(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        _group("aws_secret_key"),
    ),
    # Generic `password=` / `secret:` / `token=` / `api_key=` assignments (key name kept).
    ("assignment", _ASSIGN_QUOTED, _assignment(bare=False)),
    ("assignment", _ASSIGN_EQ_BARE, _assignment(bare=True)),
    ("assignment", _ASSIGN_COLON_BARE, _assignment(bare=True)),
    ("assignment", _FLAG_BARE, _assignment(bare=True)),
    ("assignment", _PROSE_PASSWORD, _assignment(bare=True)),
    ("assignment", _PROSE_TOKEN, _prose_token),
    ("assignment", _PROSE_LOGIN, _login),
    ("assignment", _PROSE_PASSPHRASE, _passphrase),
    ("assignment", _KEY_PAIR, _group("secret")),
    ("random", _RANDOM_WORD, _random_word),
    ("password", _PASSWORD_WORD, lambda m: "[REDACTED:secret]"),
)


# Lower-case text one of which a pattern cannot match without. Most text holds none of them, so
# most patterns are never compiled or run: compiling all of them costs a prompt hook ~7 ms.
REDACTION_HINTS: dict[str, tuple[str, ...]] = {
    "private_key": ("private key",),
    "anthropic_key": ("sk-ant-",),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "stripe_key": ("_live_", "_test_"),
    "slack_token": ("xox",),
    "mailgun_key": ("key-",),
    "curl_user": ("curl",),
    "webhook_token": ("hooks.slack.com", "/api/webhooks/"),
    "openai_key": ("sk-",),
    "google_api_key": ("aiza",),
    "jwt": ("eyj",),
    "aws_access_key": ("akia", "asia"),
    "url_password": ("://",),
    "url_token": ("://",),
    "bearer_token": ("authorization", "bearer"),
    "basic_auth": ("authorization",),
    "header_key": ("authorization", "api-key", "-token"),
    "aws_secret_key": ("secret",),
    # "login" and "log-in", not "log": most prompts about logging would compile every
    # assignment pattern for nothing.
    "assignment": (
        "pass",
        "pw",
        "phrase",
        "secret",
        "token",
        "key",
        "serial",
        "login",
        "log-in",
        "cred",
        "app id",
        "app_id",
        "appid",
        "ltk",
        "irk",
        "psk",
    ),
    # Any text may hold one; the pattern is one character class, cheap to compile and run.
    "random": ("",),
    # A password word holds one of its symbols ("?" left out: most questions would compile it
    # for the rare password whose only symbol it is).
    "password": tuple("!@#$%^&*~+"),
}


def redact(text: str) -> str:
    """Replace secrets with ``[REDACTED:<kind>]``, keeping surrounding context.

    Kinds: private_key, url_password, url_token, bearer_token, basic_auth, anthropic_key,
    github_token, stripe_key, slack_token, openai_key, google_api_key, jwt, aws_access_key,
    aws_secret_key, and for generic assignments password / secret / token / api_key. Idempotent.
    """
    low = text.lower()
    for kind, pattern, repl in REDACTION_PATTERNS:
        if not any(hint in low for hint in REDACTION_HINTS[kind]):
            continue
        new = pattern.sub(repl, text)
        if new != text:
            text, low = new, new.lower()
    return text


def sanitize(text: str) -> str:
    """What every writer calls before text hits disk: strip ``<private>`` spans, then redact."""
    return redact(strip_private(text))


# --------------------------------------------------------------------------------------------
# Fencing
# --------------------------------------------------------------------------------------------

# The tag that wraps injected memory. Callers build the fence from this constant.
FENCE_TAG = "memory-context"

# Tags we emit or honour. Memory text must never contain a live `<` or `</` followed by one
# of these: it could close the fence early (turning the rest into "instructions"), open a
# forged fence or entry, hide text as <private>, or impersonate Claude Code's reminders.
OUR_TAGS: tuple[str, ...] = ("memory-context", "memory-entry", "private", "system-reminder")

# Replacement for `<` at the start of a neutralised tag: U+2039 SINGLE LEFT-POINTING ANGLE
# QUOTATION MARK. Reads as an angle bracket to people and the model, is not `<` to any
# parser, and costs +1 cl100k token on `<memory-context>` and +2 on `</memory-context>`
# (measured; a zero-width space costs +2 and is invisible, `&lt;` invites decoding).
FENCE_LOOKALIKE = "\u2039"

# `<` starting one of our tags, open or close, any case, with any whitespace a lenient reader
# might accept (`< / Memory-Context`). Anything shaped like *memory* counts (memory-entry,
# working-memory, memory_notes…), per the fence contract. Lookahead only: we replace the `<`.
_OUR_TAG_START = LazyPattern(
    r"<(?=\s*/?\s*(?:" + "|".join(re.escape(t) for t in OUR_TAGS) + r"|[a-z_-]*memory))",
    re.IGNORECASE,
)


def escape_fence(text: str) -> str:
    """Neutralise our tags inside memory text by replacing their ``<`` with ``‹`` (U+2039).

    Guarantee (tested for arbitrary text): the result contains no ``<`` that opens or closes
    any tag in :data:`OUR_TAGS` or any tag whose name (letters, ``-``, ``_``) contains
    ``memory``, whatever the case or whitespace around ``/``. Other ``<`` (code,
    comparisons, HTML) are untouched, so ordinary text costs nothing extra.
    """
    if "<" not in text:
        return text
    return _OUR_TAG_START.sub(FENCE_LOOKALIKE, text)


# One whole injected block, opening tag to closing tag; unclosed runs to the end (it is ours
# and truncated, never the person's words).
# Gemini CLI hands our context back HTML-escaped inside its own <hook_context> (seen with 0.61.0
# in the prompt of AfterAgent and in its chat log): "&lt;memory-context&gt;" is a fence too.
_INJECTED_BLOCK = LazyPattern(
    r"(?:<|&lt;)\s*memory-context(?![\w-])[^<>&]*(?:>|&gt;).*?"
    r"(?:(?:<|&lt;)\s*/\s*memory-context\s*(?:>|&gt;)|\Z)",
    re.IGNORECASE | re.DOTALL,
)
_STRAY_FENCE_CLOSE = LazyPattern(r"(?:<|&lt;)\s*/\s*memory-context\s*(?:>|&gt;)", re.IGNORECASE)


def strip_injected(text: str) -> str:
    """Remove whole ``<memory-context>…</memory-context>`` blocks (our own injected text).

    Used on text about to be captured back into memory, so what we injected is never saved
    as if the session had said it. An unclosed block is removed to the end; a stray closing
    tag is removed on its own.
    """
    if "<" not in text and "&lt;" not in text:
        return text
    text = _INJECTED_BLOCK.sub("", text)
    return _STRAY_FENCE_CLOSE.sub("", text)
