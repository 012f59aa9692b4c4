"""Contention resolution shared by the engines: which of the packets that want a link cross it.

The waiting packets are kept lowest priority first, so the winners of a link are its last
``bandwidth`` contenders. Both the one engine (:mod:`universal.engine.runs`) and the
bufferless rounds (:mod:`universal.engine.bufferless`) use these functions; keeping them here
lets the two import each other's entry points without an import cycle.
"""

from __future__ import annotations

import numpy as np


def _assignment_keeps_last() -> bool:
    """Whether ``a[idx] = vals`` with repeated indices leaves the last value, as numpy does.

    NumPy does not promise this in general, so it is checked once per process on a large
    random case; if it ever failed, the engine would use ``np.maximum.at`` instead.
    """
    rng = np.random.default_rng(12345)
    idx = rng.integers(0, 1000, size=200_000).astype(np.int32)
    positions = np.arange(len(idx), dtype=np.int32)
    last = np.full(1000, -1, dtype=np.int32)
    last[idx] = positions
    expected = np.full(1000, -1, dtype=np.int32)
    np.maximum.at(expected, idx, positions)
    return bool(np.array_equal(last, expected))


_KEEPS_LAST = _assignment_keeps_last()

#: The one engine's per-link counts (waiting packets, buffer occupancy) are int32, updated with
#: ``ufunc.at`` and this matching scalar: with a Python int numpy takes a path 50 times slower.
ONE = np.int32(1)


def last_per_link(want: np.ndarray, positions: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Mask of the entries that are the last (highest position) for their link.

    ``positions`` is increasing, so after ``scratch[want] = positions`` the last position of
    each link remains in ``scratch`` (see :func:`_assignment_keeps_last`).

    Parameters
    ----------
    want : ndarray of int64
        The link each entry waits for.
    positions : ndarray
        Increasing positions of the entries (their priority order).
    scratch : ndarray of int
        One slot per link; overwritten.

    Returns
    -------
    ndarray of bool

    Examples
    --------
    >>> import numpy as np
    >>> last_per_link(np.array([0, 1, 0, 1, 2]), np.arange(5), np.zeros(3, dtype=np.int64))
    array([False, False,  True,  True,  True])
    """
    if _KEEPS_LAST:
        scratch[want] = positions
    else:  # pragma: no cover - not seen with numpy 1.x or 2.x
        scratch[want] = -1
        np.maximum.at(scratch, want, positions)
    return np.take(scratch, want) == positions


def winners(want: np.ndarray, bandwidth: int, scratch: np.ndarray, arange: np.ndarray) -> np.ndarray:
    """Mask of the packets (lowest priority first) that cross: the last ``bandwidth`` per link.

    Parameters
    ----------
    want : ndarray of int64
        The link each waiting packet wants, lowest priority first.
    bandwidth : int
        B, packets per link per step.
    scratch : ndarray of int
        One slot per link; overwritten.
    arange : ndarray
        ``np.arange`` at least as long as ``want``.

    Returns
    -------
    ndarray of bool

    Examples
    --------
    Three packets want link 0; with B = 2 the two of highest priority (the last two) cross:

    >>> import numpy as np
    >>> winners(np.array([0, 0, 0, 1]), 2, np.zeros(2, dtype=np.int64), np.arange(4))
    array([False,  True,  True,  True])

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2.1.
    """
    win = last_per_link(want, arange[:len(want)], scratch)
    if bandwidth == 1:
        return win
    left = np.flatnonzero(~win)
    for _ in range(bandwidth - 1):
        if not len(left):
            break
        got = last_per_link(want[left], left, scratch)
        win[left[got]] = True
        left = left[~got]
    return win


def winners_at(want: np.ndarray, positions: np.ndarray, bandwidth: int, scratch: np.ndarray) -> np.ndarray:
    """Like :func:`winners` for the entries at ``positions`` (increasing) only.

    Parameters
    ----------
    want : ndarray of int64
    positions : ndarray
        The entries that may cross, increasing.
    bandwidth : int
    scratch : ndarray of int

    Returns
    -------
    ndarray of bool
        Aligned with ``positions``.

    Examples
    --------
    >>> import numpy as np
    >>> winners_at(np.array([0, 0, 0]), np.array([0, 1]), 1, np.zeros(1, dtype=np.int64))
    array([False,  True])
    """
    wanted = np.take(want, positions)
    win = last_per_link(wanted, positions, scratch)
    left = np.flatnonzero(~win)
    for _ in range(bandwidth - 1):
        if not len(left):
            break
        got = last_per_link(wanted[left], positions[left], scratch)
        win[left[got]] = True
        left = left[~got]
    return win


def entering_allowed(want: np.ndarray, entering: np.ndarray, room: np.ndarray, most: int,
                     scratch: np.ndarray) -> np.ndarray:
    """Positions (increasing) of the entering packets that find room in the buffer they would enter.

    ``entering`` holds positions (increasing, lowest priority first) of packets that would enter
    the buffer of the link they want, and ``room`` (aligned with it) the free places of that
    buffer; per link only the ``room`` highest-priority ones may, and never more than ``most``
    (= B: more could not cross anyway). The one engine uses this rule for bounded buffers (SPEC
    §2: a packet enters only if there was room at the start of the step). Only the links wanted
    are read, so a step costs nothing per link of the network.

    Examples
    --------
    Three packets want link 0, whose buffer has room for two; the last position is the highest
    priority:

    >>> entering_allowed(np.array([0, 0, 0]), np.array([0, 1, 2]), np.array([2, 2, 2]), 2, np.zeros(1, np.int64)).tolist()
    [1, 2]
    """
    has_room = room > 0
    left, room = entering[has_room], room[has_room]
    allowed = []
    for j in range(most):
        if not len(left):
            break
        top = last_per_link(np.take(want, left), left, scratch)
        allowed.append(left[top])
        rest = ~top & (room > j + 1)
        left, room = left[rest], room[rest]
    return np.sort(np.concatenate(allowed)) if allowed else entering[:0]
