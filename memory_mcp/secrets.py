"""Credential detection for content about to be remembered, and for files written by hand.

Memories are committed to git and may be pushed to a remote, so a credential must never reach a
file. Findings name the kind and the line, never any character of the value. Documented example
keys (AWS's AKIAIOSFODNN7EXAMPLE and friends) count: an agent cannot tell them from real ones.

Most rules are a vendor's fixed prefix and length. Two are heuristics and carry a check on the
matched value: an AWS secret key (40 characters of base64 with no prefix of its own) and a value
assigned to a secret-looking name; both must look random, so git hashes, UUIDs, identifiers and
placeholders such as `${DB_PASSWORD}` pass.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

# A secret-looking name ends one of these: `token_url`, `secret_name` and `password_policy` name a
# thing about a secret, not the secret.
_ABOUT_A_SECRET = ("name", "id", "ids", "arn", "path", "file", "url", "uri", "policy", "length", "len",
                   "type", "ttl", "expiry", "expires", "header", "env", "ref", "endpoint", "count", "hint",
                   "label", "prefix", "limit", "limits", "rotation", "store", "manager", "provider", "scope",
                   "scopes", "version", "field", "format", "kind", "size", "usage", "bucket")
_PLACEHOLDER = re.compile(
    r"^(?:[$<{%*]|\.{3}|x{4,}|your|example|changeme|redacted|dummy|placeholder|none|null|true|false"
    r"|/|~/|\./|https?:)|os\.environ|process\.env|getenv|\$\{|\{\{", re.IGNORECASE)


def entropy(value: str) -> float:
    """Shannon entropy of `value` in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values()) if value else 0.0


def _classes(value: str) -> int:
    return sum(bool(re.search(rx, value)) for rx in ("[a-z]", "[A-Z]", "[0-9]", "[^A-Za-z0-9]"))


def looks_random(value: str) -> bool:
    """A value a person did not make up as a word or an identifier: long enough, mixed, unpredictable."""
    if len(value) < 8 or _PLACEHOLDER.search(value):
        return False
    has_letter, has_digit = re.search("[A-Za-z]", value), re.search("[0-9]", value)
    mixed = bool(has_letter and has_digit) or _classes(value) >= 3
    return mixed and entropy(value) >= 2.8


def _aws_secret(m: re.Match[str]) -> bool:
    value = m.group("value")
    # Base64 of random bytes mixes cases and digits; a 40-hex git hash has no capitals.
    return _classes(value) >= 3 and entropy(value) >= 4.0


# Words of a name (split at _ . - and case changes) that make it a secret's name. Whole words only:
# `author`, `tokenizer` and `passenger` are not.
_SECRET_WORDS = {"password", "passwd", "pwd", "pass", "passphrase", "secret", "secrets", "token", "tokens",
                 "credential", "credentials", "apikey", "auth", "authkey", "pat"}
_SECRET_PAIRS = {("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"), ("account", "key"),
                 ("signing", "key"), ("master", "key"), ("encryption", "key")}


