#!/usr/bin/env python3
"""Tests of scripts/check-docs: a cited path or heading that does not exist fails with
file:line, in docs and in code comments alike; what exists passes."""
import shutil
import unittest

from tree_check import REPO, TreeTest, run_check, write


def run(root):
    return run_check("check-docs", root)


class DocCitations(TreeTest):
    def setUp(self):
        super().setUp()
        write(self.root, "README.md", """\
            # Relay

            See [pipeline.md](docs/pipeline.md#claims) and docs/pipeline.md "Claims".

            ## Dependencies
            """)
        write(self.root, "docs/pipeline.md", """\
            # The pipeline

            ## Claims

            Renewed by `src/invocation/renewer.cpp` ([the README](../README.md#dependencies)).

            ## sandbox (bubblewrap + cgroups)

            ```
            # not a heading: inside a fence
            ```
            """)
        write(self.root, "src/invocation/renewer.cpp", """\
            // Renews claims (docs/pipeline.md "Claims"; the isolation: docs/pipeline.md
            // "sandbox", README "Dependencies"); src/invocation/renewer.* and
            // src/invocation/renewer.{cpp} exist.
            const char* kNotAComment = "docs/missing.md \\"Nope\\"";
            """)
        write(self.root, "scripts/tool.py", '''\
            """Reads src/invocation/renewer.cpp."""
            DATA = """
            src/not/a/citation.cpp
            """
            ''')

    def test_a_tree_whose_citations_exist_passes(self):
        result = run(self.root)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("check-docs: ", result.stdout)

    def broken(self, relative, text):
        """Adds `relative` to the tree; the check fails; its stderr."""
        write(self.root, relative, text)
        result = run(self.root)
        self.assertEqual(result.returncode, 1, result.stdout)
        return result.stderr

    def test_a_missing_path_in_a_doc_fails_with_file_and_line(self):
        stderr = self.broken("docs/apps.md", "# Apps\n\nCode: `src/app/gone.cpp`.\n")
        self.assertIn("docs/apps.md:3: cites src/app/gone.cpp, which does not exist", stderr)
        self.assertIn("check-docs: 1 broken citation(s)", stderr)

    def test_a_missing_heading_cited_in_a_code_comment_fails(self):
        stderr = self.broken("src/plan.h",
                             '#pragma once\n\n// Fixed (docs/pipeline.md "The plan").\n')
        self.assertIn('src/plan.h:3: cites the heading "The plan" of docs/pipeline.md, which has '
                      "no such heading", stderr)

    def test_a_citation_broken_across_lines_is_still_read(self):
        stderr = self.broken("docs/apps.md", '# Apps\n\nKept (docs/pipeline.md\n"Leases").\n')
        self.assertIn('docs/apps.md:3: cites the heading "Leases"', stderr)

    def test_a_broken_anchor_and_a_missing_link_target_fail(self):
        links = "[claims](pipeline.md#leases), [x](missing.md), [ok](#apps)"
        stderr = self.broken("docs/apps.md", f"# Apps\n\n{links}\n")
        self.assertIn("docs/apps.md:3: links #leases of docs/pipeline.md, which has no heading "
                      "with that anchor", stderr)
        self.assertIn("docs/apps.md:3: links missing.md, which does not exist", stderr)
        self.assertNotIn("#apps", stderr)

    def test_a_glob_that_matches_nothing_fails(self):
        stderr = self.broken("scripts/run.sh", "#!/bin/sh\n# Runs src/invocation/gone.* first.\n")
        self.assertIn("scripts/run.sh:2: cites src/invocation/gone.*, which matches no file",
                      stderr)

    def test_the_repository_cites_only_what_exists(self):
        tree = self.root / "repo"
        tree.mkdir()
        for name in ("README.md", "ARCHITECTURE.md", "CMakeLists.txt", ".gitignore"):
            shutil.copy(REPO / name, tree / name)
        for name in ("docs", "src", "tests", "bench", "fuzz", "scripts", "cmake", "examples"):
            shutil.copytree(REPO / name, tree / name,
                            ignore=shutil.ignore_patterns("node_modules", "corpus-work"))
        clean = run(tree)
        self.assertEqual(clean.returncode, 0, clean.stderr)
        # One broken citation in the copy is found, with its file and line.
        header = tree / "src" / "invocation" / "plan.h"
        header.write_text(header.read_text() + '// See docs/pipeline.md "No such heading".\n')
        result = run(tree)
        self.assertEqual(result.returncode, 1)
        line = len(header.read_text().splitlines())
        self.assertIn(f"src/invocation/plan.h:{line}: cites the heading \"No such heading\"",
                      result.stderr)


if __name__ == "__main__":
    unittest.main()
