"""Credentials never reach a memory file: the scanner on a corpus of true positives and near misses,
the refusal over stdio (kind and line, never a character of the value), and hand-written files
holding one (indexed, flagged by memory_status, never committed by the server)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Session, commit_count, git, new_id
from test_secrets_corpus import CREDENTIALS as CORPUS

from memory_mcp.truth.secrets import scan

pytestmark = pytest.mark.anyio


def j(*parts: str) -> str:
    """Glue a sample credential together at run time, so this file does not itself hold one."""
    return "".join(parts)


# (kind, text around the value, the value). Realistic shapes: the vendor's prefix and length.
AWS_ID = j("AKIA", "IOSFODNN7", "EXAMPLE")  # AWS's documented example key id
AWS_SECRET = j("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY")  # and its documented secret key
POSITIVES: list[tuple[str, str, str]] = [
    ("AWS access key id", "aws_access_key_id = {}", AWS_ID),
    ("AWS access key id", "the CI role uses {} for uploads", j("ASIA", "Y34FZKBOKMUTVV7A")),
    ("AWS secret access key", "aws_secret_access_key = {}", AWS_SECRET),
    ("AWS secret access key", "paste {} into the console", AWS_SECRET),
    ("Google API key", "GOOGLE_MAPS key: {}", j("AIza", "SyD4fK9xQ2mN7pL0vB3cR8tW1yE6uH5jZ0a")),
    ("Google API key", "Gemini works with {}", j("AIza", "SyBq8R2kT5vN0mX7cL4wP9zJ3hG6fD1sA2e")),
    ("Google OAuth client secret", "client secret {}", j("GOCSPX-", "kT7vQ2mN9xL4pR8wB3cZ6yF1dH5j")),
    ("Azure storage account key", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={}",
     j("q8Zr2Tk9Vb4Nx7Lm3Pw6Hc1Yf5Jd0Sg8Ra2Ue7Io4Wt9Kz3Mv6Bn1Xc5Lq8Pe2Rt7Yu0Io3Pa6Sd9Fg2H==")),
    ("GitHub token", "export GITHUB_TOKEN={}", j("ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")),
    ("GitHub token", "fine-grained: {}", j("github_pat_", "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCD")),
    ("GitLab token", "CI uses {} to push tags", j("glpat-", "xY7kQ2vN9mL4pR8wB3cZ")),
    ("npm token", "//registry.npmjs.org/:_authToken={}", j("npm_", "Zx8Kq2Vm9Nb4Lp7Rw3Tc6Yf1Hd5Js0Ga8Pe2")),
    ("Docker Hub token", "docker login -p {}", j("dckr_pat_", "Hq7Zk2Vx9Nm4Lb8Rp3Wt6Cy1")),
    ("Anthropic API key", "ANTHROPIC_API_KEY={}",
     j("sk-ant-", "api03-Zq8Rk2Vx9Nm4Lb7Pw3Tc6Yf1Hd5Js0Ga8Pe2Uo7Ii4Ww9Kz3Mv6Bn1Xc5Lq8AA")),
    ("OpenAI API key", "OPENAI_API_KEY={}", j("sk-proj-", "Hq7Zk2Vx9Nm4Lb8Rp3Wt6Cy1Dg5Jf0Sa8Qe2Uo7")),
    ("OpenAI API key", "the DeepSeek key is {}", j("sk-", "9f8e7d6c5b4a39281706f5e4d3c2b1a0")),
    ("OpenRouter API key", "router: {}",
     j("sk-or-v1-", "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9")),
    ("Groq API key", "GROQ_API_KEY={}", j("gsk_", "Zq8Rk2Vx9Nm4Lb7Pw3Tc6Yf1Hd5Js0Ga8Pe2Uo7Ii4Ww9Kz3Mv6B")),
    ("Hugging Face token", "huggingface-cli login --token {}", j("hf_", "QmZkVxNmLbPwTcYfHdJsGaPeUoIiWwKzMv")),
    ("Replicate API token", "REPLICATE_API_TOKEN={}", j("r8_", "Zq8Rk2Vx9Nm4Lb7Pw3Tc6Yf1Hd5Js0Ga8Pe2U")),
    ("xAI API key", "grok via {}",
     j("xai-", "Zq8Rk2Vx9Nm4Lb7Pw3Tc6Yf1Hd5Js0Ga8Pe2Uo7Ii4Ww9Kz3Mv6Bn1Xc5Lq8Rt7Yu0Io3Pa6Sd9Fg2Hj4Kl")),
    ("Perplexity API key", "pplx: {}", j("pplx-", "a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5")),
    ("NVIDIA API key", "NIM endpoint key {}", j("nvapi-", "Zq8Rk2Vx9Nm4Lb7Pw3Tc6Yf1Hd5Js0Ga8Pe2Uo7Ii4Ww9Kz3")),
    ("Stripe key", "STRIPE_SECRET_KEY={}", j("sk_live_", "51HqZk2Vx9Nm4Lb8Rp3Wt6Cy1Dg")),
    ("Stripe key", "test mode: {}", j("rk_test_", "51HqZk2Vx9Nm4Lb8Rp3Wt6Cy1Dg")),
    ("Slack token", "bot token {}", j("xoxb-", "2048173956-5093847261-Hq7Zk2Vx9Nm4Lb8Rp3Wt6Cy1")),
    ("Slack webhook URL", "alerts go to https://hooks.slack.com/services/{}",
     j("T024BE7LD/B08CQ3K2X1M/", "Zq8Rk2Vx9Nm4Lb7Pw3Tc6Yf1")),
    ("Telegram bot token", "bot: {}", j("7204518396:", "AAHq7Zk2Vx9Nm4Lb8Rp3Wt6Cy1Dg5Jf0Sa8")),
    ("SendGrid API key", "SENDGRID={}",
     j("SG.", "Hq7Zk2Vx9Nm4Lb8Rp3Wt6C.", "y1Dg5Jf0Sa8Qe2Uo7Ii4Ww9Kz3Mv6Bn1Xc5Lq8Rt7Yu0Io3")),
    ("Twilio API key", "twilio {}", j("SK", "9f8e7d6c5b4a39281706f5e4d3c2b1a0")),
    ("private key block", "deploy key: {}\n-----END OPENSSH PRIVATE KEY-----",
     j("-----BEGIN OPENSSH PRIVATE KEY-----\n", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ")),
    ("private key block", "{}\n-----END RSA PRIVATE KEY-----",
     j("-----BEGIN RSA PRIVATE KEY-----\n", "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun")),
    ("JSON web token", "session cookie {}",
     j("eyJ", "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ", "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.",
       "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")),
    ("password in a URL", "DATABASE_URL=postgres://app:{}@db.internal:5432/app", "Zq8Rk2Vx9Nm4"),
    ("password in a URL", "clone with https://bot:{}@gitlab.example.com/team/repo.git", "Hq7Zk2Vx9Nm4Lb8"),
    ("bearer token", "curl -H 'Authorization: Bearer {}'", "Zq8Rk2Vx9Nm4Lb7Pw3Tc6Yf1Hd5Js0"),
    ("credential assigned to a name", "DB_PASSWORD={}", "Zq8Rk2Vx9N"),
    ("credential assigned to a name", "MISTRAL_API_KEY: {}", "Xk29fLq0ZpT7vB3nW8yR1cD6"),
    ("credential assigned to a name", '{{"client_secret": "{}"}}', "4fQ9zK2mX7pL1vR8"),
    ("credential assigned to a name", "COHERE_API_KEY = '{}'", "qW3eR5tY7uI9oP1aS3dF5gH7jK9lZ1xC3vB5nM7"),
    ("credential assigned to a name", '{{"accessToken": "{}"}}', "Hq7Zk2Vx9Nm4Lb8Rp3Wt6C"),
    ("credential assigned to a name", "db.password => '{}'", "4fQ9zK2mX7pL1vR8"),
    # Kinds added with the generated corpus (test_secrets_corpus.py), one sample each here.
    ("Discord webhook URL", "notify https://discord.com/api/webhooks/{}",
     j("1234567890123456789/", "Zq8Rk2Vx9Nm4Lb7Pw3Tc6Yf1Hd5Js0Ga8Pe2Uo7Ii4Ww9Kz3Mv6Bn1Xc5Lq8Rt7Yu0Io3")),
    ("Mailchimp API key", "mailchimp: {}", j("9f8e7d6c5b4a3928", "1706f5e4d3c2b1a0-us14")),
    ("Azure AD client secret", "the app registration's client secret is {}",
     j("Xk2", "8Q~", "Zq8Rk2Vx9Nm4Lb7Pw3Tc6Yf1Hd5Js0Ga8P")),
    ("basic auth credentials", "curl -H 'Authorization: Basic {}'", j("YWRtaW46", "WnE4Ums yVng5Tm0=").replace(" ", "")),
    ("password on a command line", "mysql -h db -u app {} app", j("-pZq8", "Rk2Vx9")),
    ("credential stated in prose", "the staging DB password is {} until Friday", "Zq8Rk2Vx9Nm4"),
]

# Text that talks about credentials, or holds long random-looking values that are not credentials.
NEAR_MISSES = [
    "The password policy requires 12 characters and a symbol.",
    "The API key is kept in the team vault under 'payments'.",
    "Use the AWS console to rotate keys every 90 days; key ids start with AKIA.",
    "token bucket rate limiting: 100 requests per second",
    "The JWT is validated by the gateway; see docs/auth.md.",
    "git clone https://github.com/org/repo.git or git@github.com:org/repo.git",
    "Set password= in the env file from the vault (never commit it).",
    "Fixed in commit 3f2c1a9b8e7d6c5b4a3928170605f4e3d2c1b0a9 on main (short: 3f2c1a9).",
    "The tenant id is 123e4567-e89b-12d3-a456-426614174000.",
    "Memory ids look like 01JD2K3A9FZQ4W8XVBH5T6N7RM.",
    "sha256 of the release: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "image digest sha256:9b2a3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809",
    "integrity sha512-Zq8Rk2Vx9Nm4Lb7Pw3Tc6Yf1Hd5Js0Ga8Pe2Uo7Ii4Ww9Kz3Mv6Bn1Xc5Lq8Rt7Yu0Io3Pa6Sd9Fg2Hj4Kl5Zx7Cv9Bn==",
    "logo: data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "host key fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
    "api_key = os.environ['OPENAI_API_KEY']",
    "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
    "Authorization: Bearer <token from the vault>",
    "OPENAI_API_KEY=<your-api-key>",
    "secret_name: prod/db/master-v2",
    "token_url = https://auth.example.com/oauth/token",
    "max_tokens = 1024000 and token = tokenizer.encode(text)",
    "oauth_flow = authorization_code",
    "password_min_length: 12",
    "PWD=/home/ada/projects/memory",
    "Keys that start with sk- are OpenAI keys; store them in 1Password.",
    "The class AbstractSingletonProxyFactoryBean builds proxies.",
    "Run `kubectl get secret db-credentials -o yaml` to see which keys exist.",
    "ssh://git@example.com:2222/team/repo.git and http://localhost:8080/health",
    "author: ada.lovelace1815",
    "tokenizer: bpe-v2-50k",
    "passenger_count: 4x4wheels",
    "primary_key: user_id2",
    "auth_provider: google-oauth2",
]


@pytest.mark.parametrize(("kind", "frame", "value"), POSITIVES,
                         ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(POSITIVES)])
def test_scanner_finds_each_true_positive(kind: str, frame: str, value: str) -> None:
    found = scan("first line\n" + frame.format(value))
    assert kind in [f.kind for f in found], found
    assert next(f for f in found if f.kind == kind).line == 2


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_not_credentials(text: str) -> None:
    assert scan(text) == []


def test_every_kind_of_the_scanner_is_in_the_corpus() -> None:
    from memory_mcp.truth.secret_rules import RULES as _RULES  # the corpus must grow with the rules

    # The generated corpus (test_secrets_corpus.py) holds the vendors issue 32 added, in every way.
    generated = {f.kind for _, _, text in CORPUS for f in scan(text)}
    missing = {r.kind for r in _RULES} - {k for k, _, _ in POSITIVES} - generated
    # Vendors whose samples would only repeat a prefix test; each has a rule of the same shape above.
    assert missing <= {"Google OAuth access token", "Azure shared access signature", "DigitalOcean token",
                       "HashiCorp Vault token", "Terraform Cloud token", "PyPI token", "LangSmith API key",
                       "Fireworks API key", "Discord bot token", "Mailgun API key", "Shopify token",
                       "Linear API key", "Notion token", "age secret key"}, missing


# Shapes of the kinds the corpus leaves out, for the prefilter test below (hex and alphanumerics only).
_HEX, _ALNUM = "9f8e7d6c5b4a3928", "Zq8Rk2Vx9Nm4Lb7P"
SHAPES = [
    j("ya29.", _ALNUM * 2), j("https://acct.blob.core.windows.net/c?sv=2022&sig=", _ALNUM * 2),
    j("dop_v1_", _HEX * 4), j("hvs.", _ALNUM * 2), j(_ALNUM[:14], ".atlasv1.", _ALNUM * 4),
    j("pypi-AgE", _ALNUM * 4), j("lsv2_pt_", _HEX * 2, "_", _HEX[:10]), j("fw_", _ALNUM * 2),
    j("key-", _HEX * 2), j("shpat_", _HEX * 2), j("lin_api_", _ALNUM * 3), j("ntn_", _ALNUM * 3),
    j("AGE-SECRET-KEY-1", "Q" * 58),
]


def test_prefilter_never_skips_a_rule_that_would_match() -> None:
    """`scan` runs a rule only when one of its literal needles is in the text: a needle that a
    match can lack would hide that credential. Checked on every sample, in every letter case."""
    from memory_mcp.truth.secret_rules import RULES as _RULES

    texts = [frame.format(value) for _, frame, value in POSITIVES] + NEAR_MISSES + SHAPES
    texts += [text for _, _, text in CORPUS]
    texts += [t.swapcase() for t in texts] + [t.upper() for t in texts] + [t.lower() for t in texts]
    matched: set[str] = set()
    for rule in _RULES:
        for text in texts:
            if any(rule.valid is None or rule.valid(m) for m in rule.pattern.finditer(text)):
                assert rule.may_match(text, text.lower), (rule.kind, text)
                matched.add(rule.kind)
    assert matched == {r.kind for r in _RULES} - {"Discord bot token"}, matched


def _may_consume_whitespace(parsed: object) -> bool:
    """Whether a parsed regex can consume a whitespace character (lookarounds consume none)."""
    import re._constants as c

    def char_may(items: list) -> bool:
        for op, av in items:
            if op is c.NEGATE or (op is c.CATEGORY and av not in (c.CATEGORY_DIGIT, c.CATEGORY_WORD)):
                return True
            if (op is c.LITERAL and chr(av).isspace()) or (op is c.RANGE and any(chr(x).isspace()
                                                                                  for x in range(av[0], av[1] + 1))):
                return True
        return False

    for op, av in parsed:  # type: ignore[attr-defined]
        if op in (c.ANY, c.NOT_LITERAL) or (op is c.LITERAL and chr(av).isspace()) or (op is c.IN and char_may(av)):
            return True
        if op is c.BRANCH and any(_may_consume_whitespace(b) for b in av[1]):
            return True
        if op is c.SUBPATTERN and _may_consume_whitespace(av[3]):
            return True
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and _may_consume_whitespace(av[2]):
            return True
    return False


def test_a_rules_minimum_run_is_never_longer_than_its_shortest_match() -> None:
    """`min_run` skips a rule on text without a whitespace-free run that long: the rule's pattern must
    consume no whitespace, and no match may be shorter (its width from the regex parser)."""
    import re._parser as sre

    from memory_mcp.truth.secret_rules import RULES as _RULES

    assert _may_consume_whitespace(sre.parse(r"a[^b]")) and _may_consume_whitespace(sre.parse(r"(?:x|\s)"))
    assert not _may_consume_whitespace(sre.parse(r"(?<![\s])sk-[\w.-]{20,}\b"))
    for rule in _RULES:
        if rule.min_run:
            parsed = sre.parse(rule.pattern.pattern)
            assert not _may_consume_whitespace(parsed), rule.kind
            assert rule.min_run <= parsed.getwidth()[0], rule.kind


def leaked(error: str, value: str) -> list[str]:
    """Every 4-character piece of the secret value that shows up in the error."""
    return [value[i:i + 4] for i in range(len(value) - 3) if value[i:i + 4] in error]


@pytest.mark.parametrize(("kind", "frame", "value"), POSITIVES,
                         ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(POSITIVES)])
async def test_remember_refuses_each_credential_naming_kind_and_line_only(
        s: Session, store: Path, kind: str, frame: str, value: str) -> None:
    files_before = sorted((store / "memories").rglob("*"))
    commits = commit_count(store)
    content = "Deploy notes for the albatross service.\n" + frame.format(value) + "\nthen run make."
    err = await s.error("memory_remember", content=content)
    assert "[secret_detected]" in err and kind in err and "line 2" in err, err
    assert leaked(err, value) == [], err
    assert "vault" in err  # says what to do instead
    assert sorted((store / "memories").rglob("*")) == files_before and commit_count(store) == commits


@pytest.mark.parametrize("text", NEAR_MISSES[:12])
async def test_near_misses_are_remembered(s: Session, text: str) -> None:
    r = await s.call("memory_remember", content=f"Near miss note: {text}")
    assert r["id"]


@pytest.mark.parametrize(("field", "value"), [
    ("content", f"Deploy with these creds:\nid {AWS_ID}\nthen run make."),
    ("title", f"Keys {AWS_ID}"),
    ("source", f"pasted from {AWS_ID}"),
])
async def test_remember_refuses_credentials_in_any_field(s: Session, store: Path, field: str, value: str) -> None:
    commits = commit_count(store)
    args = {"content": "Harmless text about deploying the albatross service."}
    args[field] = value
    err = await s.error("memory_remember", **args)
    assert "[secret_detected]" in err and "AWS access key id" in err and field in err
    assert leaked(err, AWS_ID) == []
    assert commit_count(store) == commits


async def test_update_refuses_credentials(s: Session, store: Path) -> None:
    m = await s.call("memory_remember", content="The booby service reads its key from the environment.")
    raw = (store / m["path"]).read_bytes()
    token = j("ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
    err = await s.error("memory_update", id=m["id"], content=f"Use the bot:\n{token}")
    assert "[secret_detected]" in err and "GitHub token on line 2" in err and leaked(err, token) == []
    err = await s.error("memory_update", id=m["id"], title=f"Bot {token}")
    assert "[secret_detected]" in err and leaked(err, token) == []
    assert (store / m["path"]).read_bytes() == raw


async def test_feedback_note_refuses_credentials(s: Session) -> None:
    m = await s.call("memory_remember", content="The cormorant worker needs a token from the vault.")
    err = await s.error("memory_feedback", id=m["id"], helpful=True, note="DB_PASSWORD=Zq8Rk2Vx9N")
    assert "[secret_detected]" in err and leaked(err, "Zq8Rk2Vx9N") == []


async def test_entities_refuse_credentials(s: Session) -> None:
    err = await s.error("memory_remember", content="The dunlin deploy key lives in the vault.",
                        entities=["dunlin", AWS_ID])
    assert "[secret_detected]" in err and leaked(err, AWS_ID) == []


async def test_deprecate_reason_refuses_credentials(s: Session) -> None:
    m = await s.call("memory_remember", content="The eider service uses static keys.")
    err = await s.error("memory_forget", id=m["id"], mode="deprecate", reason=f"replaced by {AWS_ID}")
    assert "[secret_detected]" in err


async def test_hand_written_credential_is_indexed_flagged_and_never_committed(s: Session, store: Path) -> None:
    token = j("glpat-", "xY7kQ2vN9mL4pR8wB3cZ")
    nid = new_id()
    path = store / "memories" / "gannet-ci.md"
    path.write_text(f"---\nid: {nid}\n---\n# Gannet CI\n\nThe gannet pipeline pushes tags.\nCI token {token}\n")
    commits = commit_count(store)
    try:
        assert await s.recall_ids("gannet pipeline") == [nid]  # indexed like any file
        st = await s.raw("memory_status")
        flags = st.structured_content["secrets"]
        assert flags == [{"path": "memories/gannet-ci.md", "kind": "GitLab token", "committed": False}]
        assert "memories/gannet-ci.md: GitLab token" in st.content[0].text
        assert leaked(str(st.structured_content) + st.content[0].text, token) == []
        assert all(u["path"] != "memories/gannet-ci.md" for u in st.structured_content["unindexed"])
        # The server never commits it, neither by reconcile nor by a write that would rewrite the file.
        assert commit_count(store) == commits and "gannet-ci.md" in git(store, "status", "--porcelain")
        err = await s.error("memory_feedback", id=nid, helpful=True)
        assert "[secret_detected]" in err and "memories/gannet-ci.md" in err and "GitLab token" in err
        assert leaked(err, token) == [] and commit_count(store) == commits
        # Once the person takes the value out, the flag goes and the file is committed as a hand edit.
        path.write_text(f"---\nid: {nid}\n---\n# Gannet CI\n\nThe gannet pipeline pushes tags.\n"
                        "CI token: in the team vault\n")
        st = await s.call("memory_status")
        assert st["secrets"] == [] and commit_count(store) == commits + 1
        assert token not in git(store, "log", "-p", "--all")
    finally:
        path.unlink(missing_ok=True)
        await s.call("memory_status")
