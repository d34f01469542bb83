"""The nightly digest, run by the nightly-digest schedule."""

import os


def run(occurrence):
    payload = occurrence.get("payload") or {}
    print(
        f"{payload.get('kind', 'ad-hoc')} digest for {occurrence.get('scheduled_at', 'now')}:"
        f" top {payload.get('top', 10)} users, from {os.environ.get('DIGEST_SENDER', '-')}"
    )
