"""export and kind detection: the plugin class is named once, and its base says its kind."""

import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import turnpike  # noqa: E402
from turnpike import Sink, Source, Transform, export, exported  # noqa: E402
from turnpike._plugin import _forget_export, kind_of  # noqa: E402

DETECT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "component", "detect_kind.py")


class A(Transform):
    pass


class B(Source):
    pass


class ExportTest(unittest.TestCase):
    def setUp(self):
        _forget_export()
        self.addCleanup(_forget_export)

    def test_export_names_the_class_once(self):
        self.assertIs(export(A), A)
        self.assertIs(exported(), A)
        with self.assertRaises(RuntimeError) as e:
            export(B)
        self.assertIn("already called (with A)", str(e.exception))
        with self.assertRaises(RuntimeError):
            export(A)

    def test_only_plugin_classes_are_exported(self):
        class Both(Source, Sink):
            pass

        for bad in (object, int, A(), "A", Both):
            with self.subTest(bad=bad), self.assertRaises(TypeError):
                export(bad)
        with self.assertRaises(LookupError) as e:
            exported()
        self.assertEqual(str(e.exception), "plugin.py does not call turnpike.export(YourClass)")

    def test_the_kind_comes_from_the_base_class(self):
        class C(B):
            pass

        self.assertEqual([kind_of(A), kind_of(B), kind_of(C), kind_of(Sink)], ["transform", "source", "source", "sink"])

    def test_the_version_is_the_contracts(self):
        self.assertEqual(turnpike.__version__, "0.1.6")


class DetectKindTest(unittest.TestCase):
    def detect(self, source):
        with tempfile.TemporaryDirectory() as project:
            if source is not None:
                with open(os.path.join(project, "plugin.py"), "w") as f:
                    f.write(source)
            done = subprocess.run([sys.executable, DETECT, project], capture_output=True, text=True, cwd=project)
        return done.returncode, done.stdout.strip(), done.stderr.strip()

    def test_each_kind_is_printed(self):
        for base in ("Transform", "Source", "Sink"):
            with self.subTest(base=base):
                source = f"from turnpike import {base}, export\nprint('noise')\nclass P({base}):\n    pass\nexport(P)\n"
                self.assertEqual(self.detect(source), (0, base.lower(), "noise"))

    def test_what_to_fix_is_said_on_one_line(self):
        cases = [
            (None, "no plugin.py in"),
            ("from turnpike import Transform\nclass P(Transform):\n    pass\n", "plugin.py does not call turnpike.export(YourClass)"),
            ("import no_such_module\n", "plugin.py failed to import: ModuleNotFoundError"),
            ("from turnpike import export\nexport(dict)\n", "plugin.py failed to import: TypeError: export(dict)"),
        ]
        for source, message in cases:
            with self.subTest(message=message):
                code, out, err = self.detect(source)
                self.assertEqual((code, out), (1, ""))
                self.assertIn(message, err)
                self.assertNotIn("\n", err)


if __name__ == "__main__":
    unittest.main()
