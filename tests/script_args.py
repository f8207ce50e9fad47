"""The command line of a test script, checked against the usage its docstring states."""
import sys


def args_or_usage(doc, least):
    """sys.argv[1:] when it holds at least `least` arguments; else print the script's docstring
    (it opens with the usage) and exit 2."""
    if len(sys.argv) - 1 < least:
        print(doc)
        sys.exit(2)
    return sys.argv[1:]
