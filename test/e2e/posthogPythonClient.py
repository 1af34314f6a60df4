"""Drives the real posthog-python 7.x through its public calls against a hogstream server.

Run by test/e2e/posthogPython.integration.test.ts with one JSON argument:
{"host", "token", "personal_key", "run" (a prefix for distinct ids), "flag_ids" (ids for the
local/remote comparison)}. Prints one JSON object on its last line: what each call answered and
every error the SDK reported (its on_error callback and its logger), so the test asserts on them.
"""

import json
import logging
import sys
import time
import warnings

import posthog
from posthog import Posthog

# The per-flag calls are deprecated in 7.x in favour of evaluate_flags, yet public: both are driven.
warnings.simplefilter("ignore", DeprecationWarning)
cfg = json.loads(sys.argv[1])
run = cfg["run"]
errors = []


class Collect(logging.Handler):
    def emit(self, record):
        errors.append(f"log {record.levelname}: {record.getMessage()}")


logging.getLogger("posthog").addHandler(Collect(level=logging.WARNING))


def on_error(error, batch):
    errors.append(f"on_error: {error!r} ({len(batch)} events)")


def client(**extra):
    return Posthog(
        cfg["token"],
        host=cfg["host"],
        on_error=on_error,
        max_retries=0,
        flush_at=1000,
        flush_interval=0.2,
        feature_flags_request_timeout_seconds=10,
        **extra,
    )


out = {"version": posthog.VERSION, "sent": {}}

# Capture, the same calls in both wire formats: /batch/ (v0) and /i/v1/analytics/events (v1).
for mode in ("v0", "v1"):
    c = client(capture_mode=mode, capture_compression="gzip" if mode == "v1" else None, gzip=True)
    anon, user, alias_of = f"{run}-{mode}-anon", f"{run}-{mode}-user", f"{run}-{mode}-alias"
    sent = {
        "pageview": c.capture(
            "$pageview",
            distinct_id=anon,
            properties={"$current_url": f"https://example.com/{mode}", "$session_id": f"s-{mode}"},
        ),
        "identify": c.capture(
            "$identify",
            distinct_id=user,
            properties={"$anon_distinct_id": anon, "$set": {"email": f"{user}@example.com"}},
        ),
        "set": c.set(distinct_id=user, properties={"plan": "pro", "mode": mode}),
        "set_once": c.set_once(distinct_id=user, properties={"first_mode": mode, "plan": "ignored"}),
        "alias": c.alias(previous_id=alias_of, distinct_id=user),
        "group_identify": c.group_identify(
            "company", f"{run}-acme", {"name": "Acme", "employees": 42}, distinct_id=user
        ),
        "grouped": c.capture(
            "order placed",
            distinct_id=user,
            properties={"amount": 12.5, "items": ["a", "b"]},
            groups={"company": f"{run}-acme"},
        ),
    }
    if mode == "v0":
        try:
            raise ValueError("python sdk test exception")
        except ValueError as e:
            sent["exception"] = c.capture_exception(e, distinct_id=user)
    c.flush()
    c.shutdown()
    out["sent"][mode] = {"anon": anon, "user": user, "alias": alias_of, "uuids": sent}

# Flags: remote (/flags) with the project key only; local with the personal key.
remote = client()
local = client(secret_key=cfg["personal_key"], poll_interval=300)
local.load_feature_flags()
who = f"{run}-v0-user"
person = {"email": f"{who}@example.com"}
# /flags reads the persons read model, which catches up after capture has acknowledged the
# identify: wait (bounded) until it knows the person's email before comparing remote with local.
deadline = time.monotonic() + 20
while time.monotonic() < deadline and remote.get_feature_flag(
    "py-person", who, send_feature_flag_events=False
) is not True:
    time.sleep(0.2)
out["remote"] = {
    "feature_enabled": remote.feature_enabled("py-on", who),
    "get_feature_flag": remote.get_feature_flag("py-variant", who),
    "payload": remote.get_feature_flag_payload("py-variant", who),
    "person_flag": remote.get_feature_flag("py-person", who),
    "all_flags": remote.get_all_flags(who),
    "all_flags_and_payloads": remote.get_all_flags_and_payloads(who),
}
result = remote.get_feature_flag_result("py-on", who)
out["remote"]["result"] = None if result is None else {"enabled": result.enabled, "payload": result.payload}
snapshot = remote.evaluate_flags(who)
out["remote"]["evaluate_flags"] = {k: snapshot.get_flag(k) for k in sorted(snapshot.keys)}
out["local"] = {
    "feature_enabled": local.feature_enabled("py-on", who, only_evaluate_locally=True),
    "get_feature_flag": local.get_feature_flag("py-variant", who, only_evaluate_locally=True),
    "payload": local.get_feature_flag_payload("py-variant", who, only_evaluate_locally=True),
    "person_flag": local.get_feature_flag(
        "py-person", who, person_properties=person, only_evaluate_locally=True
    ),
    "all_flags": local.get_all_flags(who, person_properties=person, only_evaluate_locally=True),
    "all_flags_and_payloads": local.get_all_flags_and_payloads(
        who, person_properties=person, only_evaluate_locally=True
    ),
    "remote_config_payload": local.get_remote_config_payload("py-config"),
    "remote_config_missing": local.get_remote_config_payload("py-no-such-flag"),
}
out["agreement"] = {
    i: [
        remote.get_feature_flag("py-half", i, send_feature_flag_events=False),
        local.get_feature_flag("py-half", i, only_evaluate_locally=True, send_feature_flag_events=False),
    ]
    for i in cfg["flag_ids"]
}
remote.shutdown()
local.shutdown()
out["errors"] = errors
print(json.dumps(out, default=str))
