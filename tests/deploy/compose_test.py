#!/usr/bin/env python3
"""deploy/compose.yaml brought up for real with Debian's docker-compose (docs/deployment.md
"Docker Compose"): Redis with AOF, three sandboxed workers, the console. 2,000 events are
published, one in ten failing its first attempt; a worker is `docker kill`ed mid-run and started
again. Then every event has been handled, nothing is pending, the DLQ is empty, and the events
that ran more than once (the kill's duplicates: at-least-once) are printed.
"""
import collections
import json
import os
import re
import shutil
import tempfile
import time
import urllib.error
import urllib.request

from deploylib import (DOCKER, IMAGE, SOURCE, check, docker, finish, free_port, run,
                       sweep_earlier_runs, wait_for, write_app)

PROJECT = f"relaycompose{os.getpid()}"
EVENTS = 2000
TOKEN = "compose-test-token"
HANDLER = r"""#!/bin/sh
# Fails the first attempt of events marked fail_once; otherwise reports the run.
event=$(cat)
case "$event" in
  *'"fail_once":true'*)
    if [ "$RELAY_ATTEMPT" = 1 ]; then echo "failing $RELAY_MESSAGE_ID"; exit 3; fi ;;
esac
sleep 0.02
echo "done $RELAY_MESSAGE_ID attempt $RELAY_ATTEMPT"
"""


