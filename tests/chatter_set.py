"""The chatter set: prompts that want nothing (acknowledgements, thanks, meta-requests about the
conversation, small talk) and coding prompts with the memory each wants, some of them chatter
with a project thing in it ("thanks, now the tax rounding"). Written for issue 33 before any rule
that reads it. benchmarks/bench_chatter.py measures the prompt hook on it against a store holding
the memories of tests/hook_eval.py, EXTRA_MEMORIES and 2,000 or more conversational turns
(LoCoMo, loaded at run time: noise, never tuned on); tests/adapters/test_hook_selection.py holds a few
of each kind through the real hook."""

from __future__ import annotations

# Coding memories besides tests/hook_eval.py's. key: (type, title, content)
EXTRA_MEMORIES: dict[str, tuple[str, str, str]] = {
    "tax-rounding": ("fact", "Tax is rounded half-up per invoice line",
                     "VAT is computed per line in src/billing/tax.py and rounded half-up to the cent before "
                     "summing; rounding the total instead was a cent off on long invoices."),
    "retry-backoff": ("fact", "Outbound HTTP calls retry with exponential backoff",
                      "The client in lib/http.py retries three times with exponential backoff and jitter; a POST "
                      "is retried only with an idempotency key."),
    "csv-import": ("episode", "The CSV importer choked on a byte order mark",
                   "Customer CSV uploads saved from Excel start with a UTF-8 BOM, which ended up in the first "
                   "header; the importer now opens files as utf-8-sig."),
    "seed-data": ("fact", "Local seed data comes from make seed",
                  "make seed loads fixtures/dev.json into the local database; never point it at staging."),
    "cors": ("decision", "CORS allows only our own domains",
             "The API's CORS allow-list is app.example.com and admin.example.com; wildcard origins were "
             "removed after the security audit."),
}

# Prompts that want nothing, whatever the store holds.
WANT_NOTHING: list[str] = [
    # acknowledgements
    "ok", "okay cool", "got it", "sounds good", "yep", "perfect, that's exactly it", "alright then",
    "makes sense now", "great, go for it", "yes do that", "sure, continue", "lgtm",
    # thanks
    "thanks!", "thank you, that was really helpful", "cheers mate", "thanks a lot for your patience",
    "much appreciated",
    # meta-requests about the conversation
    "explain what you just did", "can you summarize the changes you made?", "what did you change?",
    "repeat that please", "say it more simply", "why did you do it that way?", "show me the diff again",
    "undo that", "wait, stop", "keep going", "what were we doing?",
    "can you explain your last answer step by step",
    # small talk
    "how was your weekend?", "it's raining again here, typical", "I'm off to grab a coffee, back in ten",
    "I'm so tired today", "happy friday!", "did you watch the game last night?",
    "my cat just walked across the keyboard lol", "good night, talk tomorrow", "have a nice evening",
    "what's your favourite movie?",
]

# (prompt, key of the memory it wants: tests/hook_eval.py's MEMORIES or EXTRA_MEMORIES)
CODING: list[tuple[str, str]] = [
    ("thanks, now the tax rounding", "tax-rounding"),
    ("great, next: the invoice total is off by a cent", "tax-rounding"),
    ("cool. how do I install a package in the web workspace?", "pnpm"),
    ("ok now add a column for the discount code", "alembic"),
    ("perfect, now the session expiry in redis", "redis-ttl"),
    ("thanks! can you format the changed python files", "black"),
    ("that worked. now how do I ship it to production", "deploy"),
    ("nice, put the new checkout behind a flag", "feature-flags"),
    ("which timezone should the paid_at timestamp be in", "timezone"),
    ("stripe is sending the same webhook twice, will that double bill?", "stripe-webhook"),
    ("how long until the jwt expires", "auth-jwt"),
    ("sorry, one more thing: add logging to the worker", "logging"),
    ("the customer gets a 429 from the api", "rate-limit"),
    ("where do shared packages go in this monorepo", "monorepo"),
    ("the product search is really slow", "search"),
    ("make the CSV import accept files saved from Excel", "csv-import"),
    ("the uploaded csv has weird characters at the start of the first header", "csv-import"),
    ("load some test data into my local database", "seed-data"),
    ("the frontend on app.example.com gets a CORS error", "cors"),
    ("the http client should retry when the carrier api times out", "retry-backoff"),
    ("alright, let's do the pdf export for large reports now", "pdf-export"),
    ("ty. next the thumbnails for uploads", "images"),
    ("good job. which postgres do we run in prod", "postgres-version"),
    ("thanks, now write the e2e test for signup", "e2e"),
    ("ok, and send the receipt email after payment", "email"),
    ("we need to delete a user's data for a GDPR request", "gdpr"),
    ("can you bump react to the latest version", "dependency-updates"),
    ("awesome. now make the mobile app show the new screen", "mobile"),
    ("should I use floats for the price field", "money"),
    ("I want a GraphQL API for the partner integration", "graphql"),
    ("test_checkout_flow is red again", "flaky-test"),
    ("thanks, and where are the grafana dashboards", "metrics"),
    ("lovely, now style the settings page", "css"),
    ("how do I fetch the orders in a react component", "react-query"),
    ("great work. now the docker build for the cluster", "docker-arm"),
    ("where do I put the secret for the new email provider", "secrets"),
]

