"""The values of a scenario file's keys, checked (:mod:`universal.scenario`, SPEC §8): names and
lists of names, seeds, link buffers, the source queue, ``opt``, ``time_limit`` and the ``[sweep]`` table.

Split from :mod:`universal.scenario`, which imports these back.
"""

from __future__ import annotations

from pathlib import Path

from universal.errors import UserError
from universal.experiment import check_seed_count


def _string_list(data: dict, key: str, where: Path) -> list[str]:
    value = data.get(key)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise UserError(f"{where}: '{key}' must be a name or a non-empty list of names")
    return value


#: Seeds and seed counts are 64-bit unsigned integers (numpy's seeding takes more, but a larger
#: number is a typing mistake, and the results files keep them as JSON numbers).
MAX_SEED = 2**64 - 1


def seeds_from(value: object, first: object, where: str) -> list[int]:
    """Seeds from a count (``first .. first+count-1``) or an explicit list, each at most :data:`MAX_SEED`.

    Examples
    --------
    >>> seeds_from(3, 10, "here")
    [10, 11, 12]
    >>> seeds_from(1, 2**64, "here")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: here: 'seed' must be at most 2**64 - 1, got 18446744073709551616
    """
    if not isinstance(first, int) or isinstance(first, bool) or first < 0:
        raise UserError(f"{where}: 'seed' must be a non-negative integer")
    check_seed(first, where, "seed")
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise UserError(f"{where}: 'seeds' must be at least 1")
        check_seed_count(value, where)
        check_seed(first + value - 1, where, "seed + seeds - 1")
        return list(range(first, first + value))
    if isinstance(value, list) and value and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value):
        for s in value:
            check_seed(s, where, "seeds")
        return list(value)
    raise UserError(f"{where}: 'seeds' must be a positive count or a list of non-negative integers")


def check_seed(value: int, where: str, what: str) -> int:
    """``value`` if it fits in 64 bits (see :data:`MAX_SEED`), else one clear error."""
    if value > MAX_SEED:
        raise UserError(f"{where}: {what!r} must be at most 2**64 - 1, got {value}")
    return value


def _source_queue_setting(value: object, where: Path) -> str:
    """``source_queue``: ``all`` (default), ``fifo`` or ``fifo:w=W``, checked as the openloop
    scenario's key is (a name, then one of the models)."""
    if not isinstance(value, str):
        raise UserError(f"{where}: 'source_queue' must be a name")
    from universal.engine.source_queue import check_source_queue

    try:
        return check_source_queue(value)
    except UserError as exc:
        raise UserError(f"{where}: {exc}") from None


def _opt_setting(value: object, where: Path) -> str | None:
    """``opt``: false (default), true (OPT of the paths) or "free" (and R(G, π))."""
    if value is False:
        return None
    if value is True:
        return "paths"
    if value == "free":
        return "free"
    raise UserError(f"{where}: 'opt' must be true, false or \"free\"")


def _time_limit_setting(value: object, where: Path) -> float:
    """``time_limit``: a positive number of seconds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise UserError(f"{where}: 'time_limit' must be a positive number of seconds")
    return float(value)


def _sweep_axes(table: object, where: Path) -> dict[str, list]:
    """The ``[sweep]`` table: axis name -> non-empty list of numbers or strings."""
    if not isinstance(table, dict) or not table:
        raise UserError(f"{where}: 'sweep' must be a table of axes, e.g. [sweep] d = [4, 6, 8]")
    for name, values in table.items():
        if not isinstance(values, list) or not values or not all(
                isinstance(v, (int, float, str)) and not isinstance(v, bool) for v in values):
            raise UserError(f"{where}: sweep axis {name!r} must be a non-empty list of numbers or names")
    return dict(table)


def _buffer_setting(value: object, where: Path) -> int | None | list[int | None]:
    """``buffer``: a size >= 1, ``"unbounded"``, or a non-empty list of them."""
    values = value if isinstance(value, list) else [value]
    sizes: list[int | None] = []
    for v in values:
        if v == "unbounded":
            sizes.append(None)
        elif isinstance(v, int) and not isinstance(v, bool) and v >= 1:
            sizes.append(v)
        else:
            raise UserError(f"{where}: 'buffer' must be an integer >= 1, \"unbounded\", or a list of them")
    if not sizes:
        raise UserError(f"{where}: 'buffer' must not be an empty list")
    return sizes if isinstance(value, list) else sizes[0]
