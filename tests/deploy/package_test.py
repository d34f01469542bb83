#!/usr/bin/env python3
"""The Debian package, installed for real (docs/deployment.md "Debian package"): relay_*.deb
from scripts/package goes into a clean Debian 12 root file system (mmdebstrap, the same one the
image starts from) with apt, which fetches its Depends; then `relay version`, `relay validate`
and a real `relay start` against a redis-server, running a handler in the sandbox (the container
has the options of deploy/container/run-options, so the sandbox works in it); then a purge,
after which the file system holds exactly the files it held before.
"""
import os
import re

from deploylib import (sandbox_uid, BUILD, SOURCE, Container, RedisServer, check, docker, finish, run,
                       run_options, sweep_earlier_runs, temp_dir, wait_for, without)

# What apt and dpkg keep for themselves, and what a running container changes on its own.
SNAPSHOT = ("find / -xdev \\( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp"
            " -o -path /var/lib/apt -o -path /var/cache -o -path /var/log -o -path /var/lib/dpkg"
            " -o -path /pkg \\) -prune -o -print | LC_ALL=C sort")


def base_image():
    return run(["bash", "-c", f"source {SOURCE}/scripts/lib/common.sh; "
                f"source {SOURCE}/scripts/lib/dockerd.sh; source {SOURCE}/scripts/lib/rootfs.sh; "
                "relay_base_image"]).stdout.strip()


def main():
    sweep_earlier_runs()
    debs = temp_dir("relay-debs.")
    packages = run([f"{SOURCE}/scripts/package", "--build-dir", str(BUILD), "--out", debs]).stdout.split()
    relay_deb = next(p for p in packages if "/relay_" in p)
    info = run(["dpkg-deb", "-f", relay_deb, "Depends"]).stdout
    check("bubblewrap" in info and "passt" in info, f"relay Depends on bubblewrap and passt: {info.strip()}")
    for heavy in ("protobuf", "absl", "curl", "opentelemetry"):
        check(heavy not in info, f"relay pulls in no {heavy}")
    otel_deb = next(p for p in packages if "/relay-otel_" in p)
    check("opentelemetry-cpp" in run(["dpkg-deb", "-f", otel_deb, "Depends"]).stdout,
          "relay-otel depends on opentelemetry-cpp")

    with RedisServer() as redis, Container(
            f"relay-package-test-{os.getpid()}", base_image(),
            # The sandbox's options; Docker's default capabilities, which apt needs.
            ["--init", "--network", "host", *without(run_options(), "--cap-", "--read-only"),
             "-v", f"{debs}:/pkg:ro"],
            ["sleep", "infinity"]) as box:
        before = box.exec("sh", "-c", SNAPSHOT).stdout.splitlines()
        box.exec("apt-get", "update", "-qq", timeout=900)
        box.exec("sh", "-c", "DEBIAN_FRONTEND=noninteractive apt-get install -y -q "
                 "--no-install-recommends /pkg/relay_*.deb", timeout=900)
        version = box.exec("relay", "version").stdout
        check(version.startswith("relay "), f"relay version: {version.strip()}")
        unit = box.exec("cat", "/lib/systemd/system/relay.service").stdout
        check("Type=notify" in unit, "the unit is installed")
        check(box.exec("stat", "-c", "%a", "/etc/relay/relay.env").stdout.strip() == "600",
              "/etc/relay/relay.env is readable by root only")
        box.exec("sh", "-c", "mkdir -p /var/lib/relay/apps/hello/bin && cat > "
                 "/var/lib/relay/apps/hello/template.yaml <<'Y'\nruntime: exec\nevents:\n"
                 "  - handler: bin/hello.sh\n    pattern: {kind: [hello]}\n    retries: 0\nY\n"
                 "printf '#!/bin/sh\\necho \"hello as $(id -u), seccomp $(grep Seccomp: /proc/self/status | cut -f2)\"\\n' "
                 "> /var/lib/relay/apps/hello/bin/hello.sh && chmod -R a+rX /var/lib/relay/apps && "
                 "chmod +x /var/lib/relay/apps/hello/bin/hello.sh")
        validate = box.exec("relay", "validate", "--apps", "/var/lib/relay/apps", check_rc=False)
        check(validate.returncode == 0, f"relay validate: {validate.stdout.strip()} {validate.stderr.strip()}")
        box.exec("sh", "-c", f"REDIS_URI=127.0.0.1:{redis.port} RELAY_APPS=/var/lib/relay/apps "
                 "RELAY_HTTP_ADDR=127.0.0.1:0 relay start >/tmp/relay.log 2>&1 & echo $! >/tmp/relay.pid")
        log = lambda: box.exec("cat", "/tmp/relay.log", check_rc=False).stdout
        check(wait_for(lambda: "relay started" in log(), 60), "relay start runs")
        redis.cli("XADD", "events", "*", "event", '{"kind":"hello"}')
        check(wait_for(lambda: "invocation succeeded" in log(), 60),
              "the handler ran: " + "".join(l for l in log().splitlines(True) if "hello" in l))
        ran = re.search(r"hello as (\d+), seccomp 2", log())
        check(ran is not None and sandbox_uid(ran.group(1)),
              "in the sandbox: the app's own uid under seccomp")
        box.exec("sh", "-c", "kill -TERM $(cat /tmp/relay.pid); "
                 "for i in $(seq 300); do kill -0 $(cat /tmp/relay.pid) 2>/dev/null || break; sleep 0.1; done")
        check("relay stopped" in log(), "relay stops on SIGTERM")

        # The tracing module, from its own package: relay loads it when OTEL_* turn tracing on.
        box.exec("sh", "-c", "DEBIAN_FRONTEND=noninteractive apt-get install -y -q "
                 "--no-install-recommends /pkg/relay-otel_*.deb", timeout=900)
        traced = box.exec("sh", "-c", f"REDIS_URI=127.0.0.1:{redis.port} RELAY_APPS=/var/lib/relay/apps "
                          "RELAY_HTTP_ADDR=127.0.0.1:0 OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9 "
                          "timeout -s TERM 5 relay start 2>&1; true", timeout=60).stdout
        check("tracing on" in traced, "relay-otel installed: relay start loads the tracing module")
        box.exec("sh", "-c", "DEBIAN_FRONTEND=noninteractive apt-get purge -y -q relay-otel relay && "
                 "DEBIAN_FRONTEND=noninteractive apt-get autoremove -y -q --purge", timeout=900)
        after = box.exec("sh", "-c", SNAPSHOT).stdout.splitlines()
        added = sorted(set(after) - set(before))
        removed = sorted(set(before) - set(after))
        check(not added, f"the purge leaves no file: {added[:20]}")
        check(not removed, f"install and purge removed nothing of the base: {removed[:20]}")
    finish()


if __name__ == "__main__":
    main()
