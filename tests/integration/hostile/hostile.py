# A hostile handler: each function tries one escape from the sandbox (issue 12) and prints
# `RESULT <attempt> ESCAPED|blocked <detail>` per try, then `DONE cold|prewarmed`. The
# hostile-handler suite (hostile_handler_test.cpp) runs them under `relay start` and asserts
# that nothing escaped.
import ctypes
import errno
import os
import platform
import select
import socket
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

# Syscall numbers of the machines Relay is tested on.
_NR = {
    "x86_64": {"keyctl": 250, "add_key": 248, "userfaultfd": 323, "io_uring_setup": 425,
               "unshare": 272, "mount": 165, "bpf": 321, "perf_event_open": 298},
    "aarch64": {"keyctl": 219, "add_key": 217, "userfaultfd": 282, "io_uring_setup": 425,
                "unshare": 97, "mount": 40, "bpf": 280, "perf_event_open": 241},
}[platform.machine()]

KEY_SPEC_SESSION_KEYRING = -3
KEY_SPEC_USER_KEYRING = -4
KEYCTL_SETPERM = 5
KEYCTL_SEARCH = 10
KEYCTL_READ = 11
CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000


def report(attempt, escaped, detail=""):
    print(f"RESULT {attempt} {'ESCAPED' if escaped else 'blocked'} {detail}", flush=True)


def done():
    # A prewarmed python3 sandbox's interpreter started before any invocation: its start-up
    # environment (/proc/self/environ) has no RELAY_MESSAGE_ID; a cold start's has.
    with open("/proc/self/environ", "rb") as environ:
        cold = b"RELAY_MESSAGE_ID=" in environ.read()
    print("DONE", "cold" if cold else "prewarmed", flush=True)


def syscall(name, *args):
    ctypes.set_errno(0)
    rc = libc.syscall(_NR[name], *args)
    return rc, errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))


def _open_fds():
    # The listing itself holds a descriptor while it runs; keep only those still open after.
    listed = sorted(int(name) for name in os.listdir("/proc/self/fd"))
    still_open = []
    for fd in listed:
        try:
            os.fstat(fd)
            still_open.append(fd)
        except OSError:
            pass
    return still_open


def _talk_resp(fd):
    """PING then CONFIG GET requirepass over an inherited descriptor; the reply or None."""
    try:
        os.set_blocking(fd, False)
        os.write(fd, b"*1\r\n$4\r\nPING\r\n*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$11\r\nrequirepass\r\n")
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            return None
        return os.read(fd, 4096) or None
    except OSError:
        return None


def fds(event):
    open_fds = _open_fds()
    print("FDS " + ",".join(str(fd) for fd in open_fds), flush=True)
    for fd in open_fds:
        if fd < 3:
            continue
        reply = _talk_resp(fd)
        report(f"resp-over-fd-{fd}", reply is not None, repr(reply))
    done()


def _gateways():
    """The default gateways (IPv4 from /proc/net/route, IPv6 from /proc/net/ipv6_route)."""
    found = []
    try:
        with open("/proc/net/route") as routes:
            for line in list(routes)[1:]:
                fields = line.split()
                if fields[1] == "00000000" and fields[2] != "00000000":
                    found.append(socket.inet_ntoa(bytes.fromhex(fields[2])[::-1]))
        with open("/proc/net/ipv6_route") as routes:
            for line in routes:
                fields = line.split()
                if fields[0] == "0" * 32 and fields[4] != "0" * 32:
                    found.append(socket.inet_ntop(socket.AF_INET6, bytes.fromhex(fields[4])))
    except OSError:
        pass
    return found


def redis_tcp(event):
    """Talks RESP to Redis over the network: at the address the test passes, at ::1, and at
    the default gateways (which some network set-ups map to the host's loopback)."""
    for host in [event["host"], "::1"] + _gateways():
        try:
            with socket.create_connection((host, event["port"]), timeout=2) as conn:
                conn.sendall(b"*1\r\n$4\r\nPING\r\n")
                report(f"redis-tcp-{host}", True, repr(conn.recv(100)))
        except OSError as error:
            report(f"redis-tcp-{host}", False, repr(error))
    done()


def _add_key(description, payload, ring):
    rc, err = syscall("add_key", ctypes.c_char_p(b"user"), ctypes.c_char_p(description),
                      ctypes.c_char_p(payload), ctypes.c_size_t(len(payload)), ctypes.c_long(ring))
    return rc, err


def _read_key(serial):
    buffer = ctypes.create_string_buffer(256)
    rc, err = syscall("keyctl", ctypes.c_long(KEYCTL_READ), ctypes.c_long(serial), buffer,
                      ctypes.c_size_t(len(buffer)))
    return (buffer.raw[:rc] if rc >= 0 else None), err


def keyring_store(event):
    """App A leaves a world-readable key in its session and user keyrings."""
    for ring, name in ((KEY_SPEC_SESSION_KEYRING, "session"), (KEY_SPEC_USER_KEYRING, "user")):
        serial, err = _add_key(b"relay-cross-app", b"from-app-a", ring)
        if serial > 0:
            syscall("keyctl", ctypes.c_long(KEYCTL_SETPERM), ctypes.c_long(serial),
                    ctypes.c_ulong(0x3F3F3F3F))
            print(f"SERIAL {serial}", flush=True)
        # Storing is not an escape by itself; reading it from app B would be.
        print(f"STORE {name} {serial} {err}", flush=True)
    done()


