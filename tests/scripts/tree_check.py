"""What the tests of the tree checks (scripts/check-includes, scripts/check-docs) share: a
scratch tree per test, its files, and running a check on it."""
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

REPO = pathlib.Path(__file__).resolve().parents[2]


def run_check(name, root):
    """Runs scripts/<name> --root <root>; its exit code, stdout and stderr."""
    return subprocess.run([sys.executable, str(REPO / "scripts" / name), "--root", str(root)],
                          capture_output=True, text=True, check=False)


def write(root, relative, text):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


class TreeTest(unittest.TestCase):
    """A test with an empty scratch tree in self.root, removed afterwards."""

    def setUp(self):
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="relay-tree-"))
        self.addCleanup(shutil.rmtree, self.root)
