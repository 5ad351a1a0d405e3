#!/usr/bin/python3
"""The agreement check of check_sigs.py, fed broken inputs: it must notice a
declaration missing from either side, a type that differs, and an export
neither declares. Paths come from the environment (tests/capi/CMakeLists.txt):
RIG_SIGS, RIG_HEADER, RIG_LIBRARY."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_sigs  # noqa: E402


def read(path):
    with open(path) as f:
        return f.read()


class SigsAgree(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sigs_text = read(os.environ["RIG_SIGS"])
        cls.header_text = read(os.environ["RIG_HEADER"])
        cls.exported = check_sigs.exported_symbols(os.environ["RIG_LIBRARY"])

    def problems(self, sigs_text=None, header_text=None, exported=None):
        sigs = check_sigs.parse_sigs(sigs_text if sigs_text is not None else self.sigs_text)
        header = check_sigs.parse_header(header_text if header_text is not None
                                         else self.header_text)
        return check_sigs.disagreements(sigs, header,
                                        exported if exported is not None else self.exported)

    def test_the_tree_agrees(self):
        self.assertEqual(self.problems(), [])
        self.assertIn("rig_model_run", check_sigs.parse_sigs(self.sigs_text))
        self.assertTrue(all(name.startswith("rig_") for name in self.exported), self.exported)

    def test_a_declaration_missing_from_the_header(self):
        header = self.header_text.replace("RIG_API int32_t rig_model_submit", "int32_t rig_x")
        self.assertIn("rig_model_submit is in rig.sigs but not declared in rig.h",
                      self.problems(header_text=header))

    def test_a_function_missing_from_the_sigs(self):
        sigs = "\n".join(l for l in self.sigs_text.splitlines()
                         if not l.startswith("rig_string_free"))
        self.assertIn("rig_string_free is declared in rig.h but missing from rig.sigs",
                      self.problems(sigs_text=sigs))

    def test_a_type_that_differs(self):
        sigs = self.sigs_text.replace("rig_model_submit(rig_model*, uint32_t, uint64_t)",
                                      "rig_model_submit(rig_model*, uint64_t, uint64_t)")
        found = [p for p in self.problems(sigs_text=sigs) if p.startswith("rig_model_submit differs")]
        self.assertEqual(len(found), 1, found)

    def test_an_export_neither_declares(self):
        exported = set(self.exported) | {"rig_secret", "_ZN3rig6DeviceD0Ev"}
        problems = self.problems(exported=exported)
        self.assertIn("the library exports rig_secret, which neither rig.sigs nor rig.h declares",
                      problems)
        self.assertIn("the library exports _ZN3rig6DeviceD0Ev, which neither rig.sigs nor rig.h "
                      "declares", problems)

    def test_a_function_the_library_lacks(self):
        exported = set(self.exported) - {"rig_bench"}
        self.assertIn("rig_bench is in rig.sigs but the library does not export it",
                      self.problems(exported=exported))

    def test_types_outside_the_closed_set(self):
        with self.assertRaises(ValueError):
            check_sigs.parse_sigs("rig_f(struct foo*) -> int32_t\n")
        with self.assertRaises(ValueError):
            check_sigs.parse_sigs("rig_f() int32_t\n")


if __name__ == "__main__":
    unittest.main()
