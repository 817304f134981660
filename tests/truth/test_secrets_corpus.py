"""The credential scanner on a labelled corpus: credentials of many kinds written the ways people
write them (prose, env files, shell commands, JSON, YAML, URLs, code), and near misses from real code
and prose. Values are generated at test time from a seeded RNG in each vendor's shape, so no
realistic key is committed; the documented example keys (AWS's) are glued together at run time.

Targets: the scanner catches >= 98% of the credentials and lets >= 97% of the near misses through.
Also `mask`: each flagged value becomes `[redacted <kind>]`, the rest of the text stays."""

from __future__ import annotations

import base64
import random
import string
import uuid
from collections.abc import Callable

import pytest

from memory_mcp.truth.secret_rules import RULES as _RULES
from memory_mcp.truth.secrets import mask, scan

RNG = random.Random(20240515)
LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM, HEX = LOWER + UPPER + DIGITS, "0123456789abcdef"
B64, URLSAFE = ALNUM + "+/", ALNUM + "_-"


def r(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def j(*parts: str) -> str:
    return "".join(parts)


def jwt() -> str:
    def seg(obj: str) -> str:
        return base64.urlsafe_b64encode(obj.encode()).decode().rstrip("=")
    return ".".join([seg('{"alg":"HS256","typ":"JWT"}'), seg(f'{{"sub":"{r(DIGITS, 10)}","name":"svc"}}'),
                     r(URLSAFE, 43)])


def password() -> str:
    """A password as people and generators make them: random, or a word with digits and a symbol."""
    if RNG.random() < 0.6:
        return r(ALNUM, RNG.randint(10, 20))
    return RNG.choice(["Summer", "Kestrel", "Winter", "Falcon", "Orchid"]) + r(DIGITS, 4) + RNG.choice("!#%&*")


def b64json(obj: str) -> str:
    return base64.b64encode(obj.encode()).decode().rstrip("=")


def grafana_cloud() -> str:
    return "glc_" + b64json(f'{{"o":"{r(DIGITS, 6)}","n":"stack-{r(DIGITS, 6)}-hm-read","k":"{r(ALNUM, 24)}",'
                            '"m":{"r":"prod-eu-west-2"}}')


def grafana_api_key() -> str:  # the keys older Grafanas issue: base64 of {"k":...,"n":...,"id":...}
    return b64json(f'{{"k":"{r(ALNUM, 32)}","n":"ci-{r(LOWER, 6)}","id":{r(DIGITS, 1)}}}')


def sentry_org() -> str:
    claims = b64json(f'{{"iat":17{r(DIGITS, 8)}.5,"url":"https://sentry.io","region_url":"https://de.sentry.io",'
                     f'"org":"{r(LOWER, 8)}"}}')
    return f"sntrys_{claims}_{r(B64, 43)}"


# kind -> (environment variable name, value generator). Vendor shapes: prefix, alphabet, length.
KINDS: dict[str, tuple[str, Callable[[], str]]] = {
    "aws-access-key-id": ("AWS_ACCESS_KEY_ID", lambda: "AKIA" + r(UPPER + "234567", 16)),
    "aws-example-key-id": ("AWS_ACCESS_KEY_ID", lambda: j("AKIA", "IOSFODNN7", "EXAMPLE")),
    "aws-secret-access-key": ("AWS_SECRET_ACCESS_KEY", lambda: r(B64, 40)),
    "aws-example-secret": ("AWS_SECRET_ACCESS_KEY", lambda: j("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY")),
    "github-classic": ("GITHUB_TOKEN", lambda: "ghp_" + r(ALNUM, 36)),
    "github-fine-grained": ("GH_TOKEN", lambda: "github_pat_" + r(ALNUM, 22) + "_" + r(ALNUM, 59)),
    "gitlab": ("GITLAB_TOKEN", lambda: "glpat-" + r(URLSAFE, 20)),
    "slack-bot": ("SLACK_BOT_TOKEN", lambda: f"xoxb-{r(DIGITS, 11)}-{r(DIGITS, 13)}-{r(ALNUM, 24)}"),
    "stripe": ("STRIPE_SECRET_KEY", lambda: "sk_live_" + r(ALNUM, 99)),
    "openai": ("OPENAI_API_KEY", lambda: "sk-proj-" + r(URLSAFE, 156)),
    "anthropic": ("ANTHROPIC_API_KEY", lambda: "sk-ant-api03-" + r(URLSAFE, 93) + "AA"),
    "google-api": ("GOOGLE_API_KEY", lambda: "AIza" + r(URLSAFE, 35)),
    "google-oauth-secret": ("GOOGLE_CLIENT_SECRET", lambda: "GOCSPX-" + r(URLSAFE, 28)),
    "npm": ("NPM_TOKEN", lambda: "npm_" + r(ALNUM, 36)),
    "pypi": ("PYPI_TOKEN", lambda: "pypi-AgEIcHlwaS5vcmc" + r(URLSAFE, 70)),
    "hugging-face": ("HF_TOKEN", lambda: "hf_" + r(ALNUM, 34)),
    "sendgrid": ("SENDGRID_API_KEY", lambda: f"SG.{r(URLSAFE, 22)}.{r(URLSAFE, 43)}"),
    "twilio": ("TWILIO_API_KEY", lambda: "SK" + r(HEX, 32)),
    "telegram": ("TELEGRAM_BOT_TOKEN", lambda: f"{r(DIGITS, 10)}:AA{r(URLSAFE, 33)}"),
    "mailchimp": ("MAILCHIMP_API_KEY", lambda: f"{r(HEX, 32)}-us{RNG.randint(1, 21)}"),
    "azure-ad-client-secret": ("AZURE_CLIENT_SECRET", lambda: f"{r(ALNUM, 3)}{r(DIGITS, 1)}Q~{r(URLSAFE + '.~', 34)}"),
    "digitalocean": ("DIGITALOCEAN_TOKEN", lambda: "dop_v1_" + r(HEX, 64)),
    "vault": ("VAULT_TOKEN", lambda: "hvs." + r(URLSAFE, 90)),
    "docker-hub": ("DOCKERHUB_TOKEN", lambda: "dckr_pat_" + r(URLSAFE, 27)),
    "shopify": ("SHOPIFY_ACCESS_TOKEN", lambda: "shpat_" + r(HEX, 32)),
    "groq": ("GROQ_API_KEY", lambda: "gsk_" + r(ALNUM, 52)),
    "linear": ("LINEAR_API_KEY", lambda: "lin_api_" + r(ALNUM, 40)),
    "mailgun": ("MAILGUN_API_KEY", lambda: "key-" + r(HEX, 32)),
    "jwt": ("SESSION_TOKEN", jwt),
    "age": ("AGE_KEY", lambda: "AGE-SECRET-KEY-1" + r(UPPER + DIGITS, 58)),
    "random-password": ("DB_PASSWORD", password),
    "api-key-without-prefix": ("MISTRAL_API_KEY", lambda: r(ALNUM, 32)),
    # Issue 32: the families an outside corpus found missing, each in every way below.
    "atlassian-api-token": ("JIRA_API_TOKEN", lambda: "ATATT3xFfGF0" + r(URLSAFE, 171) + "=" + r(HEX.upper(), 8)),
    "atlassian-admin-key": ("ATLASSIAN_ADMIN_KEY", lambda: "ATCTT3xFfGN0" + r(URLSAFE, 171) + "=" + r(HEX.upper(), 8)),
    "bitbucket-app-password": ("BITBUCKET_APP_PASSWORD", lambda: "ATBB" + r(ALNUM, 32)),
    "databricks": ("DATABRICKS_TOKEN", lambda: "dapi" + r(HEX, 32)),
    "databricks-suffixed": ("DATABRICKS_HOST_TOKEN", lambda: "dapi" + r(HEX, 32) + "-2"),
    "grafana-service-account": ("GRAFANA_SERVICE_ACCOUNT_TOKEN", lambda: f"glsa_{r(ALNUM, 32)}_{r(HEX, 8)}"),
    "grafana-cloud": ("GRAFANA_CLOUD_ACCESS_POLICY_TOKEN", grafana_cloud),
    "grafana-api-key": ("GRAFANA_API_KEY", grafana_api_key),
    "okta": ("OKTA_API_TOKEN", lambda: "00" + r(URLSAFE, 40)),
    "new-relic-user-key": ("NEW_RELIC_API_KEY", lambda: "NRAK-" + r(UPPER + DIGITS, 27)),
    "new-relic-insert-key": ("NEW_RELIC_INSERT_KEY", lambda: "NRII-" + r(URLSAFE, 32)),
    "new-relic-license-key": ("NEW_RELIC_LICENSE_KEY", lambda: r(HEX, 36) + "NRAL"),
    "new-relic-browser-key": ("NEW_RELIC_BROWSER_KEY", lambda: "NRJS-" + r(HEX, 19)),
    "gcp-private-key-id": ("GOOGLE_PRIVATE_KEY_ID", lambda: r(HEX, 40)),
    "azure-storage-key": ("AZURE_STORAGE_KEY", lambda: r(B64, 86) + "=="),
    # More families of the public rule sets, in their vendors' prefixes and lengths.
    "doppler": ("DOPPLER_TOKEN", lambda: "dp.pt." + r(ALNUM, 43)),
    "dynatrace": ("DT_API_TOKEN", lambda: f"dt0c01.{r(UPPER + DIGITS, 24)}.{r(UPPER + DIGITS, 64)}"),
    "postman": ("POSTMAN_API_KEY", lambda: f"PMAK-{r(HEX, 24)}-{r(HEX, 34)}"),
    "pulumi": ("PULUMI_ACCESS_TOKEN", lambda: "pul-" + r(HEX, 40)),
    "planetscale": ("PLANETSCALE_TOKEN", lambda: "pscale_tkn_" + r(URLSAFE, 43)),
    "sentry-user": ("SENTRY_AUTH_TOKEN", lambda: "sntryu_" + r(HEX, 64)),
    "sentry-org": ("SENTRY_ORG_AUTH_TOKEN", sentry_org),
    "square": ("SQUARE_ACCESS_TOKEN", lambda: "EAAA" + r(URLSAFE, 60)),
    "square-secret": ("SQUARE_APPLICATION_SECRET", lambda: "sq0csp-" + r(URLSAFE, 43)),
    "sendinblue": ("SENDINBLUE_API_KEY", lambda: f"xkeysib-{r(HEX, 64)}-{r(ALNUM, 16)}"),
    "1password": ("OP_SERVICE_ACCOUNT_TOKEN", lambda: "ops_eyJ" + r(B64, 300)),
    "alibaba": ("ALIBABA_CLOUD_ACCESS_KEY_ID", lambda: "LTAI" + r(ALNUM, 20)),
    "adobe": ("ADOBE_CLIENT_SECRET", lambda: "p8e-" + r(ALNUM, 32)),
    "clojars": ("CLOJARS_DEPLOY_TOKEN", lambda: "CLOJARS_" + r(LOWER + DIGITS, 60)),
    "duffel": ("DUFFEL_ACCESS_TOKEN", lambda: "duffel_live_" + r(URLSAFE, 43)),
    "easypost": ("EASYPOST_API_KEY", lambda: "EZAK" + r(ALNUM, 54)),
    "flutterwave": ("FLW_SECRET_KEY", lambda: f"FLWSECK_TEST-{r(HEX, 32)}-X"),
    "fly": ("FLY_API_TOKEN", lambda: "fo1_" + r(URLSAFE, 43)),
    "frameio": ("FRAMEIO_TOKEN", lambda: "fio-u-" + r(URLSAFE, 64)),
    "harness": ("HARNESS_API_KEY", lambda: f"pat.{r(URLSAFE, 22)}.{r(ALNUM, 24)}.{r(ALNUM, 20)}"),
    "infracost": ("INFRACOST_API_KEY", lambda: "ico-" + r(ALNUM, 32)),
    "prefect": ("PREFECT_API_KEY", lambda: "pnu_" + r(ALNUM, 36)),
    "readme": ("README_API_KEY", lambda: "rdme_" + r(LOWER + DIGITS, 70)),
    "rubygems": ("GEM_HOST_API_KEY", lambda: "rubygems_" + r(HEX, 48)),
    "scalingo": ("SCALINGO_API_TOKEN", lambda: "tk-us-" + r(URLSAFE, 48)),
    "shippo": ("SHIPPO_API_TOKEN", lambda: "shippo_live_" + r(HEX, 40)),
    "openshift": ("OPENSHIFT_TOKEN", lambda: "sha256~" + r(URLSAFE, 43)),
    "sourcegraph": ("SRC_ACCESS_TOKEN", lambda: "sgp_" + r(HEX, 40)),
    "typeform": ("TYPEFORM_TOKEN", lambda: "tfp_" + r(URLSAFE, 59)),
    "artifactory": ("ARTIFACTORY_API_KEY", lambda: "AKCp" + r(ALNUM, 69)),
    "maxmind": ("MAXMIND_LICENSE_KEY", lambda: f"{r(ALNUM, 6)}_{r(ALNUM, 29)}_mmk"),
    "facebook": ("FACEBOOK_ACCESS_TOKEN", lambda: "EAAC" + r(ALNUM, 120)),
    "cloudflare-origin-ca": ("CF_ORIGIN_CA_KEY", lambda: f"v1.0-{r(HEX, 24)}-{r(HEX, 146)}"),
    "gitlab-runner-registration": ("RUNNER_REGISTRATION_TOKEN", lambda: "GR1348941" + r(URLSAFE, 20)),
    "hugging-face-org": ("HF_ORG_TOKEN", lambda: "api_org_" + r(LOWER + UPPER, 34)),
    "yandex": ("YANDEX_API_KEY", lambda: "AQVN" + r(URLSAFE, 36)),
    "twilio-auth-token": ("TWILIO_AUTH_TOKEN", lambda: r(HEX, 32)),
    "datadog": ("DD_API_KEY", lambda: r(HEX, 32)),
    "cloudflare-api-token": ("CLOUDFLARE_API_TOKEN", lambda: r(URLSAFE, 40)),
    "heroku-api-key": ("HEROKU_API_KEY", lambda: str(uuid.UUID(int=RNG.getrandbits(128)))),
}

# The ways people write a value of a kind: (way, template of {name} and {value}).
WAYS = [
    ("prose", "For the staging deploy use {value} (rotate it next quarter)."),
    ("env", "{name}={value}"),
    ("label before env", "Note: {name}={value}"),
    ("export", 'export {name}="{value}"'),
    ("json", '{{"service": "billing", "{lname}": "{value}"}}'),
    ("yaml", "billing:\n  {lname}: {value}\n  region: eu-west-1"),
    ("code", 'client = Client({lname}="{value}", timeout=30)'),
]
# Values that only a name makes a credential of are not found in bare prose, by design.
NEEDS_A_NAME = {"random-password", "api-key-without-prefix", "okta", "gcp-private-key-id", "azure-storage-key",
                "twilio-auth-token", "datadog", "cloudflare-api-token", "heroku-api-key"}


def special_cases() -> list[tuple[str, str, str]]:
    """(kind, way, text): the shapes that are not a name and a value."""
    pw, user, host = password(), RNG.choice(["app", "deploy", "svc_billing"]), "db.internal.example.com"
    basic = base64.b64encode(f"{user}:{password()}".encode()).decode()
    webhook = f"https://discord.com/api/webhooks/{r(DIGITS, 18)}/{r(URLSAFE, 68)}"
    return [
        ("url-password", "url", f"DATABASE_URL=postgres://{user}:{pw}@{host}:5432/billing"),
        ("url-password", "url", f"mongodb+srv://{user}:{password()}@cluster0.ab1cd.mongodb.net/app"),
        ("url-password", "url", f"CELERY_BROKER=amqp://{user}:{password()}@rabbit:5672//"),
        ("redis-url-no-user", "url", f"REDIS_URL=redis://:{password()}@cache.internal:6379/0"),
        ("redis-url-no-user", "prose", f"The cache is at redis://:{password()}@10.0.3.7:6379 for now."),
        ("basic-auth", "shell", f"curl -H 'Authorization: Basic {basic}' https://api.example.com/v1"),
        ("basic-auth", "http", f"GET /metrics HTTP/1.1\nAuthorization: Basic {basic}"),
        ("curl-user", "shell", f"curl -u {user}:{password()} https://ci.example.com/api/json"),
        ("curl-user", "shell", f"curl --user '{user}:{password()}' -X POST https://nexus.example.com/upload"),
        ("mysql-p", "shell", f"mysql -h {host} -u {user} -p{password()} billing < dump.sql"),
        ("mysql-p", "shell", f"mysqldump -u root -p{password()} --all-databases > all.sql"),
        ("discord-webhook", "url", f"alerts post to {webhook}"),
        ("discord-webhook", "env", f"DISCORD_WEBHOOK={webhook.replace('discord.com', 'discordapp.com')}"),
        ("slack-webhook", "url", f"https://hooks.slack.com/services/T{r(UPPER + DIGITS, 8)}/B{r(UPPER + DIGITS, 10)}/"
                                 f"{r(ALNUM, 24)}"),
        ("bearer", "shell", f'curl -H "Authorization: Bearer {r(URLSAFE, 40)}" https://api.example.com/me'),
        ("bearer", "http", f"Authorization: Bearer {r(URLSAFE, 32)}"),
        ("azure-storage", "env", f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acme;"
                                 f"AccountKey={r(B64, 86)}==;EndpointSuffix=core.windows.net"),
        ("azure-ad-prose", "prose", f"The Entra app registration's client secret is "
                                    f"{r(ALNUM, 3)}{r(DIGITS, 1)}Q~{r(URLSAFE, 34)}; it expires in June."),
        ("private-key", "pem", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + r(B64, 70) + "\n" + r(B64, 70)
         + "\n-----END OPENSSH PRIVATE KEY-----"),
        ("private-key", "pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + r(B64, 64) + "\n-----END RSA PRIVATE KEY-----"),
        ("password-json", "json", f'{{"user": "{user}", "password": "{RNG.choice(["hunter22", "letmein7", "s3cr3t!"])}"}}'),
        ("password-json", "json", f'{{"db": {{"host": "{host}", "password": "{password()}"}}}}'),
        ("password-yaml", "yaml", f"database:\n  user: {user}\n  password: \"{password()}\""),
        ("password-python", "code", f'conn = psycopg.connect(host="{host}", password="{password()}")'),
        ("password-prose", "prose", f"The staging DB password is {r(ALNUM, 14)} until we move it to the vault."),
        ("password-prose", "prose", f"Remember: the admin password was {password()} (changed on Monday)."),
        ("pgpassword", "env", f"PGPASSWORD={r(ALNUM, 16)} psql -h {host} -U {user}"),
        ("passphrase", "yaml", "gpg:\n  passphrase: \"correct horse battery staple\""),
        ("docker-login", "shell", f"docker login -u {user} -p {r(ALNUM, 24)}"),
        ("gh-token-flag", "shell", f"gh auth login --with-token <<< {'ghp_' + r(ALNUM, 36)}"),
        *issue_32_cases(),
    ]


def pem_b64(kind: str) -> str:
    """A PEM private key, base64-encoded whole as kubeconfig and Kubernetes secrets hold it."""
    label = f"{kind} PRIVATE KEY" if kind else "PRIVATE KEY"
    pem = f"-----BEGIN {label}-----\n{r(B64, 64)}\n{r(B64, 64)}\n-----END {label}-----\n"
    return base64.b64encode(pem.encode()).decode()


def issue_32_cases() -> list[tuple[str, str, str]]:
    """The shapes issue 32 names, three or more of each, beyond the ways every kind is written."""
    storage_key = r(B64, 86) + "=="
    okta = "00" + r(URLSAFE, 40)
    key_id = r(HEX, 40)
    return [
        ("okta-ssws", "http", f"Authorization: SSWS {okta}"),
        ("okta-ssws", "shell", f'curl -H "Accept: application/json" -H "Authorization: SSWS {"00" + r(URLSAFE, 40)}" '
                               "https://acme.okta.com/api/v1/users?limit=25"),
        ("okta-ssws", "code", f"headers = {{'Authorization': 'SSWS {'00' + r(URLSAFE, 40)}'}}"),
        ("okta-ssws", "yaml", f"okta:\n  client:\n    orgUrl: https://acme.okta.com\n    token: {'00' + r(URLSAFE, 40)}"),
        ("gcp-private-key-id", "json", f'{{"type": "service_account", "project_id": "acme-prod", '
                                       f'"private_key_id": "{key_id}", "client_email": "ci@acme-prod.iam.gserviceaccount.com"}}'),
        ("gcp-private-key-id", "yaml", f"gcp:\n  private_key_id: {r(HEX, 40)}\n  client_id: '{r(DIGITS, 21)}'"),
        ("gcp-private-key-id", "terraform", f'private_key_id = "{r(HEX, 40)}"'),
        ("gcp-service-account", "json", '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
                                        f'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC{r(B64, 60)}\\n-----END PRIVATE KEY-----\\n"}}'),
        ("azure-account-key", "shell", f"az storage blob upload --account-name acme --account-key {storage_key} "
                                       "--container-name backups --file db.dump"),
        ("azure-account-key", "shell", f'az storage container list --account-name acme --account-key "{r(B64, 86)}=="'),
        ("azure-account-key", "shell", f"az storage blob list --account-key={r(B64, 86)}== -c logs"),
        ("azure-account-key", "json", f'{{"storageAccount": "acme", "accountKey": "{r(B64, 86)}=="}}'),
        ("azure-account-key", "powershell", f'New-AzStorageContext -StorageAccountName acme -StorageAccountKey "{r(B64, 86)}=="'),
        ("kubeconfig-client-key", "yaml", "users:\n- name: admin\n  user:\n    client-certificate-data: "
                                          f"{base64.b64encode(b'-----BEGIN CERTIFICATE-----').decode()}\n"
                                          f"    client-key-data: {pem_b64('RSA')}"),
        ("kubeconfig-client-key", "yaml", f"    client-key-data: {pem_b64('EC')}"),
        ("kubeconfig-client-key", "json", f'{{"user": {{"client-key-data": "{pem_b64("")}"}}}}'),
        ("kubeconfig-client-key", "k8s-secret", f"kind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.key: {pem_b64('')}"),
        ("private-key-lower-case", "pem", "-----begin rsa private key-----\n" + r(B64, 64) + "\n-----end rsa private key-----"),
        ("private-key-lower-case", "pem", "-----begin private key-----\n" + r(B64, 64) + "\n-----end private key-----"),
        ("private-key-lower-case", "pem", "-----Begin OpenSSH Private Key-----\n" + r(B64, 70)),
        ("private-key-lower-case", "pgp", "-----begin pgp private key block-----\n\n" + r(B64, 64)),
        ("private-key-encrypted", "pem", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0w" + r(B64, 40)),
        ("passphrase-lower-case", "env", "PASSPHRASE=correcthorsebatterystaple"),
        ("passphrase-lower-case", "env", "GPG_PASSPHRASE=tangerine-otter-quilt-lamp"),
        ("passphrase-lower-case", "env", "export SSH_KEY_PASSPHRASE=" + "".join(RNG.choice(LOWER) for _ in range(14))),
        ("passphrase-lower-case", "env", "passphrase=" + "-".join(RNG.choice(["amber", "otter", "violet", "quarry", "lemon",
                                                                             "harbor", "pixel"]) for _ in range(4))),
        ("passphrase-lower-case", "yaml", "signing:\n  key_passphrase: " + "".join(RNG.choice(LOWER) for _ in range(16))),
        ("password-lower-case", "env", "DB_PASSWORD=" + "".join(RNG.choice(LOWER) for _ in range(12))),
        ("databricks-cfg", "ini", f"[DEFAULT]\nhost = https://adb-{r(DIGITS, 16)}.7.azuredatabricks.net\ntoken = dapi{r(HEX, 32)}"),
        ("databricks-cli", "shell", f"databricks workspace list --profile ci --token dapi{r(HEX, 32)}"),
        ("databricks-header", "shell", f"curl -H 'Authorization: Bearer dapi{r(HEX, 32)}' https://adb-1.azuredatabricks.net/api/2.0/clusters/list"),
        ("atlassian-curl", "shell", f"curl -u ada@acme.com:ATATT3xFfGF0{r(URLSAFE, 171)}={r(HEX.upper(), 8)} "
                                    "https://acme.atlassian.net/rest/api/3/myself"),
        ("grafana-header", "http", f"Authorization: Bearer glsa_{r(ALNUM, 32)}_{r(HEX, 8)}"),
        ("new-relic-header", "shell", f"curl -X POST https://api.newrelic.com/graphql -H 'API-Key: NRAK-{r(UPPER + DIGITS, 27)}'"),
        ("new-relic-yaml", "yaml", f"common: &default_settings\n  license_key: '{r(HEX, 36)}NRAL'\n  app_name: billing"),
        ("token-flag", "shell", f"vercel deploy --prod --token {r(ALNUM, 24)}"),
        ("token-flag", "shell", f"sentry-cli --auth-token {r(HEX, 64)} releases finalize 2.1.0"),
        ("password-flag", "shell", f"pg_dump --host db --username app --password {r(ALNUM, 16)} billing"),
    ]


def credentials() -> list[tuple[str, str, str]]:
    out = []
    for kind, (name, gen) in KINDS.items():
        for way, template in WAYS:
            if way == "prose" and kind in NEEDS_A_NAME:
                continue
            out.append((kind, way, template.format(name=name, lname=name.lower(), value=gen())))
    return out + special_cases()


def near_misses() -> list[str]:
    generated = [f"Tenant id {uuid.UUID(int=RNG.getrandbits(128))} is the EU one." for _ in range(4)]
    generated += [f"Fixed in {r(HEX, 40)} (cherry-picked from {r(HEX, 12)})." for _ in range(3)]
    generated += [f"sha256: {r(HEX, 64)}" for _ in range(2)]
    generated += [f"the image is ghcr.io/acme/api@sha256:{r(HEX, 64)}", f"ETag: \"{r(HEX, 32)}\"",
                  f"request id {r(HEX, 8)}-{r(HEX, 4)} failed with 502", f"memory id 01J{r('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 23)}"]
    return generated + [
        # prose that talks about credentials
        "The password policy requires 12 characters, one digit and one symbol.",
        "Never paste an API key into a memory; the team vault holds them.",
        "Rotate the AWS keys every 90 days; key ids start with AKIA.",
        "The password is stored in 1Password under 'staging db'.",
        "Ask Priya for the token; it is in the shared vault.",
        "Tokens expire after 15 minutes, refresh tokens after 30 days.",
        "The secret is kept in AWS Secrets Manager as prod/billing/db.",
        "password reset emails go through SendGrid templates.",
        "Our API keys are scoped per environment (dev, staging, prod).",
        "If the token is expired, the CLI prints 'authentication required'.",
        "The client secret lives in Key Vault; never in the repo.",
        "Basic authentication is disabled on the admin panel.",
        "Use basic auth only behind the VPN.",
        "token bucket rate limiting: 100 requests per second",
        "The JWT is validated by the gateway; see docs/auth.md.",
        "Passwords must not be reused across the last 5 rotations.",
        "Set password= in the env file from the vault (never commit it).",
        "Keys that start with sk- are OpenAI keys; store them in 1Password.",
        "We moved the access key to an IAM role, so no key is needed now.",
        "the secret sauce is caching the tokenizer output",
        # placeholders
        "OPENAI_API_KEY=<your-api-key>",
        "GITHUB_TOKEN=<your-token>",
        "export STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxx",
        "api_key: xxxxxxxxxxxxxxxxxxxxxxxx",
        "password: ********",
        "DB_PASSWORD=changeme",
        "password: \"password\"",
        'token = "YOUR_TOKEN_HERE"',
        "AWS_SECRET_ACCESS_KEY=...",
        "SLACK_WEBHOOK=https://hooks.slack.com/services/...",
        "DATABASE_URL=postgres://user:password@localhost:5432/app",
        "postgres://postgres:postgres@localhost:5432/test",
        "curl -u $USER:$API_TOKEN https://ci.example.com/api/json",
        "curl -u \"${JIRA_USER}:${JIRA_TOKEN}\" https://jira.example.com/rest/api/2/myself",
        "mysql -u root -p",
        "mysql -u root -p$MYSQL_ROOT_PASSWORD app",
        "Authorization: Bearer <token>",
        "Authorization: Bearer $TOKEN",
        "Authorization: Basic <base64 of user:password>",
        "client_secret: '{{ vault_client_secret }}'",
        "password: ${{ secrets.DB_PASSWORD }}",
        "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
        "password: !vault |",
        'password = "%s"',
        "redis://localhost:6379/0",
        # environment references and code
        "api_key = settings.OPENAI_API_KEY",
        "auth = HTTPBasicAuth(user, pw)",
        "api_key = os.environ['OPENAI_API_KEY']",
        "token = os.getenv('GITHUB_TOKEN')",
        "const apiKey = process.env.STRIPE_SECRET_KEY;",
        "password = getpass.getpass('DB password: ')",
        "secret = config.get('app', 'secret')",
        "self.token = token_provider.fetch()",
        "token = request.headers['X-Auth-Token']",
        "auth_header = f'Bearer {token}'",
        "api_key = ENV.fetch('MAILGUN_API_KEY')",
        "password: str = Field(min_length=12)",
        "def check_password(password: str, hashed: bytes) -> bool:",
        "if not verify_token(token, audience=AUDIENCE):",
        "credentials = service_account.Credentials.from_service_account_file(path)",
        "AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY_PROD",
        "secretKeyRef:\n  name: db-credentials\n  key: password",
        "password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())",
        "token_url = https://auth.example.com/oauth/token",
        "max_tokens = 4096",
        "tokenizer: bpe-v2-50k",
        "auth_provider: google-oauth2",
        "secret_name: prod/db/master-v2",
        "password_min_length: 12",
        "author: ada.lovelace1815",
        "passenger_count: 4",
        "primary_key: user_id2",
        "keyboard_layout: dvorak",
        "PWD=/home/ada/projects/memory",
        "auth = None",
        "token: null",
        "password: ''",
        "client_secret = SecretStr(os.environ['CLIENT_SECRET'])",
        "db_password = vault_client.read('secret/data/db')['data']['password']",
        "github_token = GITHUB_TOKEN_FROM_ACTIONS",
        "STRIPE_KEY=${STRIPE_KEY:-}",
        # ordinary code and config that looks technical
        "git clone https://github.com/org/repo.git or git@github.com:org/repo.git",
        "ssh://git@example.com:2222/team/repo.git and http://localhost:8080/health",
        "host key fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
        "integrity: sha512-Zq8Rk2Vx9Nm4Lb7Pw3Tc6Yf1Hd5Js0Ga8Pe2Uo7Ii4Ww9Kz3Mv6Bn1Xc5Lq8Rt7Yu0Io3Pa6Sd9Fg2Hj4Kl5Zx7Cv9Bn==",
        "The class AbstractSingletonProxyFactoryBean builds proxies.",
        "kubectl get secret db-credentials -o jsonpath='{.data.password}' | base64 -d",
        "docker run -u 1000:1000 -v $PWD:/src node:20",
        "git push -u origin main",
        "curl -sSL https://install.example.com | sh",
        "Locale en-us is the default; de-de falls back to it.",
        "pip install -U 'passlib[bcrypt]'",
        "npm run build -- --mode=production",
        "The PR is #4821; the Jira ticket is PAY-1290.",
        "http://127.0.0.1:8765/mcp serves the tools",
        "Bucket s3://acme-billing-exports-eu-west-1/2024/05/ holds the exports.",
        "psql -h localhost -U postgres -d app",
        "Run `gh auth login` and pick the browser flow.",
        "The key rotation runbook is docs/runbooks/rotate-keys.md.",
        "hash = hashlib.sha1(data).hexdigest()  # 40 hex chars",
        "oauth_flow = authorization_code",
        "Use -p 8080:80 to publish the port.",
        "The basic plan costs 10 EUR a month.",
        # issue 32: ordinary code beside the new rules (lock files, base64 test data, colours, ids, URLs)
        f'"resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz", "integrity": "sha512-{r(B64, 86)}=="',
        f'lodash@^4.17.21:\n  version "4.17.21"\n  integrity sha1-{r(B64, 27)}=',
        f'[[package]]\nname = "serde"\nversion = "1.0.200"\nchecksum = "{r(HEX, 64)}"',
        f'certifi==2024.2.2 \\\n    --hash=sha256:{r(HEX, 64)}',
        f"golang.org/x/sys v0.20.0 h1:{r(B64, 43)}=",
        f"fixture = base64.b64decode('{base64.b64encode(bytes(RNG.getrandbits(8) for _ in range(48))).decode()}')",
        f'"thumbnail": "data:image/jpeg;base64,/9j/4AAQSkZJRgABAQ{r(B64, 60)}"',
        "color: #0f172a; --accent: #6366f1; border: 1px solid #e2e8f0;",
        f"trace {uuid.UUID(int=RNG.getrandbits(128))} span {r(HEX, 16)} parent {r(HEX, 16)}",
        f"okta user id 00u{r(ALNUM, 17)} was deprovisioned",
        "AbstractAnnotationConfigDispatcherServletInitializerTokenRefreshHandlerFactory",
        "def test_private_key_id_is_read_from_the_service_account_file_not_the_environment():",
        "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=app&scope=openid",
        "https://auth.example.com:8443/login and https://token.internal:9000/healthz",
        "https://grafana.example.com/d/abc123/service-overview?orgId=1&refresh=30s",
        "private_key_id: <the key's id from the JSON file>",
        '"private_key_id": ""',
        "az storage blob upload --account-name acme --account-key $AZURE_STORAGE_KEY -f db.dump",
        'az storage container list --account-key "${STORAGE_KEY}"',
        "databricks configure --token",
        "databricks clusters list --profile ci",
        "Authorization: SSWS ${OKTA_API_TOKEN}",
        "Okta API tokens are sent as SSWS tokens and expire after 30 days unused.",
        "NEW_RELIC_LICENSE_KEY=${NEW_RELIC_LICENSE_KEY}",
        "The New Relic user key starts with NRAK-; ingest keys end with NRAL.",
        "Grafana service account tokens start with glsa_ and are shown once.",
        "client-certificate-data: " + base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIC" + bytes(r(B64, 30), "ascii")).decode(),
        "certificate-authority-data: " + base64.b64encode(f"-----BEGIN CERTIFICATE-----\\nMIIB{r(B64, 60)}\\n"
                                                          "-----END CERTIFICATE-----\\n".encode()).decode(),
        "client-key-data: REDACTED",
        "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE" + r(B64, 40) + "\n-----END CERTIFICATE-----",
        "-----begin public key-----\nMFkwEwYHKoZIzj0CAQY" + r(B64, 40),
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ" + r(B64, 60) + " deploy@ci",
        "PASSPHRASE=",
        "GPG_PASSPHRASE_FILE=/run/secrets/gpg-passphrase",
        "passphrase: required",
        "KEY_PASSPHRASE=$(cat /run/secrets/key)",
        "password_reset_template=password-reset-email",
        "docker login --password-stdin -u ci ghcr.io",
        "vercel deploy --prod --token $VERCEL_TOKEN",
        "gh auth login --with-token < token.txt",
        "kubectl create secret generic db --from-literal=password=$DB_PASSWORD",
        "openssl genpkey -algorithm ed25519 -out key.pem -pass file:passphrase.txt",
        "ssh-keygen -t ed25519 -N '' -f ~/.ssh/deploy_key",
        "terraform apply -var-file=secrets.tfvars -auto-approve",
        "curl --oauth2-bearer $TOKEN https://api.example.com/v1/me",
        "sentry-cli --auth-token \"$SENTRY_AUTH_TOKEN\" releases new 1.2.3",
        "The dapi prefix marks Databricks tokens; ours live in the workspace secret scope.",
        "ATATT3 is how Atlassian API tokens begin; they are shown once when made.",
        f"git log {r(HEX, 40)}..{r(HEX, 40)} --oneline",
        f"Merge pull request #812 from acme/fix-{r(LOWER, 6)} ({r(HEX, 7)})",
    ]


CREDENTIALS = credentials()
NEAR_MISSES = near_misses()


def test_corpus_is_large_and_varied() -> None:
    kinds = {kind for kind, _, _ in CREDENTIALS}
    assert len(CREDENTIALS) >= 100 and len(kinds) >= 30, (len(CREDENTIALS), len(kinds))
    assert len(NEAR_MISSES) >= 100
    assert {"prose", "env", "json", "yaml", "url", "code", "shell"} <= {way for _, way, _ in CREDENTIALS}


def test_scanner_catches_98_percent_and_passes_97_percent_of_near_misses() -> None:
    missed = [(kind, way, text) for kind, way, text in CREDENTIALS if not scan(text)]
    flagged = [(text, [f.kind for f in scan(text)]) for text in NEAR_MISSES if scan(text)]
    catch = 1 - len(missed) / len(CREDENTIALS)
    passed = 1 - len(flagged) / len(NEAR_MISSES)
    kinds = len({kind for kind, _, _ in CREDENTIALS})
    print(f"\ncredential corpus: {len(CREDENTIALS)} credentials of {kinds} kinds, caught {catch:.1%} "
          f"({len(CREDENTIALS) - len(missed)}); {len(NEAR_MISSES)} near misses, passed {passed:.1%} "
          f"({len(NEAR_MISSES) - len(flagged)})")
    for kind, way, _ in missed:
        print(f"  missed: {kind} written as {way}")  # the kind and the way only, never the value
    for text, found in flagged:
        print(f"  flagged: {text[:60]!r} as {found}")
    assert catch >= 0.98, missed
    assert passed >= 0.97, flagged


@pytest.mark.parametrize("text", [
    "Note: DB_PASSWORD=Zq8Rk2Vx9Nm4", "Reminder - MISTRAL_API_KEY: Xk29fLq0ZpT7vB3nW8yR1cD6",
    "see: prod: DB_PASSWORD=Zq8Rk2Vx9Nm4",
])
def test_a_label_before_an_assignment_does_not_hide_it(text: str) -> None:
    # `DB_PASSWORD=...` was refused but `Note: DB_PASSWORD=...` accepted: the label's match swallowed it.
    assert [f.kind for f in scan(text)] == ["credential assigned to a name"]


@pytest.mark.parametrize("text", ["api_key = settings.OPENAI_API_KEY", "auth = HTTPBasicAuth(user, pw)"])
def test_a_reference_to_a_secret_is_not_one(text: str) -> None:
    # What the refusal itself advises (read the key from settings) was refused.
    assert scan(text) == []


def test_prefilter_never_skips_a_rule_that_would_match_the_corpus() -> None:
    texts = [text for _, _, text in CREDENTIALS] + NEAR_MISSES
    texts += [t.upper() for t in texts] + [t.lower() for t in texts]
    for rule in _RULES:
        for text in texts:
            if next(iter(rule.pattern.finditer(text)), None) is not None and rule.valid is None:
                assert rule.may_match(text, text.lower), (rule.kind, text[:40])


def test_mask_replaces_each_value_by_its_kind_and_keeps_the_rest() -> None:
    aws = j("AKIA", "IOSFODNN7", "EXAMPLE")
    secret = j("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY")
    pw = r(ALNUM, 14)
    text = (f"Deploy notes.\naws_access_key_id = {aws}\naws_secret_access_key = {secret}\n"
            f"DATABASE_URL=postgres://app:{pw}@db:5432/app\nThen run make.\n")
    masked = mask(text)
    assert aws not in masked and secret not in masked and pw not in masked
    assert masked == ("Deploy notes.\naws_access_key_id = [redacted aws-access-key-id]\n"
                      "aws_secret_access_key = [redacted aws-secret-access-key]\n"
                      "DATABASE_URL=postgres://app:[redacted password-in-a-url]@db:5432/app\nThen run make.\n")
    assert scan(masked) == []
    assert mask("Nothing secret here, just the password policy.") == "Nothing secret here, just the password policy."


def test_mask_covers_a_whole_private_key_block() -> None:
    block = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + r(B64, 70) + "\n-----END OPENSSH PRIVATE KEY-----"
    assert mask(f"key:\n{block}\nafter") == "key:\n[redacted private-key-block]\nafter"


def test_mask_leaves_no_flagged_value_in_the_corpus() -> None:
    for kind, way, text in CREDENTIALS:
        masked = mask(text)
        assert "[redacted " in masked and scan(masked) == [], (kind, way, masked[:80])
    for text in NEAR_MISSES:
        if not scan(text):
            assert mask(text) == text


def test_hostile_lines_scan_in_linear_time() -> None:
    import time

    for text in ("a:" * 32_000, "Note: " * 10_000, "x=" * 32_000, "curl -u " * 8_000, "password is " * 5_000):
        start = time.perf_counter()
        scan(text)
        mask(text)
        assert time.perf_counter() - start < 2.0, text[:20]


# The held-out part: credentials of vendors' documented formats, in the files and commands those
# vendors' docs put them in, written before the rules of issue 32 and chosen without them. It has its
# own RNG so the training part above keeps its values. Its rate is reported on its own: 31 of 53 with
# the rules it was written against, 48 with issue 32's. The floor is the latter, so a change that
# loses a held-out find fails; what it still misses is in docs/reliability.md's limits.
HELD_RNG = random.Random(20261204)
HELD_OUT_FLOOR = 48 / 53


def h(alphabet: str, n: int) -> str:
    return "".join(HELD_RNG.choice(alphabet) for _ in range(n))


def held_out() -> list[tuple[str, str, str]]:
    """(family, shape, text) of credentials in vendors' documented formats."""
    up_alnum, b32 = UPPER + DIGITS, LOWER + "234567"
    sentry_claims = base64.b64encode(b'{"iat":1733300000.0,"url":"https://sentry.io","region_url":'
                                     b'"https://us.sentry.io","org":"acme"}').decode().rstrip("=")
    ops_claims = base64.b64encode(('{"signInAddress":"my.1password.com","userAuth":{"method":"SRPg-4096",'
                                   f'"alg":"PBES2g-HS256","iterations":650000,"salt":"{h(URLSAFE, 22)}"}},'
                                   f'"email":"{h(LOWER, 12)}@1passwordserviceaccounts.com",'
                                   f'"srpX":"{h(HEX, 64)}","muk":{{"alg":"A256GCM","ext":true,'
                                   f'"k":"{h(URLSAFE, 43)}","key_ops":["encrypt","decrypt"],"kty":"oct",'
                                   '"kid":"mp"},"secretKey":"A3-' + h(up_alnum, 6) + "-" + h(up_alnum, 11)
                                   + '","throttleSecret":{"seed":"' + h(HEX, 64) + '"}}').encode()).decode()
    docker_auth = base64.b64encode(f"ci-bot:ghp_{h(ALNUM, 36)}".encode()).decode()
    ado_pat = h(b32, 52)
    return [
        # Doppler: dp.<type>.<40-44 alphanumerics>, a service token may name its config.
        ("doppler", "env", f"DOPPLER_TOKEN=dp.st.prd.{h(ALNUM, 43)}"),
        ("doppler", "cli", f"doppler run --token dp.st.dev.{h(ALNUM, 43)} -- npm start"),
        ("doppler", "yaml", f"setup:\n  project: billing\n  token: dp.pt.{h(ALNUM, 43)}"),
        # Dynatrace: dt0c01.<24 public>.<64 secret>, upper case and digits.
        ("dynatrace", "url", f"https://abc12345.live.dynatrace.com/api/v1/deployment/installer/agent/unix/paas/latest"
                             f"?Api-Token=dt0c01.{h(up_alnum, 24)}.{h(up_alnum, 64)}"),
        ("dynatrace", "header", f"Authorization: Api-Token dt0c01.{h(up_alnum, 24)}.{h(up_alnum, 64)}"),
        ("dynatrace", "helm", f"--set oneagent.apiToken=dt0c01.{h(up_alnum, 24)}.{h(up_alnum, 64)}"),
        # Tailscale: tskey-<type>-<id>CNTRL-<secret>.
        ("tailscale", "cli", f"sudo tailscale up --authkey=tskey-auth-k{h(ALNUM, 10)}CNTRL-{h(ALNUM, 33)}"),
        ("tailscale", "compose", f"environment:\n  - TS_AUTHKEY=tskey-auth-k{h(ALNUM, 10)}CNTRL-{h(ALNUM, 33)}"),
        ("tailscale", "prose", f"The API key for the tailnet is tskey-api-k{h(ALNUM, 10)}CNTRL-{h(ALNUM, 33)}."),
        # Sourcegraph: sgp_<16 hex instance>_<40 hex>, sent as `Authorization: token ...`.
        ("sourcegraph", "header", f"curl -H 'Authorization: token sgp_{h(HEX, 16)}_{h(HEX, 40)}' "
                                  "https://sourcegraph.com/.api/graphql"),
        ("sourcegraph", "env", f"SRC_ACCESS_TOKEN=sgp_{h(HEX, 16)}_{h(HEX, 40)}"),
        ("sourcegraph", "prose", f"src works with sgp_{h(HEX, 16)}_{h(HEX, 40)} on the company instance"),
        # Postman: PMAK-<24 hex>-<34 hex>.
        ("postman", "header", f"X-Api-Key: PMAK-{h(HEX, 24)}-{h(HEX, 34)}"),
        ("postman", "cli", f"postman login --with-api-key PMAK-{h(HEX, 24)}-{h(HEX, 34)}"),
        ("postman", "ci", f"- run: newman run collection.json --env-var key=PMAK-{h(HEX, 24)}-{h(HEX, 34)}"),
        # Pulumi: pul-<40 hex>, also in ~/.pulumi/credentials.json.
        ("pulumi", "env", f"PULUMI_ACCESS_TOKEN=pul-{h(HEX, 40)}"),
        ("pulumi", "json", f'{{"current": "https://api.pulumi.com", "accessTokens": '
                           f'{{"https://api.pulumi.com": "pul-{h(HEX, 40)}"}}}}'),
        ("pulumi", "prose", f"CI logs in with pul-{h(HEX, 40)} (the org's machine user)."),
        # PlanetScale: pscale_tkn_ / pscale_pw_ / pscale_oauth_ and 43 characters.
        ("planetscale", "env", f"PLANETSCALE_SERVICE_TOKEN=pscale_tkn_{h(URLSAFE, 43)}"),
        ("planetscale", "url", f"mysql://{h(LOWER, 12)}:pscale_pw_{h(URLSAFE, 43)}@aws.connect.psdb.cloud/app"),
        ("planetscale", "prose", f"the branch password pscale_pw_{h(URLSAFE, 43)} only reads main"),
        # Sentry: sntrys_<base64 claims>_<43> (org tokens), sntryu_<64 hex> (user tokens).
        ("sentry", "env", f"SENTRY_AUTH_TOKEN=sntrys_{sentry_claims}_{h(B64, 43)}"),
        ("sentry", "ini", f"[auth]\ntoken=sntryu_{h(HEX, 64)}"),
        ("sentry", "cli", f"sentry-cli --auth-token sntryu_{h(HEX, 64)} releases new 1.4.2"),
        # Square: EAAA<60> access tokens, sq0csp-<43> application secrets, sq0atp-<22> older tokens.
        ("square", "header", f"Authorization: Bearer EAAA{h(URLSAFE, 60)}"),
        ("square", "json", f'{{"application_id": "sq0idp-{h(URLSAFE, 22)}", "application_secret": "sq0csp-{h(URLSAFE, 43)}"}}'),
        ("square", "yaml", f"square:\n  environment: production\n  credential: sq0atp-{h(URLSAFE, 22)}"),
        # Heroku: HRKU-<60> keys; and the ~/.netrc that `heroku login` writes.
        ("heroku", "env", f"HEROKU_API_KEY=HRKU-AA{h(URLSAFE, 58)}"),
        ("heroku", "netrc", f"machine api.heroku.com\n  login ada@example.com\n  password HRKU-AA{h(URLSAFE, 58)}"),
        ("heroku", "netrc-uuid", f"machine git.heroku.com login ada@example.com password {uuid.UUID(int=HELD_RNG.getrandbits(128))}"),
        # Buildkite: bkua_<40 hex>.
        ("buildkite", "env", f"BUILDKITE_API_TOKEN=bkua_{h(HEX, 40)}"),
        ("buildkite", "header", f"curl -H 'Authorization: Bearer bkua_{h(HEX, 40)}' https://api.buildkite.com/v2/user"),
        ("buildkite", "prose", f"The pipeline bot uses bkua_{h(HEX, 40)} for the GraphQL API."),
        # Supabase: sbp_<40 hex> access tokens, service-role keys that are JWTs.
        ("supabase", "cli", f"supabase login --token sbp_{h(HEX, 40)}"),
        ("supabase", "env", f"SUPABASE_ACCESS_TOKEN=sbp_{h(HEX, 40)}"),
        ("supabase", "jwt", f"const supabase = createClient(url, '{jwt_held('service_role')}')"),
        # Azure DevOps: 52 characters of lower-case base32, in git URLs and `az devops login`.
        ("azure-devops", "url", f"git clone https://build:{ado_pat}@dev.azure.com/acme/billing/_git/api"),
        ("azure-devops", "env", f"AZURE_DEVOPS_EXT_PAT={h(b32, 52)}"),
        ("azure-devops", "npmrc", "//pkgs.dev.azure.com/acme/_packaging/feed/npm/registry/:_password="
                                  + base64.b64encode(h(b32, 52).encode()).decode()),
        # Alibaba Cloud: LTAI<20> key ids and 30-character secrets.
        ("alibaba", "cli", f"aliyun configure set --access-key-id LTAI{h(ALNUM, 20)} --access-key-secret {h(ALNUM, 30)}"),
        ("alibaba", "env", f"ALIBABA_CLOUD_ACCESS_KEY_SECRET={h(ALNUM, 30)}"),
        ("alibaba", "prose", f"the OSS uploader signs with LTAI{h(ALNUM, 20)}"),
        # Brevo (Sendinblue): xkeysib-<64 hex>-<16>.
        ("brevo", "header", f"api-key: xkeysib-{h(HEX, 64)}-{h(ALNUM, 16)}"),
        ("brevo", "env", f"BREVO_API_KEY=xkeysib-{h(HEX, 64)}-{h(ALNUM, 16)}"),
        ("brevo", "prose", f"transactional mail goes out with xkeysib-{h(HEX, 64)}-{h(ALNUM, 16)}"),
        # HubSpot private apps: pat-<region>-<uuid>.
        ("hubspot", "header", f"Authorization: Bearer pat-na1-{uuid.UUID(int=HELD_RNG.getrandbits(128))}"),
        ("hubspot", "env", f"HUBSPOT_ACCESS_TOKEN=pat-eu1-{uuid.UUID(int=HELD_RNG.getrandbits(128))}"),
        ("hubspot", "prose", f"the CRM sync runs as pat-na1-{uuid.UUID(int=HELD_RNG.getrandbits(128))}"),
        # 1Password service accounts: ops_ and base64 of a JSON document.
        ("1password", "env", f"OP_SERVICE_ACCOUNT_TOKEN=ops_{ops_claims}"),
        # Tool config files that hold a credential in their own syntax.
        ("docker-config", "json", f'{{"auths": {{"ghcr.io": {{"auth": "{docker_auth}"}}}}}}'),
        ("git-credentials", "file", f"https://ci-bot:ghp_{h(ALNUM, 36)}@github.com"),
        ("netrc", "file", f"machine github.com login ci-bot password {h(ALNUM, 24)}"),
        ("pip-conf", "ini", f"[global]\nextra-index-url = https://__token__:glpat-{h(URLSAFE, 20)}@gitlab.example.com"
                            "/api/v4/projects/42/packages/pypi/simple"),
    ]


def jwt_held(role: str) -> str:
    def seg(obj: str) -> str:
        return base64.urlsafe_b64encode(obj.encode()).decode().rstrip("=")
    return ".".join([seg('{"alg":"HS256","typ":"JWT"}'), seg(f'{{"iss":"supabase","ref":"{h(LOWER, 20)}",'
                     f'"role":"{role}","iat":1700000000,"exp":2015576000}}'), h(URLSAFE, 43)])


def held_out_near_misses() -> list[str]:
    """Text from the same vendors' docs and tool files that holds no credential."""
    up_alnum = UPPER + DIGITS
    return [
        "Doppler service tokens start with dp.st. and personal ones with dp.pt.",
        f"token identifier dt0c01.{h(up_alnum, 24)} (the public part, safe to log)",
        "sudo tailscale up --authkey=tskey-auth-xxxxx",
        "Sourcegraph access tokens start with sgp_; revoke a leaked one in settings.",
        "postman login --with-api-key $POSTMAN_API_KEY",
        "PULUMI_ACCESS_TOKEN=${{ secrets.PULUMI_ACCESS_TOKEN }}",
        "machine api.heroku.com\n  login ada@example.com",
        "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
        '{"credsStore": "desktop", "auths": {"ghcr.io": {}}}',
        "extra-index-url = https://pypi.org/simple",
        f"sentry dsn: https://{h(HEX, 32)}@o{h(DIGITS, 6)}.ingest.sentry.io/{h(DIGITS, 7)}",
        f"STRIPE_PUBLISHABLE_KEY=pk_live_{h(ALNUM, 24)}",
        f"certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t{h(B64, 60)}",
        f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{h(B64, 43)} ada@laptop",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE" + h(B64, 60) + "\n-----END PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE" + h(B64, 60) + "\n-----END CERTIFICATE-----",
        f"github.com/stretchr/testify v1.9.0 h1:{h(B64, 43)}=",
        f'checksum = "{h(HEX, 64)}"',
        f'"integrity": "sha512-{h(B64, 86)}=="',
        f"  resolved \"https://registry.yarnpkg.com/lodash/-/lodash-4.17.21.tgz#{h(HEX, 40)}\"",
        "color: #1f2937; background: #f9fafb; border-color: #e5e7eb;",
        f"    expect(decode('{base64.b64encode(bytes(HELD_RNG.getrandbits(8) for _ in range(30))).decode()}')).toEqual(payload)",
        f"request_id={uuid.UUID(int=HELD_RNG.getrandbits(128))} trace_id={h(HEX, 32)}",
        "def test_refresh_token_rotation_keeps_the_session_alive_after_expiry_of_the_access_token():",
        "https://dev.azure.com/acme/billing/_git/api?path=/src&version=GBmain",
        "aliyun configure set --access-key-id $ALIYUN_AK --access-key-secret $ALIYUN_SK",
        "Authorization: Bearer pat-na1-<your private app token>",
        "OP_SERVICE_ACCOUNT_TOKEN=op://vault/item/credential",
        f"commit {h(HEX, 40)}\nMerge: {h(HEX, 7)} {h(HEX, 7)}",
        "Authorization: Api-Token {your-token}",
    ]


HELD_OUT = held_out()
HELD_OUT_NEAR_MISSES = held_out_near_misses()


def test_held_out_corpus_rates_are_reported_and_keep_their_floor() -> None:
    missed = [(family, shape) for family, shape, text in HELD_OUT if not scan(text)]
    flagged = [(text[:50], [f.kind for f in scan(text)]) for text in HELD_OUT_NEAR_MISSES if scan(text)]
    catch = 1 - len(missed) / len(HELD_OUT)
    print(f"\nheld-out corpus: {len(HELD_OUT)} credentials of {len({f for f, _, _ in HELD_OUT})} families, "
          f"caught {catch:.1%} ({len(HELD_OUT) - len(missed)}); {len(HELD_OUT_NEAR_MISSES)} near misses, "
          f"flagged {len(flagged)}")
    for family, shape in missed:
        print(f"  held-out missed: {family} written as {shape}")
    for text, found in flagged:
        print(f"  held-out flagged: {text!r} as {found}")
    assert len(HELD_OUT) >= 40
    assert catch >= HELD_OUT_FLOOR - 1e-9, missed
