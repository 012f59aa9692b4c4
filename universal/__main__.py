"""``python -m universal``: see :mod:`universal.cli`."""

import signal
import sys


def _main() -> int:
    try:
        # First of all, so that a Ctrl-C while the modules load waits for the import in progress to
        # end (an interrupted import can swallow it) and then becomes one line, not a traceback.
        from universal.interrupts import install_stop_handlers

        install_stop_handlers()
        from universal.cli import main
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return main()


def run() -> int:
    """The ``universal`` command (``python -m universal`` and the installed script): the exit status."""
    status = _main()
    # The work is over: a Ctrl-C now could only turn the exit into a traceback from the interpreter.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return status


if __name__ == "__main__":
    sys.exit(run())
