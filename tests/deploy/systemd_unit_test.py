#!/usr/bin/env python3
"""relay.service under a real systemd (docs/deployment.md "systemd"): a Debian 12 root file
system with systemd as PID 1 in a container (the only way to have one on a CI machine whose
PID 1 is not systemd), the relay package installed with apt, then:

- `systemd-analyze verify` passes on the installed unit;
- `systemctl start relay` returns once Relay sent READY=1 (Type=notify), with its STATUS=;
- the watchdog is armed (WatchdogUSec) and Relay feeds it (the unit stays active past it);
- a handler runs in the sandbox under the unit's hardening and Delegate=yes (its own cgroup
  below relay.service), a network: true one under pasta;
- `systemctl stop` lets a running handler finish (KillMode=mixed: SIGTERM to Relay only);
- a SIGKILLed worker is restarted (Restart=on-failure);
- the start-up and stop times are printed (docs/deployment.md quotes them).

The container itself is privileged enough to run systemd (every capability the host has, no
seccomp filter): that is the host under test here, not Relay's least privilege.
"""
import os
import re
import time

from deploylib import (sandbox_uid, BUILD, DOCKER, SOURCE, Container, check, docker, finish, run,
                       sweep_earlier_runs, temp_dir, wait_for)

IMAGE_DOCKERFILE = """FROM {base}
COPY relay_*.deb /tmp/relay/
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \\
      --no-install-recommends systemd systemd-sysv dbus redis-server /tmp/relay/relay_*.deb \\
    && rm -rf /var/lib/apt/lists/* /tmp/relay \\
    && systemctl mask getty@.service console-getty.service systemd-logind.service
STOPSIGNAL SIGRTMIN+3
"""
# systemd wants writable cgroups: Docker mounts them read-only, so they are remounted first.
BOOT = ("for m in $(awk '$3==\"cgroup\"||$3==\"cgroup2\"{print $2}' /proc/self/mounts) "
        "/sys/fs/cgroup; do mount -o remount,bind,rw $m; done; exec /lib/systemd/systemd")
TAG = str(os.getpid())
HOSTILE_ENOUGH = r"""#!/bin/sh
echo "uid $(id -u) seccomp $(grep Seccomp: /proc/self/status | cut -f2)"
"""


def base_image():
    return run(["bash", "-c", f"source {SOURCE}/scripts/lib/common.sh; "
                f"source {SOURCE}/scripts/lib/dockerd.sh; source {SOURCE}/scripts/lib/rootfs.sh; "
                "relay_base_image"]).stdout.strip()


def monotonic_us(box, unit, prop):
    return int(box.exec("systemctl", "show", "-P", prop, unit).stdout.strip() or 0)


