"""``python -m universal``: see :mod:`universal.cli`."""

import signal
import sys


def _main() -> int:
    try:
        from universal.cli import main  # a Ctrl-C while the modules load is an interruption too
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return main()


if __name__ == "__main__":
    status = _main()
    # The work is over: a Ctrl-C now could only turn the exit into a traceback from the interpreter.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(status)