def console_get(port, path, token=None):
    """(status, body) of GET path from the console published on the host's loopback port, or
    None while nothing answers there."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except OSError:
        return None


def compose(*args, env, timeout=900, check_rc=True):
    return run(["docker-compose", "-p", PROJECT, "-f", str(SOURCE / "deploy" / "compose.yaml"),
                *args], env=env, cwd=SOURCE / "deploy", timeout=timeout, check_rc=check_rc)


def redis_cli(env, *args):
    return compose("exec", "-T", "redis", "redis-cli", *args, env=env).stdout.strip()


def main():
    sweep_earlier_runs()
    redis_image = run(["bash", "-c", f"source {SOURCE}/scripts/lib/common.sh; "
                       f"source {SOURCE}/scripts/lib/dockerd.sh; "
                       f"source {SOURCE}/scripts/lib/rootfs.sh; relay_redis_image"]).stdout.strip()
    apps = tempfile.mkdtemp(prefix="relay-compose-apps.")
    os.chmod(apps, 0o755)
    write_app(apps, "work",
              "runtime: exec\nevents:\n  - handler: bin/handle.sh\n    pattern: {kind: [job]}\n"
              "    retries: 2\n", {"bin/handle.sh": (HANDLER, 0o755)})
    # The console on a free host port: 9465 may be another console's (a developer's, or a run
    # of this test that was killed and whose services the daemon restarted).
    console_port = free_port()
    env = dict(os.environ, RELAY_IMAGE=IMAGE, REDIS_IMAGE=redis_image, RELAY_APPS_DIR=apps,
               RELAY_CONSOLE_TOKEN=TOKEN, RELAY_CONSOLE_PORT=str(console_port),
               COMPOSE_INTERACTIVE_NO_CLI="1")
    compose("down", "-v", "--remove-orphans", env=env, check_rc=False)
    try:
        started = time.monotonic()
        compose("up", "-d", env=env)
        workers = [f"{PROJECT}_worker-{i}_1" for i in (1, 2, 3)]
        logs = lambda name: docker("logs", name, check_rc=False).stdout + docker(
            "logs", name, check_rc=False).stderr
        check(wait_for(lambda: all("relay started" in logs(w) for w in workers), 180, 1),
              f"three workers started ({time.monotonic() - started:.0f} s after up)")
        check(wait_for(lambda: "console" in logs(f"{PROJECT}_console_1").lower(), 60, 1),
              "the console runs")
        # Through the published port: the API refuses a request without the token and answers
        # one with it from the compose project's Redis.
        refused = wait_for(lambda: console_get(console_port, "/api/overview"), 60, 1)
        check(refused and refused[0] == 401,
              f"the console on 127.0.0.1:{console_port} refuses a request without the token: "
              f"{refused}")
        answered = console_get(console_port, "/api/overview", TOKEN)
        overview = json.loads(answered[1]) if answered and answered[0] == 200 else {}
        check(overview.get("stream", {}).get("name") == "events",
              f"the console answers with the token: {answered and answered[1][:120]}")
        # PID 1 shed CAP_SYS_ADMIN (bit 21) before it started the worker: no relay process in
        # the container's user namespace holds it (the worker's cgroup view is a user namespace
        # of its own, where its capabilities count for nothing outside).
        status = docker("exec", workers[0], "sh", "-c",
                        "for p in /proc/[0-9]*; do grep -q '^Name:.relay$' $p/status 2>/dev/null && "
                        "echo $(readlink $p/ns/user) $(grep '^CapBnd:' $p/status); done").stdout
        rows = [line.split() for line in status.splitlines() if "CapBnd:" in line]
        init_ns = docker("exec", workers[0], "readlink", "/proc/1/ns/user").stdout.strip()
        outer = [int(row[-1], 16) for row in rows if row[0] == init_ns]
        check(len(rows) >= 2 and outer and all(not (b >> 21) & 1 for b in outer),
              f"no relay process of the container's user namespace holds CAP_SYS_ADMIN: {rows}")
        appendonly = redis_cli(env, "CONFIG", "GET", "appendonly").split()
        check(appendonly[-1:] == ["yes"], f"Redis keeps an append-only file: {appendonly}")

        lines = "".join(json.dumps({"kind": "job", "n": n, "fail_once": n % 10 == 0},
                                   separators=(",", ":")) + "\n"
                        for n in range(EVENTS))
        published = run([DOCKER, "exec", "-i", workers[0], "relay",
                         "publish", "--lines"], input=lines).stdout.split()
        check(len(published) == EVENTS, f"{len(published)} events published")

        def done_runs():
            runs = collections.Counter()
            for worker in workers:
                for match in re.finditer(r"\] done (\S+) attempt", logs(worker)):
                    runs[match.group(1)] += 1
            return runs

        # Kill a worker while events are being handled, then start it again.
        wait_for(lambda: sum(done_runs().values()) >= EVENTS // 4, 300, 0.5)
        docker("kill", workers[1])
        killed_at = sum(done_runs().values())
        docker("start", workers[1])
        check(killed_at < EVENTS, f"worker-2 killed with {killed_at} of {EVENTS} runs done, then started")

        # Failed first attempts come back after their 1 min backoff; the killed worker's
        # in-flight messages after the 1 min reclaim.
        wait_for(lambda: len(done_runs()) >= EVENTS, 600, 2)
        wait_for(lambda: redis_cli(env, "XPENDING", "events", "relay").split("\n")[0] == "0", 180, 2)
        runs = done_runs()
        missing = [i for i in published if runs[i] == 0]
        check(not missing, f"every event handled ({len(runs)} of {EVENTS}); missing: {missing[:10]}")
        pending = redis_cli(env, "XPENDING", "events", "relay").split("\n")[0]
        check(pending == "0", f"nothing pending ({pending})")
        dlq = redis_cli(env, "XLEN", "relay:events:dlq")
        check(dlq == "0", f"no DLQ entry ({dlq})")
        failed = sum(len(re.findall(r"\] failing ", logs(w))) for w in workers)
        # One in ten failed its first attempt (less the few the kill interrupted mid-attempt:
        # their attempt was charged, the next one is the second), and every one was retried.
        check(failed >= EVENTS // 10 - 16, f"{failed} first attempts failed and were retried")
        duplicates = {i: n for i, n in runs.items() if n > 1}
        print(f"duplicate runs (at least once, around the kill): {len(duplicates)} events ran "
              f"twice or more: {dict(list(duplicates.items())[:20])}")
        print(f"compose test: {time.monotonic() - started:.0f} s from up to the last check")
    finally:
        compose("down", "-v", "--remove-orphans", env=env, check_rc=False, timeout=600)
        shutil.rmtree(apps, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