def _name_words(name: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+", name)]


def _secret_name(name: str) -> bool:
    words = _name_words(name)
    if not words or words[-1] in _ABOUT_A_SECRET:
        return False
    pairs = zip(words, words[1:], strict=False)
    return bool(_SECRET_WORDS.intersection(words)) or any(pair in _SECRET_PAIRS for pair in pairs)


def _assigned(m: re.Match[str]) -> bool:
    return _secret_name(m.group("name")) and looks_random(m.group("value"))


def _url_password(m: re.Match[str]) -> bool:
    return not _PLACEHOLDER.search(m.group("value"))


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    valid: Callable[[re.Match[str]], bool] | None = None
    # Literals of which every match holds at least one (in the lower-cased text when `folded`);
    # empty: the rule always runs. A substring test costs far less than the regex's scan, and
    # reindex scans every file (43 regexes were half of a full reindex).
    needles: tuple[str, ...] = ()
    folded: bool = False

    def may_match(self, text: str, lower: Callable[[], str]) -> bool:
        if not self.needles:
            return True
        hay = lower() if self.folded else text
        # A loop, not any(): it runs 43 times a file on a reindex, and a generator costs 10 us of 85.
        for needle in self.needles:  # noqa: SIM110
            if needle in hay:
                return True
        return False


def _rule(kind: str, pattern: str, valid: Callable[[re.Match[str]], bool] | None = None,
          needles: tuple[str, ...] = (), folded: bool = False) -> _Rule:
    return _Rule(kind, re.compile(pattern), valid, needles, folded)


_B64 = r"A-Za-z0-9/+"
# Where a token may start. Not `\b`: in "sk-sk-sk-..." every dash is a word boundary, and restarting
# at each one makes a long hostile line cost quadratic time.
_S = r"(?<![A-Za-z0-9_-])"
_RULES: list[_Rule] = [
    # cloud providers
    _rule("AWS access key id", _S + r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|ABIA|ACCA)[0-9A-Z]{16}\b",
          needles=("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "ABIA", "ACCA")),
    _rule("AWS secret access key", rf"(?<![{_B64}])(?P<value>[{_B64}]{{40}})(?![{_B64}=])", _aws_secret),
    _rule("Google API key", _S + r"AIza[0-9A-Za-z_-]{35}", needles=("AIza",)),
    _rule("Google OAuth client secret", _S + r"GOCSPX-[A-Za-z0-9_-]{28}", needles=("GOCSPX-",)),
    _rule("Google OAuth access token", _S + r"ya29\.[A-Za-z0-9_-]{30,}", needles=("ya29.",)),
    _rule("Azure storage account key", r"(?i)AccountKey=[A-Za-z0-9+/]{40,}={0,2}", needles=("accountkey=",),
          folded=True),
    _rule("Azure shared access signature", r"[?&]sig=[A-Za-z0-9%+/]{30,}", needles=("sig=",)),
    _rule("DigitalOcean token", _S + r"do[opr]_v1_[a-f0-9]{64}\b", needles=("_v1_",)),
    _rule("HashiCorp Vault token", _S + r"hv[sbr]\.[A-Za-z0-9_-]{24,}", needles=("hvs.", "hvb.", "hvr.")),
    _rule("Terraform Cloud token", _S + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,}", needles=(".atlasv1.",)),
    # code hosting and package registries
    _rule("GitHub token", _S + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
          needles=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    _rule("GitLab token", _S + r"gl(?:pat|dt|rt|ptt|cbt|soat|ft|imt|agent|oas)-[A-Za-z0-9_-]{20,}",
          needles=tuple(f"gl{p}-" for p in ("pat", "dt", "rt", "ptt", "cbt", "soat", "ft", "imt", "agent", "oas"))),
    _rule("npm token", _S + r"npm_[A-Za-z0-9]{36}\b", needles=("npm_",)),
    _rule("PyPI token", _S + r"pypi-AgE[A-Za-z0-9_-]{50,}", needles=("pypi-AgE",)),
    _rule("Docker Hub token", _S + r"dckr_pat_[A-Za-z0-9_-]{20,}", needles=("dckr_pat_",)),
    # LLM vendors
    _rule("Anthropic API key", _S + r"sk-ant-[A-Za-z0-9_-]{20,}", needles=("sk-ant-",)),
    _rule("OpenRouter API key", _S + r"sk-or-v1-[A-Za-z0-9]{32,}", needles=("sk-or-v1-",)),
    _rule("OpenAI API key", _S + r"sk-(?!ant-|or-v1-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", needles=("sk-",)),
    _rule("Groq API key", _S + r"gsk_[A-Za-z0-9]{40,}", needles=("gsk_",)),
    _rule("Hugging Face token", _S + r"hf_[A-Za-z0-9]{30,}", needles=("hf_",)),
    _rule("Replicate API token", _S + r"r8_[A-Za-z0-9]{30,}", needles=("r8_",)),
    _rule("xAI API key", _S + r"xai-[A-Za-z0-9]{50,}", needles=("xai-",)),
    _rule("Perplexity API key", _S + r"pplx-[A-Za-z0-9]{40,}", needles=("pplx-",)),
    _rule("NVIDIA API key", _S + r"nvapi-[A-Za-z0-9_-]{40,}", needles=("nvapi-",)),
    _rule("LangSmith API key", _S + r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", needles=("lsv2_",)),
    _rule("Fireworks API key", _S + r"fw_[A-Za-z0-9]{20,}", needles=("fw_",)),
    # payments, messaging and other services
    _rule("Stripe key", _S + r"(?:[sr]k|whsec)_(?:live|test)_[A-Za-z0-9]{20,}|" + _S + r"whsec_[A-Za-z0-9]{30,}",
          needles=("_live_", "_test_", "whsec_")),
    _rule("Slack token", _S + r"xox[abposre]-[A-Za-z0-9-]{10,}|" + _S + r"xapp-\d-[A-Za-z0-9-]{20,}",
          needles=("xox", "xapp-")),
    _rule("Slack webhook URL", r"hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}",
          needles=("hooks.slack.com/services/",)),
    _rule("Discord bot token", _S + r"[MN][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,}"),
    _rule("Telegram bot token", _S + r"\d{8,10}:AA[A-Za-z0-9_-]{33}\b", needles=(":AA",)),
    _rule("Twilio API key", _S + r"SK[0-9a-f]{32}\b", needles=("SK",)),
    _rule("SendGrid API key", _S + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", needles=("SG.",)),
    _rule("Mailgun API key", _S + r"key-[0-9a-f]{32}\b", needles=("key-",)),
    _rule("Shopify token", _S + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", needles=("shpat_", "shpca_", "shppa_", "shpss_")),
    _rule("Linear API key", _S + r"lin_api_[A-Za-z0-9]{40}", needles=("lin_api_",)),
    _rule("Notion token", _S + r"(?:secret_|ntn_)[A-Za-z0-9]{40,}", needles=("secret_", "ntn_")),
    # key material and tokens of any issuer
    _rule("private key block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d:",
          needles=("-----BEGIN ", "PuTTY-User-Key-File-")),
    _rule("age secret key", _S + r"AGE-SECRET-KEY-1[0-9A-Z]{58}", needles=("AGE-SECRET-KEY-1",)),
    _rule("JSON web token", _S + r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", needles=("eyJ",)),
    _rule("password in a URL",
          r"(?i)(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,30}://[^\s:/@]{1,200}:(?P<value>[^\s/@]{1,200})@[^\s/]",
          _url_password, needles=("://",)),
    _rule("bearer token", r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{20,}", needles=("bearer",), folded=True),
    _rule("credential assigned to a name",
          r"(?<![\w.-])(?P<name>[\w.-]{1,80})[\"']?[ \t]*(?::=|=>|=|:)[ \t]*[\"']?(?P<value>[^\s\"'`,;)]{8,})",
          # Every secret name holds one of these (see _SECRET_WORDS and _SECRET_PAIRS).
          _assigned, needles=("pass", "pwd", "secret", "token", "credential", "auth", "pat", "key"), folded=True),
]


@dataclass(frozen=True)
class Finding:
    """One credential-looking match: what kind, on which 1-based line. Never the value."""

    kind: str
    line: int


def scan(text: str) -> list[Finding]:
    """Every credential-looking match in `text`: its kind and 1-based line, at most one per kind."""
    found: dict[str, Finding] = {}
    lower = functools.cache(text.lower)
    for rule in _RULES:
        if not rule.may_match(text, lower):
            continue
        for m in rule.pattern.finditer(text):
            if rule.valid is None or rule.valid(m):
                found[rule.kind] = Finding(rule.kind, text.count("\n", 0, m.start()) + 1)
                break
    return sorted(found.values(), key=lambda f: f.line)