def keyring_read(event):
    """App B looks for app A's key and for Relay's own key, by name and by serial."""
    for description in (b"relay-cross-app", b"relay-own-secret"):
        for ring, name in ((KEY_SPEC_SESSION_KEYRING, "session"), (KEY_SPEC_USER_KEYRING, "user")):
            serial, err = syscall("keyctl", ctypes.c_long(KEYCTL_SEARCH), ctypes.c_long(ring),
                                  ctypes.c_char_p(b"user"), ctypes.c_char_p(description),
                                  ctypes.c_long(0))
            data, read_err = _read_key(serial) if serial > 0 else (None, err)
            report(f"search-{description.decode()}-in-{name}", data is not None,
                   f"{serial} {read_err} {data!r}")
    for serial in event.get("serials", []):
        data, err = _read_key(int(serial))
        report(f"read-serial-{serial}", data is not None, f"{err} {data!r}")
    try:
        with open("/proc/keys") as keys:
            visible = [line.strip() for line in keys if "relay-" in line]
        report("proc-keys", bool(visible), repr(visible))
    except OSError as error:
        report("proc-keys", False, repr(error))
    done()


def _run(argv):
    import subprocess
    try:
        done_ = subprocess.run(argv, capture_output=True, timeout=10)
        return done_.returncode, (done_.stdout + done_.stderr).decode(errors="replace").strip()
    except OSError as error:
        return None, repr(error)


def namespaces(event):
    """Creates a user namespace (the door to mount, chroot and cgroupfs) and mounts."""
    ctypes.set_errno(0)
    rc = libc.unshare(CLONE_NEWUSER)
    report("unshare-newuser", rc == 0, errno.errorcode.get(ctypes.get_errno(), ""))
    rc, out = _run(["unshare", "-U", "true"])
    report("unshare-U-command", rc == 0, out)
    rc, out = _run(["unshare", "-Urm", "sh", "-c", "mount -t tmpfs none /tmp && echo mounted"])
    report("unshare-Urm-mount", rc == 0 and "mounted" in out, out)
    ctypes.set_errno(0)
    rc = libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)
    report("mount-tmpfs", rc == 0, errno.errorcode.get(ctypes.get_errno(), ""))
    rc, out = _run(["sh", "-c", "cat /proc/sys/user/max_user_namespaces"])
    print(f"INFO max_user_namespaces {out}", flush=True)
    done()


def kernel_interfaces(event):
    """io_uring, userfaultfd, bpf and perf_event_open: the usual kernel exploit entry points."""
    params = ctypes.create_string_buffer(120)
    rc, err = syscall("io_uring_setup", ctypes.c_uint(8), params)
    report("io_uring_setup", rc >= 0, err)
    rc, err = syscall("userfaultfd", ctypes.c_int(0))
    report("userfaultfd", rc >= 0, err)
    attr = ctypes.create_string_buffer(128)
    rc, err = syscall("bpf", ctypes.c_int(0), attr, ctypes.c_uint(len(attr)))  # BPF_MAP_CREATE
    report("bpf", rc >= 0, err)
    rc, err = syscall("perf_event_open", attr, ctypes.c_int(0), ctypes.c_int(-1),
                      ctypes.c_int(-1), ctypes.c_ulong(0))
    report("perf_event_open", rc >= 0, err)
    with open("/proc/self/status") as status:
        print("INFO " + " ".join(l.strip() for l in status if l.startswith("Seccomp")), flush=True)
    done()


def write_outside_tmp(event):
    """Writes everywhere but /tmp, then fills /tmp past its cap."""
    for directory in ("/", "/app", "/etc", "/var", "/usr", "/dev", "/dev/shm", "/root", "/home"):
        try:
            with open(os.path.join(directory, "hostile-probe"), "w") as probe:
                probe.write("x" * 4096)
            report(f"write-{directory}", True)
        except OSError as error:
            report(f"write-{directory}", False, errno.errorcode.get(error.errno, ""))
    written = 0
    chunk = b"\0" * (1 << 20)
    try:
        with open("/tmp/fill", "wb") as fill:
            for _ in range(event.get("mib", 100)):
                fill.write(chunk)
                written += 1
    except OSError:
        pass
    report("tmp-past-its-cap", written >= event.get("mib", 100), f"{written} MiB")
    done()


def pids_limit(event):
    """Forks sleeping children until the kernel refuses one: past the app's pids limit?"""
    children = []
    refused = ""
    for _ in range(event.get("tries", 200)):
        try:
            pid = os.fork()
        except OSError as error:
            refused = errno.errorcode.get(error.errno, "")
            break
        if pid == 0:
            select.select([], [], [], 30)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    report("pids-past-limit", len(children) >= event.get("tries", 200),
           f"{len(children)} children, then {refused or 'no refusal'}")
    done()


