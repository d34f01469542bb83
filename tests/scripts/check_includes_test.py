#!/usr/bin/env python3
"""Tests of scripts/check-includes: a wrong-way include fails with file:line, both in a small
synthetic tree and in a copy of this repository's own src/ and ARCHITECTURE.md."""
import shutil
import unittest

from tree_check import REPO, TreeTest, run_check, write


def run(root):
    return run_check("check-includes", root)


class IncludeGraph(TreeTest):

    def small_tree(self):
        write(self.root, "src/CMakeLists.txt",
              "add_library(relay_core INTERFACE)\n"
              "target_link_libraries(relay_core INTERFACE relay_common relay_event)\n")
        write(self.root, "src/common/CMakeLists.txt",
              "relay_module(common SOURCES c.cpp DEPS Threads::Threads)\n")
        write(self.root, "src/event/CMakeLists.txt",
              "relay_module(event\n  SOURCES e.cpp\n  DEPS relay_common)\n")
        write(self.root, "src/cli/CMakeLists.txt", "relay_module(cli SOURCES m.cpp DEPS relay_core)\n")
        write(self.root, "src/common/c.h", "#pragma once\n#include <string>\n")
        write(self.root, "src/event/e.h", '#pragma once\n#include "common/c.h"\n')
        write(self.root, "src/cli/m.cpp", '#include "event/e.h"\n#include "common/c.h"\n')
        write(self.root, "ARCHITECTURE.md", """\
            | folder | what | may depend on |
            |---|---|---|
            | `src/common` | basics | the standard library |
            | `src/event` | events | common |
            | `src/cli` | commands | everything |
            """)

    def test_follows_the_table_when_every_include_points_down(self):
        self.small_tree()
        result = run(self.root)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("3 includes in 3 files of 3 components", result.stdout)

    def test_rejects_a_wrong_way_include_with_file_and_line(self):
        self.small_tree()
        write(self.root, "src/common/c.cpp", '#include "common/c.h"\n\n#include "event/e.h"\n')
        result = run(self.root)
        self.assertEqual(result.returncode, 1)
        self.assertIn('src/common/c.cpp:3: common may not include "event/e.h": common depends on '
                      "nothing", result.stderr)

    def test_rejects_a_table_that_no_longer_matches_the_link_lines(self):
        self.small_tree()
        write(self.root, "src/common/CMakeLists.txt",
              "relay_module(common SOURCES c.cpp DEPS relay_event)\n")
        write(self.root, "src/event/CMakeLists.txt", "relay_module(event SOURCES e.cpp)\n")
        result = run(self.root)
        self.assertEqual(result.returncode, 1)
        self.assertIn("ARCHITECTURE.md:3: src/common: omits event, which it links", result.stderr)
        self.assertIn("ARCHITECTURE.md:4: src/event: lists common, which it does not link",
                      result.stderr)

    def test_rejects_a_component_missing_from_the_table(self):
        self.small_tree()
        write(self.root, "src/yaml/CMakeLists.txt", "relay_module(yaml SOURCES y.cpp DEPS relay_common)\n")
        result = run(self.root)
        self.assertEqual(result.returncode, 1)
        self.assertIn("src/yaml is missing from the component table", result.stderr)

    def test_rejects_transport_that_links_the_apps_in_this_repository(self):
        shutil.copytree(REPO / "src", self.root / "src")
        shutil.copy(REPO / "ARCHITECTURE.md", self.root)
        self.assertEqual(run(self.root).returncode, 0)
        # Transport knows no apps: linking the catalog breaks the rule even when the table says
        # so too (the table follows the link lines; the rule does not).
        cmake = self.root / "src" / "stream" / "CMakeLists.txt"
        cmake.write_text(cmake.read_text().replace("DEPS relay_common", "DEPS relay_catalog relay_common"))
        result = run(self.root)
        self.assertEqual(result.returncode, 1)
        self.assertIn("src/stream/CMakeLists.txt: stream reaches app: transport knows no apps",
                      result.stderr)
        self.assertIn("stream reaches catalog: transport knows no apps", result.stderr)

    def test_rejects_a_wrong_way_include_in_this_repository(self):
        shutil.copytree(REPO / "src", self.root / "src")
        shutil.copy(REPO / "ARCHITECTURE.md", self.root)
        self.assertEqual(run(self.root).returncode, 0)
        # The runtime depends on common only; the pattern matcher is above it.
        victim = self.root / "src" / "runtime" / "runtime.cpp"
        lines = victim.read_text().splitlines()
        lines.insert(1, '#include "pattern/evaluator.h"')
        victim.write_text("\n".join(lines) + "\n")
        result = run(self.root)
        self.assertEqual(result.returncode, 1)
        self.assertIn('src/runtime/runtime.cpp:2: runtime may not include "pattern/evaluator.h": '
                      "runtime depends on common", result.stderr)


if __name__ == "__main__":
    unittest.main()
