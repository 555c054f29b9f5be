"""Prints the kind of a Python plugin project (``transform``, ``source`` or ``sink``), so the
build can pick the world to compile against before running componentize-py.

    python3 detect_kind.py PROJECT_DIR

Exit 0 with the kind on stdout; exit 1 with one line on stderr saying what to fix. It imports
``plugin.py`` natively, with the SDK (the folder above this one) and PROJECT_DIR on sys.path.
"""

import contextlib
import os
import sys


def detect(project):
    """The kind, or raises SystemExit with the message to show."""
    sdk = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    project = os.path.abspath(project)
    if not os.path.isfile(os.path.join(project, "plugin.py")):
        raise SystemExit(f"no plugin.py in {project}")
    sys.path[:0] = [sdk, project]
    import turnpike
    from turnpike._plugin import kind_of

    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout carries the answer only
            import plugin  # noqa: F401
    except Exception as e:
        raise SystemExit(f"plugin.py failed to import: {type(e).__name__}: {e}".replace("\n", " ")) from None
    try:
        return kind_of(turnpike.exported())
    except LookupError:
        raise SystemExit("plugin.py does not call turnpike.export(YourClass); add it at the end, naming your plugin class") from None


def main(argv):
    if len(argv) != 2:
        print("usage: detect_kind.py PROJECT_DIR", file=sys.stderr)
        return 1
    try:
        print(detect(argv[1]))
    except SystemExit as e:
        print(e.code, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
