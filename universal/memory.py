"""Memory estimates: refuse, with one ``error:`` line, a run that would not fit in this machine.

A process that allocates more than the machine has is killed by the operating system without a
word; estimating first turns that into a message that says what to make smaller.
"""

from __future__ import annotations

import os

from universal.errors import UserError


def available_bytes() -> int | None:
    """Memory the operating system can give this process now (``MemAvailable``), or None if unknown.

    Examples
    --------
    >>> free = available_bytes()
    >>> free is None or free > 0
    True
    """
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(needed: int, what: str, available: int | None = None) -> None:
    """Raise :class:`~universal.errors.UserError` if ``needed`` bytes exceed the available memory.

    Parameters
    ----------
    needed : int
        The estimate, in bytes.
    what : str
        What needs it, for the message (e.g. ``"1,048,576 packets on butterfly:d=18"``).
    available : int, optional
        Bytes available (default: :func:`available_bytes`; no check when that is unknown).

    Examples
    --------
    >>> check_memory(10**6, "a small run", available=10**9)
    >>> check_memory(10**10, "a large run", available=10**9)
    Traceback (most recent call last):
    ...
    universal.errors.UserError: a large run would need about 10.0 GB of memory, more than the 1.0 GB available
    """
    if available is None:
        available = available_bytes()
    if available is not None and needed > available:
        raise UserError(f"{what} would need about {needed / 1e9:.1f} GB of memory, "
                        f"more than the {available / 1e9:.1f} GB available")


#: Bytes a batch route needs per link crossing of its paths (the path array's int32 link id), per
#: link of the host network (a byte of link loads while C is counted, then two bytes per edge of
#: the compiled kernel's per-link state), per packet (the problem's ends, the paths' offsets and
#: ends, the ranks, the priority order, the kernel's packet arrays, the delivery steps, and one
#: step's temporaries) and for the process itself (Python, numpy, rich, numba and its kernels).
#: Fitted above the peak resident memory of ``route --problem h-relation:h=4 --paths valiant
#: --protocols random-rank`` on BF(18), BF(19) and BF(20): 0.48, 0.75 and 1.37 GB, estimated as
#: 0.55, 0.93 and 1.71 GB. (The level paths' loop of :mod:`universal.engine.compiled_levels` keeps a
#: 16-bit word per node, half a byte per link, since: BF(20) peaks at 1.26 GB, the estimate stays
#: above it. Those runs now keep the rows (:func:`kept_rows_bytes`); with B = 2, which writes the
#: path array, BF(18) and BF(20) peak at 0.52 and 1.49 GB.)
BYTES_PER_HOP = 4
BYTES_PER_LINK = 2
BYTES_PER_PACKET = 120
BASE_BYTES = 200_000_000
#: Where the kernel routes a copy of the paths in priority order (all paths but a butterfly's level
#: paths of :data:`ROWS_FROM_HOPS` hops or more, which it reads where they are), a second 4 bytes
#: per link crossing.
BYTES_PER_COPIED_HOP = 4
#: Link crossings from which the compiled kernel routes a butterfly's level paths on their own
#: rows instead of a copy (:data:`universal.engine.compiled.ROWS_HOPS`; it does so for very small
#: batches too, and with B = 1 and buffers that never refuse at every size, whose copy the
#: estimate counts anyway: an estimate above the peak).
ROWS_FROM_HOPS = 1 << 25


def route_bytes(hops: int, links: int, packets: int, copied: bool = True) -> int:
    """Peak memory of routing a batch of ``packets`` packets with ``hops`` link crossings on a host
    of ``links`` links, roughly (see :data:`BYTES_PER_HOP` and the others).

    Parameters
    ----------
    hops, links, packets : int
    copied : bool
        Whether the kernel copies the paths (all but a butterfly's level paths).

    Returns
    -------
    int
        Bytes.

    Examples
    --------
    >>> round(route_bytes(4 * 2**20 * 40, 2 * 4 * 20 * 2**20, 4 * 2**20, copied=False) / 1e9, 2)  # BF(20)
    1.71
    """
    per_hop = BYTES_PER_HOP + (BYTES_PER_COPIED_HOP if copied else 0)
    return per_hop * hops + BYTES_PER_LINK * links + BYTES_PER_PACKET * packets + BASE_BYTES