def main():
    sweep_earlier_runs()
    context = temp_dir("relay-systemd-image.")
    run([f"{SOURCE}/scripts/package", "--build-dir", str(BUILD), "--out", context])
    with open(f"{context}/Dockerfile", "w") as dockerfile:
        dockerfile.write(IMAGE_DOCKERFILE.format(base=base_image()))
    run([DOCKER, "build", "--network", "host", "-q", "-t", f"relay-systemd-test:{TAG}", context],
        env=dict(os.environ, DOCKER_BUILDKIT="1"), timeout=900)

    options = ["--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE", "--security-opt", "seccomp=unconfined",
               "--security-opt", "apparmor=unconfined", "--security-opt", "systempaths=unconfined",
               "--cgroupns", "private", "--tmpfs", "/run", "--tmpfs", "/run/lock",
               "--device", "/dev/net/tun", "-e", "container=docker", "--entrypoint", "sh"]
    # A network of its own: pasta needs a routable interface (the test daemon has no default
    # bridge), and the container's Redis must not meet the host's loopback.
    network = f"relay-systemd-{TAG}"
    docker("network", "rm", network, check_rc=False)
    try:
        docker("network", "create", network)
        options += ["--network", network]
        with Container(f"relay-systemd-test-{os.getpid()}", f"relay-systemd-test:{TAG}", options, ["-c", BOOT]) as box:
            state = wait_for(lambda: box.exec("systemctl", "is-system-running", check_rc=False)
                             .stdout.strip() in ("running", "degraded"), 120, 0.5)
            check(state, "systemd runs as PID 1: " +
                  box.exec("systemctl", "is-system-running", check_rc=False).stdout.strip())
            verify = box.exec("systemd-analyze", "verify", "/lib/systemd/system/relay.service", check_rc=False)
            check(verify.returncode == 0 and not verify.stderr.strip(),
                  f"systemd-analyze verify relay.service: {verify.stdout}{verify.stderr}".strip())
            check(box.exec("systemctl", "is-enabled", "relay", check_rc=False).stdout.strip() == "disabled",
                  "the package leaves the unit disabled")
            box.exec("sh", "-c", "mkdir -p /var/lib/relay/apps/probe/bin /var/lib/relay/apps/net/bin /var/lib/relay/apps/slow/bin")
            for app, handler, extra in (("probe", HOSTILE_ENOUGH, ""), ("net", HOSTILE_ENOUGH, "network: true\n"),
                                        ("slow", "#!/bin/sh\necho started\nsleep 3\necho finished\n", "")):
                box.exec("sh", "-c", f"cat > /var/lib/relay/apps/{app}/bin/h.sh <<'EOF'\n{handler}EOF\n"
                         f"printf 'runtime: exec\\n{extra}events:\\n  - handler: bin/h.sh\\n"
                         f"    pattern: {{kind: [{app}]}}\\n    retries: 0\\n' > /var/lib/relay/apps/{app}/template.yaml")
            box.exec("sh", "-c", "chmod -R a+rX /var/lib/relay/apps && chmod +x /var/lib/relay/apps/*/bin/h.sh")
            wait_for(lambda: box.exec("redis-cli", "ping", check_rc=False).stdout.strip() == "PONG", 30)

            started = time.monotonic()
            start = box.exec("systemctl", "start", "relay", check_rc=False)
            start_seconds = time.monotonic() - started
            check(start.returncode == 0, f"systemctl start relay: {start.stderr.strip()}")
            begun = monotonic_us(box, "relay", "ExecMainStartTimestampMonotonic")
            ready = monotonic_us(box, "relay", "ActiveEnterTimestampMonotonic")
            status = box.exec("systemctl", "show", "-P", "StatusText", "relay").stdout.strip()
            check(status.startswith("consuming events as "), f"READY=1 came with STATUS={status}")
            check(box.exec("systemctl", "show", "-P", "WatchdogUSec", "relay").stdout.strip() == "30s",
                  "the watchdog is armed (30 s)")
            journal = lambda: box.exec("journalctl", "-u", "relay", "--no-pager", "-o", "cat", check_rc=False).stdout
            box.exec("redis-cli", "XADD", "events", "*", "event", '{"kind":"probe"}')
            box.exec("redis-cli", "XADD", "events", "*", "event", '{"kind":"net"}')
            check(wait_for(lambda: journal().count("invocation succeeded") >= 2, 60),
                  "a sandboxed and a network: true handler ran under the unit")
            probe = re.search(r"\[probe/bin/h.sh\] (.*)", journal())
            fields = probe.group(1).split() if probe else []
            check(len(fields) == 4 and fields[0] == "uid" and sandbox_uid(fields[1]) and
                  fields[2:] == ["seccomp", "2"],
                  f"sandboxed as the app's own uid under seccomp: {probe and probe.group(1)}")
            net = re.search(r"\[net/bin/h.sh\] uid (\d+)", journal())
            check(net is not None and sandbox_uid(net.group(1)), "network: true ran under pasta")
            cgroup = box.exec("sh", "-c", "cat /proc/$(systemctl show -P MainPID relay)/cgroup").stdout
            check("relay.service" in cgroup, f"Relay runs in relay.service's cgroup: {cgroup.splitlines()[:2]}")

            # Past a watchdog interval the unit is still active: Relay fed it.
            time.sleep(35)
            check(box.exec("systemctl", "is-active", "relay", check_rc=False).stdout.strip() == "active",
                  "still active after the 30 s watchdog interval")

            box.exec("redis-cli", "XADD", "events", "*", "event", '{"kind":"slow"}')
            wait_for(lambda: "[slow/bin/h.sh] started" in journal(), 30)
            # Delegate=yes: the running handler's own cgroup below the unit's.
            cgroups = box.exec("sh", "-c", "ls -d /sys/fs/cgroup/*/system.slice/relay.service/relay-sandbox/inv-* "
                               "/sys/fs/cgroup/system.slice/relay.service/relay-sandbox/inv-* 2>/dev/null",
                               check_rc=False).stdout.split()
            check(any("/memory/" in c or "/sys/fs/cgroup/system.slice" in c for c in cgroups),
                  f"the handler runs in its own cgroup below relay.service: {cgroups[:3]}")
            stopping = time.monotonic()
            box.exec("systemctl", "stop", "relay")
            stop_seconds = time.monotonic() - stopping
            check("[slow/bin/h.sh] finished" in journal(), "the running handler finished before the stop")
            result = box.exec("systemctl", "show", "-P", "Result", "relay").stdout.strip()
            check(result == "success", f"a clean stop (Result={result})")

            box.exec("systemctl", "start", "relay")
            box.exec("systemctl", "kill", "--signal=SIGKILL", "--kill-whom=main", "relay")
            restarted = wait_for(lambda: box.exec("systemctl", "show", "-P", "NRestarts", "relay").stdout.strip() == "1"
                                 and box.exec("systemctl", "is-active", "relay", check_rc=False).stdout.strip() == "active", 60, 0.5)
            check(restarted, "a SIGKILLed worker is restarted (Restart=on-failure)")
            box.exec("systemctl", "stop", "relay")

            print(f"unit start-up: systemctl start returned after {start_seconds:.2f} s; "
                  f"exec to READY=1 {(ready - begun) / 1e6:.3f} s")
            print(f"unit stop with a 3 s handler running: {stop_seconds:.2f} s")
            box.exec("systemctl", "start", "relay")
            idle_stop = time.monotonic()
            box.exec("systemctl", "stop", "relay")
            print(f"unit stop, idle: {time.monotonic() - idle_stop:.2f} s")
    finally:
        # Also when a check raised: a failed run leaves no network or image behind.
        docker("network", "rm", network, check_rc=False)
        docker("rmi", f"relay-systemd-test:{TAG}", check_rc=False)
    finish()


if __name__ == "__main__":
    main()
