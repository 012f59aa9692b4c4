"""``universal scenarios``: list the built-in scenarios, one line each."""

from __future__ import annotations

import argparse

HELP = "list the built-in scenarios"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options."""


def run(args: argparse.Namespace) -> None:
    from rich.table import Table

    from universal.reporting import make_console
    from universal.scenario import list_scenarios

    table = Table(title="Built-in scenarios (python -m universal scenario NAME)", header_style="bold")
    table.add_column("name", no_wrap=True)
    table.add_column("what it shows")
    for sc in list_scenarios():
        table.add_row(sc.name, sc.description)
    make_console().print(table)
