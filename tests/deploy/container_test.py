#!/usr/bin/env python3
"""The image under each set of container options (docs/deployment.md "Container privileges" and
"What each failure looks like"), and `relay doctor` on each host this gives:

- Docker's defaults: sandbox apps are reported unavailable with the fix (never run unisolated),
  and `relay doctor` fails on user namespaces and cgroups, naming Relay's seccomp profile;
- the documented options (deploy/container/run-options): every check passes;
- the documented options less one at a time: the seccomp profile, systempaths=unconfined,
  /dev/net/tun (with a network: true app), CAP_SETFCAP: each fails its own layer with its fix;
- no pasta (with a network: true app): the pasta check fails with its fix;
- the docker runtime without a daemon, an unreachable Redis, and an ACL user lacking commands.

Also measures the image's start-up (docker run to "relay started", and to /readyz answering 200)
and stop times (docker stop of an idle worker), which docs/deployment.md quotes.
"""
import json
import os
import time

from deploylib import (IMAGE, Container, RedisServer, check, docker, finish, run_options,
                       sweep_earlier_runs, temp_dir, wait_for, without, write_app)

HANDLER = "#!/bin/sh\necho ok\n"


def doctor(options, apps, env, *extra):
    """relay doctor --json in a fresh container; (exit code, {name: check})."""
    argv = ["run", "--rm", "--network", "host", *options, "-v", f"{apps}:/apps:ro"]
    for key, value in env.items():
        argv += ["-e", f"{key}={value}"]
    result = docker(*argv, IMAGE, "doctor", "--json", *extra, check_rc=False, timeout=300)
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        print(result.stdout, result.stderr)
        return result.returncode, {}
    return result.returncode, {c["name"]: c for c in report["checks"]}


def expect_fail(checks, name, fix_has, what):
    entry = checks.get(name, {})
    check(entry.get("status") == "fail" and fix_has in entry.get("fix", ""),
          f"{what}: {name} fails, fix names {fix_has!r} ({entry.get('detail')} / {entry.get('fix')})")


def main():
    sweep_earlier_runs()
    documented = run_options()
    apps = temp_dir("relay-container-apps.")
    os.chmod(apps, 0o755)
    write_app(apps, "hello", "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [hi]}\n",
              {"bin/h.sh": (HANDLER, 0o755)})
    net_apps = temp_dir("relay-container-netapps.")
    os.chmod(net_apps, 0o755)
    write_app(net_apps, "web", "runtime: exec\nnetwork: true\nevents:\n  - handler: bin/h.sh\n"
              "    pattern: {kind: [hi]}\n", {"bin/h.sh": (HANDLER, 0o755)})

    with RedisServer() as redis:
        env = {"REDIS_URI": f"127.0.0.1:{redis.port}"}

        # Docker's defaults: unavailable with the fix, never run without isolation.
        listed = docker("run", "--rm", "--network", "host", "-v", f"{apps}:/apps:ro",
                        *[a for k, v in env.items() for a in ("-e", f"{k}={v}")],
                        IMAGE, "app", "ls", "--json", check_rc=False)
        hello = next((a for a in json.loads(listed.stdout or "[]") if a["name"] == "hello"), {})
        check(hello.get("available") is False and "fix:" in hello.get("reason", "")
              and "seccomp" in hello.get("reason", ""),
              f"with Docker's defaults the app is unavailable with the fix: {hello.get('reason')}")
        code, checks = doctor([], apps, env)
        check(code == 1, f"relay doctor exits 1 with Docker's defaults (exit {code})")
        expect_fail(checks, "user namespaces", "seccomp", "Docker's defaults")
        expect_fail(checks, "cgroups", "seccomp", "Docker's defaults")
        expect_fail(checks, "sandbox", "seccomp", "Docker's defaults")

        code, checks = doctor(documented, apps, env)
        failing = {n: c for n, c in checks.items() if c["status"] not in ("ok",)}
        check(code == 0 and not failing, f"the documented options pass every check: {failing}")

        code, checks = doctor(without(documented, "--security-opt=seccomp"), apps, env)
        check(code == 1, "without Relay's seccomp profile the runtime cannot work")
        expect_fail(checks, "user namespaces", "seccomp=seccomp.json", "without the profile")

        code, checks = doctor(without(documented, "--security-opt=systempaths"), apps, env)
        expect_fail(checks, "proc mount", "systempaths=unconfined", "a masked /proc")
        expect_fail(checks, "sandbox", "systempaths=unconfined", "a masked /proc")

        code, checks = doctor(without(documented, "--device"), net_apps, env)
        check(code == 1, "without /dev/net/tun a network: true app cannot work")
        expect_fail(checks, "tun device", "--device /dev/net/tun", "no tun device")
        code, checks = doctor(without(documented, "--device"), apps, env)
        check(code == 0 and checks.get("tun device", {}).get("status") == "warn",
              "without /dev/net/tun and no network: true app it is only a warning")

        # No pasta (a file that is no executable where it was): network: true apps cannot run.
        code, checks = doctor([*documented, "-v", "/dev/null:/usr/bin/pasta:ro"], net_apps, env)
        check(code == 1, "without pasta a network: true app cannot work")
        expect_fail(checks, "pasta", "apt-get install passt", "no pasta")

        code, checks = doctor(without(documented, "--cap-add=SETFCAP"), apps, env)
        expect_fail(checks, "cgroups", "SETFCAP", "without CAP_SETFCAP")

        code, checks = doctor(documented, apps, dict(env, RELAY_RUNTIME="docker"))
        expect_fail(checks, "docker daemon", "DOCKER_HOST", "the docker runtime without a daemon")

        code, checks = doctor(documented, apps, {"REDIS_URI": "127.0.0.1:1"})
        expect_fail(checks, "redis", "REDIS_URI", "an unreachable Redis")

        redis.cli("ACL", "SETUSER", "narrow", "on", ">narrow-pw", "~*", "+@all", "-evalsha",
                  "-xautoclaim")
        code, checks = doctor(documented, apps, {"REDIS_URI": f"redis://narrow:narrow-pw@127.0.0.1:{redis.port}"})
        expect_fail(checks, "redis commands", "+evalsha +xautoclaim", "an ACL user without two commands")

        # Start-up and stop of the image (each container start copies the image first with the
        # vfs storage driver of the test daemon: docs/deployment.md says what that costs).
        http_port = redis.port + 1
        started = time.monotonic()
        with Container(f"relay-image-timing-{os.getpid()}", IMAGE,
                       ["--network", "host", *documented, "-v", f"{apps}:/apps:ro",
                        "-e", f"REDIS_URI=127.0.0.1:{redis.port}",
                        "-e", f"RELAY_HTTP_ADDR=127.0.0.1:{http_port}"]) as box:
            running = time.monotonic() - started
            wait_for(lambda: "relay started" in box.logs(), 120, 0.05)
            up = time.monotonic() - started
            ready = wait_for(lambda: docker("exec", box.name, "relay", "health",
                                            check_rc=False).returncode == 0, 60, 0.05)
            ready_at = time.monotonic() - started
            stopping = time.monotonic()
            docker("stop", "-t", "330", box.name)
            stopped = time.monotonic() - stopping
            check("relay stopped" in box.logs(), "docker stop stops Relay gracefully (SIGTERM)")
            print(f"image start-up: docker run returned after {running:.2f} s, 'relay started' "
                  f"after {up:.2f} s, healthy after {ready_at:.2f} s; docker stop of an idle "
                  f"worker {stopped:.2f} s")
            check(ready, "the started container answers relay health")
    finish()


if __name__ == "__main__":
    main()