def memory_limit(event):
    """A child touches memory a MiB at a time, telling the parent how far it got."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        hoard = []
        for mib in range(1, event.get("mib", 512) + 1):
            hoard.append(bytearray(1 << 20))  # zero-filled: every page written
            os.write(write_end, b"+")
        os._exit(0)
    os.close(write_end)
    reached = 0
    while True:
        chunk = os.read(read_end, 4096)
        if not chunk:
            break
        reached += len(chunk)
    _, status = os.waitpid(pid, 0)
    killed = os.WIFSIGNALED(status)
    report("memory-past-limit", reached >= event.get("mib", 512),
           f"child reached {reached} MiB, {'killed by signal ' + str(os.WTERMSIG(status)) if killed else 'exited'}")
    done()


def forge_log(event):
    """Tries to hide its prefix and forge another app's line on a terminal reading the log."""
    sys.stdout.write("innocent\r[other/app] forged line\n")
    sys.stdout.write("\x1b[2K\x1b[1A[other/app] overwritten\x1b[0m\n")
    sys.stdout.write("\x9b31m c1-csi \x7f del\n")
    # A right-to-left override would show the rest of the line reversed; a line separator
    # breaks the line in some viewers.
    sys.stdout.write("bidi \u202e[other/app] gnp.exe \u2066isolate\u2069\n")
    sys.stdout.write("split\u2028[other/app] separated\u2029\n")
    sys.stdout.flush()
    done()


def sockets(event):
    """Socket families a network namespace does not confine (AF_VSOCK reaches the host or
    hypervisor) or that open rarely used kernel code (AF_ALG, AF_PACKET, AF_XDP)."""
    families = {"AF_VSOCK": 40, "AF_ALG": 38, "AF_PACKET": 17, "AF_XDP": 44, "AF_KEY": 15,
                "AF_APPLETALK": 5}
    for name, family in families.items():
        kind = socket.SOCK_SEQPACKET if name == "AF_ALG" else socket.SOCK_STREAM
        if name in ("AF_PACKET", "AF_XDP", "AF_KEY"):
            kind = socket.SOCK_RAW
        try:
            sock = socket.socket(family, kind, 0)
        except OSError as error:
            report(f"socket-{name}", False, errno.errorcode.get(error.errno, str(error.errno)))
            continue
        detail = "created"
        if name == "AF_VSOCK":
            try:
                sock.bind((0xFFFFFFFF, 0))  # VMADDR_CID_ANY, any port
                sock.listen(1)
                detail = "listening"
            except OSError as error:
                detail = "created, " + repr(error)
        sock.close()
        report(f"socket-{name}", True, detail)
    done()


def egress(event):
    """Connects to each target; REACHED means a connection was made (expected only for the
    targets the test lists as reachable), else RESULT ... ESCAPED/blocked by `forbidden`."""
    for target in event["targets"]:
        host, port, forbidden = target["host"], target["port"], target["forbidden"]
        try:
            with socket.create_connection((host, port), timeout=3) as conn:
                conn.settimeout(3)
                answer = conn.recv(100)
            if forbidden:
                report(f"connect-{host}-{port}", True, repr(answer))
            else:
                print(f"REACHED {host} {port} {answer!r}", flush=True)
        except OSError as error:
            if forbidden:
                report(f"connect-{host}-{port}", False, repr(error))
            else:
                print(f"UNREACHED {host} {port} {error!r}", flush=True)
    done()


def identity(event):
    """Prints the uid, gid and groups the handler runs as."""
    print(f"ID {os.getuid()} {os.getgid()} {os.getgroups()}", flush=True)
    done()


def inotify_hold(event):
    """Takes every inotify instance its user may have, says so, and holds them a while: if
    another app's sandbox ran as the same user, it would find none left."""
    held = []
    error = ""
    while len(held) < 4096:
        fd = libc.inotify_init1(os.O_CLOEXEC)
        if fd < 0:
            error = errno.errorcode.get(ctypes.get_errno(), "")
            break
        held.append(fd)
    print(f"HOLDING {len(held)} {error}", flush=True)
    import time
    time.sleep(event.get("seconds", 5))
    done()


def inotify_try(event):
    """Makes one inotify instance."""
    ctypes.set_errno(0)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    print("INOTIFY " + ("ok" if fd >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")),
          flush=True)
    done()


def number_digits(event):
    """Prints the last nine digits and the bit length of the event's `n`: the bootstrap parsed
    it whole (str() of it would meet Python's own limit again: that is the handler's)."""
    n = event["n"]
    print(f"EXACT {type(n).__name__} {n % 10**9} {n.bit_length()}", flush=True)
    done()


def early_imports(event):
    """The app also has json.py, app_module.py, early/sitecustomize.py and early/early_module.py
    (early/ on PYTHONPATH), which print EARLY with whether an invocation was handed over when
    they are imported. The handler imports the two modules: after the hand-over, app code is
    found where a plain start finds it."""
    import app_module  # noqa: F401  (in /app)
    import early_module  # noqa: F401  (on the app's PYTHONPATH)
    done()


if __name__ == "__main__":
    sys.exit("run through relay")
