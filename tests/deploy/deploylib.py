"""Helpers of the deployment tests (tests/deploy, ctest label `deploy`): a private
redis-server on a free loopback port, docker runs with the documented options, polling.

Each test is a script that exits 0 when every check passed; ctest runs them with
RELAY_SOURCE_DIR, RELAY_BUILD_DIR and RELAY_IMAGE (the image scripts/image built) set.
"""
import atexit
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

SOURCE = pathlib.Path(os.environ.get("RELAY_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
BUILD = pathlib.Path(os.environ.get("RELAY_BUILD_DIR", SOURCE / "build"))
IMAGE = os.environ.get("RELAY_IMAGE", "relay:0.1.0")
DOCKER = "/usr/bin/docker" if os.path.exists("/usr/bin/docker") else "docker"

_failures = []


def check(condition, what):
    """Records one assertion; the script fails at the end when any did."""
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        _failures.append(what)
    return condition


def finish():
    if _failures:
        print(f"{len(_failures)} check(s) failed:", *_failures, sep="\n  ", file=sys.stderr)
        sys.exit(1)
    print("all checks passed")
    sys.exit(0)


def run(argv, check_rc=True, timeout=600, **kwargs):
    """Runs argv, returns the CompletedProcess (text); raises on a non-zero exit when asked."""
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
    if check_rc and result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))} exited {result.returncode}:\n"
                           f"{result.stdout}\n{result.stderr}")
    return result


def docker(*args, check_rc=True, timeout=600):
    return run([DOCKER, *args], check_rc=check_rc, timeout=timeout)


# The names the deployment tests give what they create, each ending in the test's pid: the
# containers of Container(...), systemd_unit_test.py's network and the docker-compose projects
# of compose_test.py.
_TEST_CONTAINER = re.compile(r"^relay-(?:package-test|image-timing|systemd-test)-(\d+)$")
_TEST_NETWORK = re.compile(r"^relay-systemd-(\d+)$")
_TEST_PROJECT = re.compile(r"^relaycompose(\d+)$")


def _test_alive(pid):
    """Whether pid is a deployment test still running (not merely a process with that pid)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return b"_test.py" in cmdline.read()
    except OSError:
        return False


def sweep_earlier_runs():
    """Removes what deployment tests that were killed left in the daemon: their `finally` never
    ran, and compose's services restart with the daemon (`restart: unless-stopped`), holding
    the console's host port. Only names of tests whose pid no longer runs one are touched.
    Prints and returns the names removed."""
    removed = []
    for kind in ("container", "network", "volume"):
        container = kind == "container"
        listed = docker(kind, "ls", *(["-a"] if container else []), "--format",
                        ("{{.Names}}" if container else "{{.Name}}") +
                        '\t{{.Label "com.docker.compose.project"}}')
        for line in listed.stdout.splitlines():
            name, _, project = line.partition("\t")
            own = (_TEST_CONTAINER if container else _TEST_NETWORK).match(name)
            own = own or _TEST_PROJECT.match(project)
            if own and not _test_alive(own.group(1)):
                # Containers first: a network or volume in use cannot go.
                docker(kind, "rm", *(["-f", "-v"] if container else []), name,
                       check_rc=False)
                removed.append(name)
    # systemd_unit_test.py's image, tagged with its pid.
    for tag in docker("images", "relay-systemd-test", "--format", "{{.Tag}}").stdout.split():
        if tag.isdigit() and not _test_alive(tag):
            docker("rmi", f"relay-systemd-test:{tag}", check_rc=False)
            removed.append(f"relay-systemd-test:{tag}")
    if removed:
        print(f"removed what killed runs of the deployment tests left: {removed}", flush=True)
    return removed


def run_options():
    """deploy/container/run-options, the seccomp profile's path made absolute."""
    path = SOURCE / "deploy" / "container" / "run-options"
    options = []
    for line in path.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        options.append(line.replace("seccomp=seccomp.json", f"seccomp={path.parent / 'seccomp.json'}"))
    return options


def without(options, *prefixes):
    """The options but those starting with any of `prefixes`."""
    return [o for o in options if not any(o.startswith(p) for p in prefixes)]


def wait_for(predicate, timeout, interval=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


def temp_dir(prefix):
    """A new directory under $TMPDIR, removed when the script exits, whatever the outcome."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, True)
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """redis-server on a free loopback port in a temp dir; stopped (by pid) on exit."""

    def __init__(self, *extra):
        self.dir = tempfile.mkdtemp(prefix="relay-deploy-redis.")
        self.port = free_port()
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir, *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wait_for(lambda: self.cli("PING", check_rc=False).stdout.strip() == "PONG", 10):
            raise RuntimeError("redis-server did not answer")

    def cli(self, *args, check_rc=True):
        return run(["redis-cli", "-p", str(self.port), *args], check_rc=check_rc)

    def close(self):
        self.process.terminate()
        self.process.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Container:
    """A detached container, removed (docker rm -f) on exit."""

    def __init__(self, name, image, options, command=()):
        self.name = name
        docker("rm", "-f", name, check_rc=False)
        docker("run", "-d", "--name", name, *options, image, *command)

    def exec(self, *argv, check_rc=True, timeout=600):
        return docker("exec", self.name, *argv, check_rc=check_rc, timeout=timeout)

    def logs(self):
        result = docker("logs", self.name, check_rc=False)
        return result.stdout + result.stderr

    def close(self):
        docker("rm", "-f", self.name, check_rc=False)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def write_app(root, name, template, files):
    """An app directory readable by the sandbox user: template.yaml plus {path: (text, mode)}."""
    app = pathlib.Path(root) / name
    app.mkdir(parents=True, exist_ok=True)
    (app / "template.yaml").write_text(template)
    for relative, (text, mode) in files.items():
        path = app / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(mode)
    for path in [pathlib.Path(root), *pathlib.Path(root).rglob("*")]:
        path.chmod(path.stat().st_mode | 0o055 if path.is_dir() else path.stat().st_mode | 0o044)
    return app


# The ids Relay gives apps' sandboxes (docs/runtimes.md "Identities"): one per app, past the
# first (the probes'), in 0x70000000 + 65,536.
SANDBOX_IDS = range(0x70000000 + 1, 0x70000000 + 65536)


def sandbox_uid(text):
    """Whether `text` is the decimal uid of an app's sandbox."""
    return text.isdigit() and int(text) in SANDBOX_IDS