# Written after the rules of adapters/hooks/relevance.py and never tuned on: how far the word lists
# carry to prompts they were not written against. benchmarks/bench_chatter.py reports them apart.
HELD_OUT_WANT_NOTHING: list[str] = [
    "cheers, that did the trick", "brilliant, thank you", "nice one", "hmm, interesting",
    "can you go over that once more?", "what was the last thing you ran?", "summarise what we did today",
    "tell me what you changed and why", "I don't follow, can you clarify?", "good morning, ready when you are",
    "back from lunch", "ugh, mondays", "it's so hot in the office today", "my internet is slow today",
    "have a great weekend", "lol that's a good one", "sorry, I was away for a bit", "never mind, forget it",
    "looks good to me, ship it", "awesome work today, thanks",
]
HELD_OUT_CODING: list[tuple[str, str]] = [
    ("thanks. now, how are refunds rounded on an invoice line?", "tax-rounding"),
    ("great, what's the retry policy for outgoing requests", "retry-backoff"),
    ("cool, the excel export someone uploaded has a strange first column name", "csv-import"),
    ("ok so how do I get data into my dev database", "seed-data"),
    ("nice. the admin app on admin.example.com is blocked by the browser", "cors"),
    ("perfect. which package manager for the web workspace?", "pnpm"),
    ("thanks, what's the redis session lifetime", "redis-ttl"),
    ("sounds good. where are translations synced to", "i18n"),
    ("alright, the webhook from stripe fired twice again", "stripe-webhook"),
    ("cheers. what do we run browser tests with", "e2e"),
    ("great, how are background jobs queued", "celery"),
    ("got it. how many approvals does a pull request need", "code-review"),
]

# A second held-out set, written for the rework of the floor before any rule changed and committed
# on its own: prompts as people type them, not read against the word lists. Never tuned on.
SECOND_HELD_OUT_WANT_NOTHING: list[str] = [
    "ok do it", "why did you do that?", "lol nice", "can you explain what you just changed", "go ahead",
    "yes, the second option", "no, the other one", "that's wrong, try again", "wait what",
    "could you walk me through your reasoning?", "what do you mean by that?", "give me a shorter version",
    "put that in a bullet list", "are you sure?", "how confident are you about this?",
    "what files did you touch?", "please revert your last edit", "stop, that's not what I asked",
    "let me think about it for a minute", "brb", "ok I'm back", "how's it going?",
    "what are you up to this weekend?", "ugh, long day", "I need a vacation", "the kids are finally asleep",
    "just had the best pizza", "merry christmas!", "you're a lifesaver", "amazing, you nailed it",
    "thank you so so much!!", "fair enough", "hmm ok, interesting approach", "yeah that works for me",
    "can you do the same for the rest?", "what was I asking about before?", "great, what's next?", "nope",
    "I'm going to call it a day, see you", "do you ever get bored?", "tell me a joke", "you're doing great",
]
SECOND_HELD_OUT_CODING: list[tuple[str, str]] = [
    ("ok thanks, now fix the tax rounding", "tax-rounding"),
    ("sounds good, and the retry backoff?", "retry-backoff"),
    ("lol nice, now the migration for the new orders table", "alembic"),
    ("ok do it, and format the python the way we usually do", "black"),
    ("why is the refresh token stored httponly?", "auth-jwt"),
    ("can you explain how the feature flag config works", "feature-flags"),
    ("cheers. which package manager do we use for the frontend workspace", "pnpm"),
    ("perfect. tag a release and deploy it", "deploy"),
    ("yep, and which broker do the celery workers use?", "celery"),
    ("the thumbnail lambda didn't fire for the last upload", "images"),
    ("great. who is on call this week?", "on-call"),
    ("thanks! what's our convention for commit messages?", "commit-style"),
    ("nice, how do I run the slow integration tests", "pytest-slow"),
    ("should the new endpoint be /v3 in the path or a version header?", "api-versioning"),
    ("ok, add a french translation for the checkout button", "i18n"),
    ("hmm, the amount comes out as 19.999999 dollars", "money"),
    ("got it. can I cast to any in this typescript file?", "typescript-strict"),
    ("users still get the old js bundle from the cdn after a deploy", "cache-busting"),
    ("how do staff log into the django admin", "django-admin"),
    ("great, now dedupe the stripe events in the webhook handler", "stripe-webhook"),
    ("what's the max number of requests per minute on the public api", "rate-limit"),
    ("should my feature branch live for a few weeks?", "branching"),
]
