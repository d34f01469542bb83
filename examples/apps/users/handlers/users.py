"""Handlers for changes to the users table."""

import os


def on_change(event):
    user = event.get("new_image") or {}
    verb = "signed up" if event.get("event_name") == "INSERT" else "updated"
    print(
        f"user {user.get('id', '?')} {verb}: email={user.get('email', '-')}"
        f" (attempt {os.environ.get('RELAY_ATTEMPT', '1')})"
    )


def on_deactivate(event):
    user = event.get("new_image") or {}
    print(f"user {user.get('id', '?')} deactivated at {user.get('deleted_at')}")