#: A butterfly's level paths kept as the rows their packets pass and routed from them
#: (:class:`universal.paths.level_rows.LevelRowsCollection`; no path array, no copy) peak either
#: while C is counted from the rows or in the step loop. Per packet while counting: the problem's
#: ends (16 bytes), Valiant's drawn middle rows (8), the kept rows (4 per pass boundary, 12), the
#: paths' ends and offsets (16), a pass's rows sorted (8), 60 in all, 70 counted. In the loop:
#: the problem's ends, the rows, ends and offsets (44), the ranks (8), the priority order and the
#: packets' places (8), the delivery steps (8) and the two 64-bit packet words (16), 84 in all;
#: 104 fitted to BF(19) and BF(20) (below), 110 counted. Per link of the host: the network's
#: level per node (a quarter byte) and the loop's node word (16 bits per 4 links, 32 from C = 16:
#: up to a byte), and where the host keeps its link loads (:data:`KEEP_LOADS_LINKS` links or
#: fewer) the 16-bit counts and the loads (int8, int16 from C = 128) while counting, the loads
#: alone in the loop. Measured (``/usr/bin/time -v``, ``route --problem h-relation:h=4 --paths
#: valiant --protocols random-rank``): BF(17), BF(18), BF(19), BF(20) peak at 0.26, 0.36, 0.44 and
#: 0.73 GB, estimated (:func:`kept_rows_bytes`) as 0.32, 0.44, 0.53 and 0.87 GB.
BYTES_PER_ROWS_PACKET_COUNTING = 70
BYTES_PER_ROWS_PACKET = 110
#: Per 4 links (a node): the loop's node word, up to 4 bytes (its level, 1 byte, is counted apart).
BYTES_PER_4_ROWS_LINKS = 4
#: Hosts with more links than this keep a path collection's congestion C without its link loads
#: (:attr:`universal.paths.collection.PathCollection.congestion`): a byte or more per link of the host.
KEEP_LOADS_LINKS = 1 << 26


def kept_rows_bytes(packets: int, links: int) -> int:
    """Peak memory of routing ``packets`` level paths kept as rows on a butterfly host of ``links``
    links from their rows (never writing their path array), roughly (see
    :data:`BYTES_PER_ROWS_PACKET` and the others). An upper bound: every count at its widest.

    Parameters
    ----------
    packets, links : int

    Returns
    -------
    int
        Bytes.

    Examples
    --------
    >>> round(kept_rows_bytes(4 << 20, 4 * 40 << 20) / 1e9, 2)  # BF(20), Valiant 4-relation: 0.73 GB measured
    0.87
    """
    loads = links <= KEEP_LOADS_LINKS
    counting = BYTES_PER_ROWS_PACKET_COUNTING * packets + (4 if loads else 0) * links
    routing = BYTES_PER_ROWS_PACKET * packets + (2 if loads else 0) * links + BYTES_PER_4_ROWS_LINKS * links // 4
    return BASE_BYTES + links // 4 + max(counting, routing)


#: Largest link bandwidth B and buffer size b: the engines keep per-link counts in 32-bit
#: integers, and a buffer this large is no bound at all (say ``unbounded``).
MAX_LINK_SIZE = 2**31 - 1


def check_link_sizes(bandwidth: int | None = None, buffer: int | None = None) -> None:
    """Refuse a bandwidth or buffer size above :data:`MAX_LINK_SIZE` (one UserError).

    Examples
    --------
    >>> check_link_sizes(2, 8)
    >>> check_link_sizes(buffer=2**63)
    Traceback (most recent call last):
    ...
    universal.errors.UserError: buffer size 9223372036854775808 is more than 2**31 - 1 packets; give unbounded for buffers without a limit
    """
    if bandwidth is not None and bandwidth > MAX_LINK_SIZE:
        raise UserError(f"bandwidth {bandwidth} is more than 2**31 - 1 packets per link and step")
    if buffer is not None and buffer > MAX_LINK_SIZE:
        raise UserError(f"buffer size {buffer} is more than 2**31 - 1 packets; give unbounded for buffers "
                        "without a limit")
