"""Credentials never reach a memory file: the scanner and the refusal over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Session, commit_count

from memory_mcp.secrets import scan

pytestmark = pytest.mark.anyio

# Built at run time so this file does not itself look like it holds credentials.
AWS_ID = "AKIA" + "IOSFODNN7" + "EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
SAMPLES = {
    "AWS access key id": f"key id {AWS_ID}",
    "AWS secret access key": f"aws_secret_access_key = {AWS_SECRET}",
    "GitHub token": "token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "Anthropic API key": "sk-ant-" + "api03-abcdefghijklmnopqrstuvwxyz012345",
    "OpenAI API key": "sk-proj-" + "abcdefghijklmnopqrstuvwx0123",
    "Stripe secret key": "sk_live_" + "abcdefghijklmnopqrstuvwx",
    "Slack token": "xoxb-" + "123456789012-abcdefghij",
    "Google API key": "AIza" + "SyA1234567890abcdefghijklmnopqrstuv",
    "private key block": "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIE...\n",
    "JSON web token": "eyJ" + "hbGciOiJIUzI1NiJ9.eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop",
    "password in a URL": "postgres://admin:" + "hunter2pass@db.internal/app",
    "bearer token": "Authorization: Bearer " + "abcdefghijklmnopqrstuvwxyz123456",
    "password assignment": "password = " + "s3cretPassw0rd",
}


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_scanner_finds_each_kind(kind: str) -> None:
    found = scan("first line\n" + SAMPLES[kind])
    assert kind in [f.kind for f in found]
    assert next(f for f in found if f.kind == kind).line == 2


@pytest.mark.parametrize("text", [
    "The password policy requires 12 characters and a symbol.",
    "The API key is kept in the team vault under 'payments'.",
    "Use the AWS console to rotate keys every 90 days.",
    "token bucket rate limiting: 100 requests per second",
    "The JWT is validated by the gateway; see docs/auth.md.",
    "git clone https://github.com/org/repo.git",
    "Set password= in the env file from the vault (never commit it).",
])
def test_ordinary_text_is_not_a_credential(text: str) -> None:
    assert scan(text) == []


def leaks(error: str, value: str) -> bool:
    """Does the error show any 6-character piece of the secret value?"""
    return any(value[i:i + 6] in error for i in range(len(value) - 5))


@pytest.mark.parametrize(("field", "value"), [
    ("content", f"Deploy with these creds:\nid {AWS_ID}\nthen run make."),
    ("title", f"Keys {AWS_ID}"),
    ("source", f"pasted from {AWS_ID}"),
])
async def test_remember_refuses_credentials_without_echoing_them(s: Session, store: Path, field: str,
                                                                 value: str) -> None:
    files_before = sorted((store / "memories").rglob("*.md"))
    commits = commit_count(store)
    args = {"content": "Harmless text about deploying the albatross service."}
    args[field] = value
    err = await s.error("memory_remember", **args)
    assert "[secret_detected]" in err and "AWS access key id" in err and field in err
    if field == "content":
        assert "line 2" in err
    assert not leaks(err, AWS_ID)
    assert "vault" in err  # says what to do instead
    assert sorted((store / "memories").rglob("*.md")) == files_before and commit_count(store) == commits


async def test_update_refuses_credentials(s: Session, store: Path) -> None:
    m = await s.call("memory_remember", content="The booby service reads its key from the environment.")
    raw = (store / m["path"]).read_bytes()
    err = await s.error("memory_update", id=m["id"], content=SAMPLES["GitHub token"])
    assert "[secret_detected]" in err and "GitHub token" in err and not leaks(err, SAMPLES["GitHub token"][6:])
    assert (store / m["path"]).read_bytes() == raw


async def test_feedback_note_refuses_credentials(s: Session) -> None:
    m = await s.call("memory_remember", content="The cormorant worker needs a token from the vault.")
    err = await s.error("memory_feedback", id=m["id"], helpful=True, note=SAMPLES["password assignment"])
    assert "[secret_detected]" in err and not leaks(err, "s3cretPassw0rd")


async def test_entities_refuse_credentials(s: Session) -> None:
    err = await s.error("memory_remember", content="The dunlin deploy key lives in the vault.",
                        entities=["dunlin", AWS_ID])
    assert "[secret_detected]" in err and not leaks(err, AWS_ID)


async def test_deprecate_reason_refuses_credentials(s: Session, store: Path) -> None:
    m = await s.call("memory_remember", content="The eider service uses static keys.")
    err = await s.error("memory_forget", id=m["id"], mode="deprecate", reason=f"replaced by {AWS_ID}")
    assert "[secret_detected]" in err
