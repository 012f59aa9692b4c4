"""Reproducible random tie breaks of adaptive routing: a hash of a per-packet seed and a hop count.

Every packet draws a 64-bit ``tie`` seed when it is created; its h-th routing decision among
equally good links uses the splitmix64 hash of ``tie + h`` (Steele, Lea & Flood, "Fast
splittable pseudorandom number generators", 2014, the finaliser of SplitMix64). So a decision
does not depend on what else is simulated beside the packet, and the fast engine and the
plain-Python reference draw the same numbers.
"""

from __future__ import annotations

import numpy as np

__all__ = ["tie_uniform", "tie_uniform_py"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MASK = (1 << 64) - 1


def tie_uniform(tie: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Uniform [0, 1) numbers from the splitmix64 hash of ``tie + (h + 1) * golden`` (uint64 wrap-around).

    Parameters
    ----------
    tie : ndarray of uint64
        The packets' tie seeds.
    h : ndarray of int
        The packets' hop counts (one decision per hop).

    Returns
    -------
    ndarray of float64

    Examples
    --------
    >>> float(tie_uniform(np.array([1], np.uint64), np.array([0]))[0]) == tie_uniform_py(1, 0)
    True
    """
    with np.errstate(over="ignore"):
        z = tie + h.astype(np.uint64) * _GOLDEN + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def tie_uniform_py(tie: int, h: int) -> float:
    """:func:`tie_uniform` for one packet, in plain Python integers (the reference engine's).

    Examples
    --------
    >>> 0.0 <= tie_uniform_py(12345, 3) < 1.0
    True
    """
    g = 0x9E3779B97F4A7C15
    z = (tie + h * g + g) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    z ^= z >> 31
    return (z >> 11) / (1 << 53)
