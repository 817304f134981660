"""What counts as a credential: the scanner's rules (a vendor's prefix and length, or a name and a
value that must look random) and the checks on a matched value. `secrets` runs them.

See the `secrets` module for what the heuristics let through and why."""

from __future__ import annotations

import binascii
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
                   "scopes", "version", "field", "format", "kind", "size", "usage", "bucket", "template")
_PLACEHOLDER = re.compile(
    r"^(?:[$<{%*]|\.{3}|x{4,}|your|example|changeme|redacted|dummy|placeholder|none|null|true|false"
    # `file:`, `env:`, `fd:`: where openssl and friends are told to read the secret from.
    r"|https?:|file:|env:|fd:)|os\.environ|process\.env|getenv|\$\{|\{\{", re.IGNORECASE)
_PATH = re.compile(r"^(?:/|~/|\./)")


def _path(value: str) -> bool:
    """A file path (`/run/secrets/db`, `~/.ssh/id_ed25519`), not base64 that starts with a slash: no
    part of it is a long random run."""
    return bool(_PATH.match(value)) and not any(len(part) >= 20 and _random_run(part) for part in value.split("/"))


def _random_run(part: str) -> bool:
    return _classes(part) >= 3 and entropy(part) >= 4.0


def entropy(value: str) -> float:
    """Shannon entropy of `value` in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values()) if value else 0.0


def _classes(value: str) -> int:
    return sum(bool(re.search(rx, value)) for rx in ("[a-z]", "[A-Z]", "[0-9]", "[^A-Za-z0-9]"))


def looks_random(value: str) -> bool:
    """A value a person did not make up as a word or an identifier: long enough, mixed, unpredictable."""
    if len(value) < 8 or _PLACEHOLDER.search(value) or _path(value):
        return False
    has_letter, has_digit = re.search("[A-Za-z]", value), re.search("[0-9]", value)
    mixed = bool(has_letter and has_digit) or _classes(value) >= 3
    return mixed and entropy(value) >= 2.8


# An unquoted value that is code: an attribute or item of something (`settings.KEY`, `cfg["k"]`,
# `self.token`), a call (`HTTPBasicAuth(user`, `getpass(`), or an environment variable's name.
_REFERENCE = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$]|[\[(])|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
# Words people write where a password goes in examples and defaults.
_PLACEHOLDER_WORDS = {"password", "passwd", "pass", "pwd", "secret", "changeme", "change_me", "changeit", "admin",
                      "root", "test", "guest", "default", "required", "optional", "string", "str", "value", "empty",
                      "todo", "tbd", "mypassword", "yourpassword", "password123", "secret123", "token", "apikey",
                      "api_key", "username", "user", "pw", "foo", "bar", "foobar", "hidden", "masked"}


def _placeholder(value: str) -> bool:
    # `[`: what `mask` leaves (`[redacted ...]`) must not be flagged again.
    return (bool(_PLACEHOLDER.search(value)) or _path(value) or value.lower() in _PLACEHOLDER_WORDS
            or value[:1] in ":@%[")


def _aws_secret(m: re.Match[str]) -> bool:
    value = m.group("value")
    # Base64 of random bytes mixes cases and digits; a 40-hex git hash has no capitals.
    return _classes(value) >= 3 and entropy(value) >= 4.0


# Words of a name (split at _ . - and case changes) that make it a secret's name. Whole words only:
# `author`, `tokenizer` and `passenger` are not.
_SECRET_WORDS = {"password", "passwd", "pwd", "pw", "pass", "passphrase", "secret", "secrets", "token", "tokens",
                 "credential", "credentials", "apikey", "auth", "authkey", "pat"}
_SECRET_PAIRS = {("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"), ("account", "key"),
                 ("signing", "key"), ("master", "key"), ("encryption", "key"), ("storage", "key"), ("license", "key"),
                 ("insert", "key"), ("browser", "key")}


def _name_words(name: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+", name)]


# Run-together names: PGPASSWORD, MYSQLPWD, GHTOKEN.
_SECRET_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "apikey")
_PASSWORD_WORDS = {"password", "passwd", "pwd", "pass", "passphrase", "passcode"}


def _secret_name(name: str) -> bool:
    words = _name_words(name)
    if not words or words[-1] in _ABOUT_A_SECRET:
        return False
    pairs = zip(words, words[1:], strict=False)
    return (bool(_SECRET_WORDS.intersection(words)) or any(pair in _SECRET_PAIRS for pair in pairs)
            or any(w.endswith(_SECRET_ENDINGS) and w not in ("secretary",) for w in words))


def _password_name(name: str) -> bool:
    return any(w in _PASSWORD_WORDS or w.endswith(("password", "passwd")) for w in _name_words(name))


def _holds_a_token(value: str) -> bool:
    """A dotted value one of whose parts is a token (`dp.st.prd.<43 random>`), not an attribute path."""
    return any(len(part) >= 20 and looks_random(part) for part in value.split("."))


# A password made of lower-case words or letters (correcthorsebatterystaple, amber-otter-violet-lemon):
# one word of 12 or more letters, or three or more words joined by hyphens. Not an identifier: no `_`.
_LOWER_PASSWORD = re.compile(r"[a-z]{12,}|[a-z]+(?:-[a-z0-9]+){2,}")


def _whole_line(m: re.Match[str]) -> bool:
    """The assignment is all its line holds (an env file's `NAME=value`, YAML's `name: value`), where an
    unquoted value is a literal string rather than code."""
    text, start, end = m.string, m.start(), m.end()
    head = text[text.rfind("\n", 0, start) + 1:start].strip()
    tail_end = text.find("\n", end)
    tail = text[end:tail_end if tail_end >= 0 else len(text)]
    return head in ("", "export", "-") and not tail.strip()


def _assigned(m: re.Match[str]) -> bool:
    name = m.group("name")
    if not _secret_name(name):
        return False
    quoted = m.group("qvalue")
    if quoted is not None:
        # A string literal. A password is one even when a person made it up; a token or key is one
        # when it looks random. Spaces only in a passphrase (else it is a sentence about the field).
        if _placeholder(quoted) or len(set(quoted)) < 3:
            return False
        if " " in quoted:
            return "passphrase" in name.lower() and len(quoted.split()) >= 3
        return len(quoted) >= 6 if _password_name(name) else looks_random(quoted)
    value = m.group("value")
    if (_REFERENCE.search(value) and not _holds_a_token(value)) or _placeholder(value):
        return False
    if looks_random(value):
        return True
    if not _password_name(name):
        return False
    # A password of letters only (PGPASSWORD=RbcOiCxcaZCGDGBL) mixes cases where an identifier would
    # be a word or a name in code; one of lower-case words counts where the line is a literal's.
    return ((re.fullmatch(r"[A-Za-z]{10,}", value) is not None and _classes(value) == 2 and entropy(value) >= 3.0)
            or (_LOWER_PASSWORD.fullmatch(value) is not None and entropy(value) >= 2.5 and _whole_line(m)))


def _flag_value(m: re.Match[str]) -> bool:
    """`--account-key <value>`, `-StorageAccountKey "<value>"`: a flag named for a secret, then its value."""
    name, value = m.group("name"), m.group("value")
    if not _secret_name(name) or _placeholder(value) or (_REFERENCE.search(value) and not _holds_a_token(value)):
        return False
    return looks_random(value) or (_password_name(name) and len(value) >= 8 and len(set(value)) >= 5)


def _pem_in_base64(m: re.Match[str]) -> bool:
    """Base64 of a PEM private key (kubeconfig's client-key-data, a Kubernetes TLS secret's tls.key)."""
    import base64  # a match's only: 0.5 ms of every write's start otherwise

    head = m.group("value")[:88]
    try:
        return b"PRIVATE KEY" in base64.b64decode(head[:len(head) // 4 * 4])
    except (binascii.Error, ValueError):
        return False


def _url_password(m: re.Match[str]) -> bool:
    value = m.group("value")
    return not _placeholder(value) and value != m.group("user")


def _command_password(m: _Value) -> bool:
    value = m.group("value")
    return not _placeholder(value) and not value.startswith("$")


def _basic_auth(m: re.Match[str]) -> bool:
    """Base64 of `user:password`, both printable."""
    import base64

    try:
        user, sep, password = base64.b64decode(m.group("value"), validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return bool(sep and user and password and (user + password).isprintable() and not _placeholder(password))


def _prose(m: re.Match[str]) -> bool:
    value = m.group("value")
    return not _REFERENCE.search(value) and looks_random(value)


@dataclass(frozen=True)
class Rule:
    kind: str
    # The regex's source, compiled on first use (`pattern`): most rules never pass their prefilter in
    # a hook's or a command's process, and compiling all 90 at import cost 4 ms of every such process.
    regex: str
    valid: Callable[[re.Match[str]], bool] | None = None
    # Literals of which every match holds at least one (in the lower-cased text when `folded`);
    # empty: the rule always runs. A substring test costs far less than the regex's scan, and
    # reindex scans every file (43 regexes were half of a full reindex).
    needles: tuple[str, ...] = ()
    folded: bool = False
    # A match holds no whitespace and is at least this long: the text must have such a run. Tested
    # first (one comparison with the text's longest run, found once per text): most notes have no run
    # as long as a vendor's token, and 80 rules' needle searches were a third of a scan.
    min_run: int = 0
    # Where matches can start, found in the lower-cased text: every match starts at a hit of `anchor`
    # (with `back`: at the start of the name, [\w.-]+, that holds the hit). The pattern is then tried
    # at those places only, not at every position of the text.
    anchor_regex: str | None = None
    back: bool = False

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.regex)

    @functools.cached_property
    def anchor(self) -> re.Pattern[str] | None:
        return re.compile(self.anchor_regex) if self.anchor_regex else None

    def may_match(self, text: str, lower: Callable[[], str], longest: Callable[[], int] | None = None) -> bool:
        if self.min_run and (longest() if longest else longest_run(text)) < self.min_run:
            return False
        if not self.needles:
            return True
        hay = lower() if self.folded else text
        # A loop, not any(): it runs 50 times a file on a reindex, and a generator costs 10 us of 85.
        for needle in self.needles:  # noqa: SIM110
            if needle in hay:
                return True
        return False


def longest_run(text: str) -> int:
    """The length of the longest run of text without whitespace."""
    return max(map(len, text.split()), default=0)


def _rule(kind: str, pattern: str, valid: Callable[[re.Match[str]], bool] | None = None,
          needles: tuple[str, ...] = (), folded: bool = False, min_run: int = 0, anchor: str | None = None,
          back: bool = False) -> Rule:
    return Rule(kind, pattern, valid, needles, folded, min_run, anchor, back)


_B64 = r"A-Za-z0-9/+"
# Where a token may start. Not `\b`: in "sk-sk-sk-..." every dash is a word boundary, and restarting
# at each one makes a long hostile line cost quadratic time.
_S = r"(?<![A-Za-z0-9_-])"
RULES: list[Rule] = [
    # cloud providers
    _rule("AWS access key id", _S + r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|ABIA|ACCA)[0-9A-Z]{16}\b",
          needles=("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "ABIA", "ACCA"), min_run=20),
    _rule("AWS secret access key", rf"(?<![{_B64}])(?P<value>[{_B64}]{{40}})(?![{_B64}=])", _aws_secret,
          min_run=40),
    _rule("Google API key", _S + r"AIza[0-9A-Za-z_-]{35}", needles=("AIza",), min_run=39),
    _rule("Google OAuth client secret", _S + r"GOCSPX-[A-Za-z0-9_-]{28}", needles=("GOCSPX-",), min_run=35),
    _rule("Google OAuth access token", _S + r"ya29\.[A-Za-z0-9_-]{30,}", needles=("ya29.",), min_run=35),
    _rule("Azure storage account key", r"(?i)AccountKey=[A-Za-z0-9+/]{40,}={0,2}", needles=("accountkey=",),
          folded=True, min_run=51),
    _rule("Azure shared access signature", r"[?&]sig=[A-Za-z0-9%+/]{30,}", needles=("sig=",), min_run=35),
    _rule("DigitalOcean token", _S + r"do[opr]_v1_[a-f0-9]{64}\b", needles=("_v1_",), min_run=71),
    _rule("HashiCorp Vault token", _S + r"hv[sbr]\.[A-Za-z0-9_-]{24,}", needles=("hvs.", "hvb.", "hvr."),
          min_run=28),
    _rule("Terraform Cloud token", _S + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,}", needles=(".atlasv1.",),
          min_run=83),
    # code hosting and package registries
    _rule("GitHub token", _S + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
          needles=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), min_run=33),
    _rule("GitLab token", _S + r"gl(?:pat|dt|rt|ptt|cbt|soat|ft|imt|agent|oas)-[A-Za-z0-9_-]{20,}",
          needles=tuple(f"gl{p}-" for p in ("pat", "dt", "rt", "ptt", "cbt", "soat", "ft", "imt", "agent", "oas")),
          min_run=25),
    _rule("npm token", _S + r"npm_[A-Za-z0-9]{36}\b", needles=("npm_",), min_run=40),
    _rule("PyPI token", _S + r"pypi-AgE[A-Za-z0-9_-]{50,}", needles=("pypi-AgE",), min_run=58),
    _rule("Docker Hub token", _S + r"dckr_pat_[A-Za-z0-9_-]{20,}", needles=("dckr_pat_",), min_run=29),
    # LLM vendors
    _rule("Anthropic API key", _S + r"sk-ant-[A-Za-z0-9_-]{20,}", needles=("sk-ant-",), min_run=27),
    _rule("OpenRouter API key", _S + r"sk-or-v1-[A-Za-z0-9]{32,}", needles=("sk-or-v1-",), min_run=41),
    _rule("OpenAI API key", _S + r"sk-(?!ant-|or-v1-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", needles=("sk-",),
          min_run=23),
    _rule("Groq API key", _S + r"gsk_[A-Za-z0-9]{40,}", needles=("gsk_",), min_run=44),
    _rule("Hugging Face token", _S + r"(?:hf_|api_org_)[A-Za-z0-9]{30,}", needles=("hf_", "api_org_"),
          min_run=33),
    _rule("Replicate API token", _S + r"r8_[A-Za-z0-9]{30,}", needles=("r8_",), min_run=33),
    _rule("xAI API key", _S + r"xai-[A-Za-z0-9]{50,}", needles=("xai-",), min_run=54),
    _rule("Perplexity API key", _S + r"pplx-[A-Za-z0-9]{40,}", needles=("pplx-",), min_run=45),
    _rule("NVIDIA API key", _S + r"nvapi-[A-Za-z0-9_-]{40,}", needles=("nvapi-",), min_run=46),
    _rule("LangSmith API key", _S + r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", needles=("lsv2_",),
          min_run=51),
    _rule("Fireworks API key", _S + r"fw_[A-Za-z0-9]{20,}", needles=("fw_",), min_run=23),
    # payments, messaging and other services
    _rule("Stripe key", _S + r"(?:[sr]k|whsec)_(?:live|test)_[A-Za-z0-9]{20,}|" + _S + r"whsec_[A-Za-z0-9]{30,}",
          needles=("_live_", "_test_", "whsec_"), min_run=28),
    _rule("Slack token", _S + r"xox[abposre]-[A-Za-z0-9-]{10,}|" + _S + r"xapp-\d-[A-Za-z0-9-]{20,}",
          needles=("xox", "xapp-"), min_run=15),
    _rule("Slack webhook URL", r"hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}",
          needles=("hooks.slack.com/services/",), min_run=47),
    _rule("Discord bot token", _S + r"[MN][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,}", min_run=59),
    _rule("Telegram bot token", _S + r"\d{8,10}:AA[A-Za-z0-9_-]{33}\b", needles=(":AA",), min_run=44),
    _rule("Twilio API key", _S + r"SK[0-9a-f]{32}\b", needles=("SK",), min_run=34),
    _rule("SendGrid API key", _S + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", needles=("SG.",), min_run=69),
    _rule("Mailgun API key", _S + r"key-[0-9a-f]{32}\b", needles=("key-",), min_run=36),
    _rule("Shopify token", _S + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", needles=("shpat_", "shpca_", "shppa_", "shpss_"),
          min_run=38),
    _rule("Linear API key", _S + r"lin_api_[A-Za-z0-9]{40}", needles=("lin_api_",), min_run=48),
    _rule("Notion token", _S + r"(?:secret_|ntn_)[A-Za-z0-9]{40,}", needles=("secret_", "ntn_"), min_run=44),
    # The families of the public rule sets by their vendors' prefixes and lengths (issue 32).
    _rule("Atlassian API token", _S + r"AT(?:ATT|CTT)3[A-Za-z0-9_=-]{150,}", needles=("ATATT3", "ATCTT3"),
          min_run=156),
    _rule("Bitbucket app password", _S + r"ATBB[A-Za-z0-9]{32}\b", needles=("ATBB",), min_run=36),
    _rule("Databricks token", _S + r"dapi[a-f0-9]{32}(?:-\d)?\b", needles=("dapi",), min_run=36),
    # Service-account tokens, Cloud access-policy tokens (base64 JSON), the API keys older Grafanas issue.
    _rule("Grafana token", _S + r"(?:glsa_[A-Za-z0-9]{32}_[a-fA-F0-9]{8}\b|glc_[A-Za-z0-9+/]{32,}={0,2}"
          r"|eyJrIjoi[A-Za-z0-9+/]{40,}={0,2})", needles=("glsa_", "glc_", "eyJrIjoi"), min_run=36),
    # User, insert, browser and query keys by prefix; ingest license keys end in NRAL.
    _rule("New Relic key", _S + r"(?:NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9_-]{32}|NRJS-[a-f0-9]{19}"
          r"|NRIQ-[A-Za-z0-9_-]{32})(?![A-Za-z0-9_-])|(?<![0-9a-f])[a-f0-9]{36}NRAL\b",
          needles=("NRAK-", "NRII-", "NRJS-", "NRIQ-", "NRAL"), min_run=24),
    _rule("Doppler token", _S + r"dp\.(?:pt|st|ct|sa|said|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44}\b",
          needles=("dp.",), min_run=46),
    _rule("Dynatrace token", _S + r"dt0[a-z]\d\d\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b", needles=("dt0",),
          min_run=96),
    _rule("Postman API key", _S + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", needles=("PMAK-",), min_run=64),
    _rule("Pulumi token", _S + r"pul-[a-f0-9]{40}\b", needles=("pul-",), min_run=44),
    _rule("PlanetScale token", _S + r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64}", needles=("pscale_",),
          min_run=42),
    _rule("Sentry token", _S + r"(?:sntryu_[a-f0-9]{64}\b|sntrys_eyJ[A-Za-z0-9+/=]{40,}_[A-Za-z0-9+/]{43})",
          needles=("sntryu_", "sntrys_"), min_run=71),
    _rule("Square token", _S + r"(?:EAAA[A-Za-z0-9_-]{60}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43})(?![A-Za-z0-9_-])",
          needles=("EAAA", "sq0atp-", "sq0csp-"), min_run=29),
    _rule("Facebook access token", _S + r"EAA[A-Z][A-Za-z0-9]{100,}", needles=("EAA",), min_run=104),
    _rule("Brevo API key", _S + r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", needles=("xkeysib-",), min_run=89),
    _rule("1Password service account token", _S + r"ops_eyJ[A-Za-z0-9+/]{100,}={0,3}", needles=("ops_eyJ",),
          min_run=107),
    _rule("Alibaba Cloud access key id", _S + r"LTAI[A-Za-z0-9]{12,20}\b", needles=("LTAI",), min_run=16),
    _rule("Adobe client secret", _S + r"p8e-[A-Za-z0-9]{32}\b", needles=("p8e-",), min_run=36),
    _rule("Clojars token", _S + r"CLOJARS_[a-z0-9]{60}\b", needles=("CLOJARS_",), min_run=68),
    _rule("Duffel token", _S + r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}", needles=("duffel_",), min_run=55),
    _rule("EasyPost key", _S + r"EZ[AT]K[A-Za-z0-9]{54}\b", needles=("EZAK", "EZTK"), min_run=58),
    _rule("Flutterwave key", _S + r"FLWSECK(?:_TEST)?-[a-h0-9]{12,32}(?:-X)?\b", needles=("FLWSECK",),
          min_run=20),
    _rule("Fly.io token", _S + r"(?:fo1_[\w-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})",
          needles=("fo1_", "fm1", "fm2"), min_run=47),
    _rule("Frame.io token", _S + r"fio-u-[A-Za-z0-9_=-]{64}", needles=("fio-u-",), min_run=70),
    _rule("Harness token", _S + r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}\b",
          needles=("pat.", "sat."), min_run=72),
    _rule("Infracost token", _S + r"ico-[A-Za-z0-9]{32}\b", needles=("ico-",), min_run=36),
    _rule("Prefect token", _S + r"pnu_[A-Za-z0-9]{36}\b", needles=("pnu_",), min_run=40),
    _rule("ReadMe token", _S + r"rdme_[a-z0-9]{70}\b", needles=("rdme_",), min_run=75),
    _rule("RubyGems token", _S + r"rubygems_[a-f0-9]{48}\b", needles=("rubygems_",), min_run=57),
    _rule("Scalingo token", _S + r"tk-us-[\w-]{48}", needles=("tk-us-",), min_run=54),
    _rule("Shippo token", _S + r"shippo_(?:live|test)_[a-fA-F0-9]{40}\b", needles=("shippo_",), min_run=52),
    _rule("OpenShift token", _S + r"sha256~[\w-]{43}(?![\w-])", needles=("sha256~",), min_run=50),
    _rule("Sourcegraph token", _S + r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}\b", needles=("sgp_",),
          min_run=44),
    _rule("Typeform token", _S + r"tfp_[A-Za-z0-9_.=-]{59}", needles=("tfp_",)),
    _rule("Artifactory token", _S + r"AKCp[A-Za-z0-9]{69}\b", needles=("AKCp",), min_run=73),
    _rule("MaxMind license key", _S + r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\b", needles=("_mmk",), min_run=40),
    _rule("Cloudflare origin CA key", _S + r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b", needles=("v1.0-",),
          min_run=176),
    _rule("GitLab runner registration token", _S + r"GR1348941[\w-]{20}", needles=("GR1348941",), min_run=29),
    _rule("Yandex API key", _S + r"AQVN[A-Za-z0-9_-]{35,38}(?![A-Za-z0-9_-])", needles=("AQVN",), min_run=39),
    # key material and tokens of any issuer
    # In any case: people retype a header in lower case, and a key that parses or not is still a key.
    _rule("private key block", r"(?i:-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)|PuTTY-User-Key-File-\d:",
          needles=("-----begin ", "putty-user-key-file-"), folded=True),
    _rule("private key block in base64", r"(?<![A-Za-z0-9+/])(?P<value>LS0tLS1CRUdJT[A-Za-z0-9+/]{40,}={0,2})",
          _pem_in_base64, needles=("LS0tLS1CRUdJT",), min_run=53),
    _rule("age secret key", _S + r"AGE-SECRET-KEY-1[0-9A-Z]{58}", needles=("AGE-SECRET-KEY-1",), min_run=74),
    _rule("JSON web token", _S + r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", needles=("eyJ",),
          min_run=38),
    # `redis://:pw@host` has no user name.
    _rule("password in a URL",
          r"(?i)(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,30}://(?P<user>[^\s:/@]{0,200}):(?P<value>[^\s/@]{1,200})@[^\s/]",
          _url_password, needles=("://",)),
    _rule("Discord webhook URL", r"discord(?:app)?\.com/api/webhooks/\d{17,20}/(?P<value>[A-Za-z0-9_-]{60,})",
          needles=("/api/webhooks/",), min_run=103),
    _rule("Mailchimp API key", r"(?<![0-9a-f])[0-9a-f]{32}-us\d{1,2}\b", needles=("-us",), min_run=36),
    # The client secrets Entra ID (Azure AD) issues: three characters, a digit, `Q~`, 31 to 34 more.
    _rule("Azure AD client secret", r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
          needles=("Q~",)),
    # Okta's API tokens go in `Authorization: SSWS <token>`.
    _rule("bearer token", r"(?i)\b(?:bearer|ssws)\s+(?P<value>[A-Za-z0-9._~+/=-]{20,})", needles=("bearer", "ssws"),
          folded=True),
    _rule("basic auth credentials", r"(?i)\bbasic\s+(?P<value>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])",
          _basic_auth, needles=("basic",), folded=True),
    # curl -u user:pw, mysql -pPW: a password typed on a command line.
    _rule("password on a command line",
          r"\bcurl\b[^\n]{0,300}?\s(?:-u|--user)(?:[ \t]+|=)?[\"']?(?P<user>[^\s:\"']{1,100}):(?P<value>[^\s\"']{1,200})"
          r"|\bmysql(?:dump|admin|sh|import|check)?\b[^\n]{0,300}?\s(?:-p|--password=)(?P<value2>[^\s\"'-][^\s\"']{0,200})"
          r"|\bdocker\s+login\b[^\n]{0,300}?\s(?:-p|--password)(?:[ \t]+|=)(?P<value3>[^\s\"'-][^\s\"']{0,200})",
          lambda m: _command_password(_Value(m)), needles=("curl", "mysql", "docker"), folded=True,
          anchor=r"curl|mysql|docker"),
    _rule("credential assigned to a name",
          # Not after `/`: in `https://token.example.com:8443/x` the host is no name.
          r"(?<![\w./-])(?P<name>[\w.-]{1,80})[\"']?[ \t]*(?::=|=>|=|:)[ \t]*"
          r"(?:(?P<q>[\"'`])(?P<qvalue>[^\"'`\n]{4,200})(?P=q)|[\"']?(?P<value>[^\s\"'`,;)]{8,200}))",
          # Every secret name holds one of these (see _SECRET_WORDS and _SECRET_PAIRS).
          _assigned, needles=("pass", "pw", "secret", "token", "credential", "auth", "pat", "key"), folded=True,
          anchor=r"pass|pw|secret|token|credential|auth|pat|key", back=True),
    _rule("credential on a command line flag",
          r"(?<![\w-])--?(?P<name>[A-Za-z][\w-]{1,40})[ \t]+(?P<q>[\"']?)(?P<value>[^\s\"'$<{%-][^\s\"']{5,200})(?P=q)"
          r"(?![^\s\"'])",
          # Every flag has a dash after a space or two dashes (the name's words are the anchor's).
          _flag_value, needles=(" -", "--", "\t-"), anchor=r"pass|pw|secret|token|credential|auth|key", back=True),
    # A Google service account's key id names the key; with the account's e-mail it is half a credential.
    _rule("Google service account key id",
          r"(?i)private[_-]?key[_-]?id[\"']?[ \t]*(?::|=>|=)[ \t]*[\"']?(?P<value>[0-9a-f]{40})(?![0-9a-z])",
          needles=("private_key_id", "private-key-id", "privatekeyid"), folded=True),
    # "the staging DB password is ...": a secret's name, a few words, then is / was / : and the value.
    _rule("credential stated in prose",
          r"(?i)\b(?:passwords?|passphrase|passwd|secret|token|api[ _-]?key|access[ _-]key|client[ _-]secret)\b"
          r"(?:[ \t]+[\w.-]+){0,4}?[ \t]+(?:is|was|reads|=|:)[ \t]+[\"'`]?(?P<value>[^\s\"'`,;)]{8,200})",
          _prose, needles=("pass", "secret", "token", "key"), folded=True,
          anchor=r"pass(?:words?|phrase|wd)|secret|token|api[ _-]?key|access[ _-]key|client[ _-]secret"),
]


class _Value:
    """A match whose value group has two names (one per alternative of the pattern)."""

    def __init__(self, m: re.Match[str]) -> None:
        self.m = m

    def group(self, name: str) -> str:
        if name != "value":
            return self.m.group(name) or ""
        return next(v for v in (self.m.group("value"), self.m.group("value2"), self.m.group("value3"), "") if v is not None)
