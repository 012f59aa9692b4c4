"""Coordinates, node ids and channel numbering of the k-ary n-cube used by the load analysis.

Conventions (shared with the rest of :mod:`universal`):

* a node is a coordinate vector ``(x_0, ..., x_{n-1})`` with ``0 <= x_i < k``; its id is
  ``sum_i x_i * k**i``, so ``x_0`` (printed first, "x") is the lowest dimension and the one
  dimension-order routing corrects first; its label is ``"x0,x1,..."``;
* a *channel* is a directed link. The analysis numbers them
  ``channel = node * 2n + 2 * dim + (0 for the + direction, 1 for the - direction)``, where
  ``node`` is the tail. :meth:`Torus.channel_ends` turns an index back into (tail, head).

The analysis needs ``k >= 3``: for ``k = 2`` the + and - links of a dimension join the same two
nodes and "direction" loses its meaning.

Capacity follows Towles, Dally & Boyd (2003), "Throughput-centric routing algorithm design",
§3.1, and Singh et al. (2003), "GOAL", §2.1: the per-channel load of uniform traffic under minimal,
balanced routing, ``k/8`` for even ``k`` and ``(k^2 - 1)/(8k)`` for odd ``k`` (SPEC §7).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from universal.errors import UserError

__all__ = ["Torus", "MAX_NODES"]

#: Largest torus the analysis accepts: its per-class pair-load tables are N x N int64.
MAX_NODES = 4096


@dataclass(frozen=True)
class Torus:
    """The k-ary n-cube ``torus:k=K,n=N`` as seen by the channel-load analysis.

    Parameters
    ----------
    k : int
        Radix (nodes per dimension), at least 3.
    n : int
        Number of dimensions, at least 1.

    Examples
    --------
    >>> t = Torus(9, 2)
    >>> t.N, t.num_channels
    (81, 324)
    >>> t.node((3, 4)), t.label(39)
    (39, '3,4')
    >>> t.channel_ends(t.channel(0, 0, +1))
    (0, 1)
    >>> t.capacity_load
    Fraction(10, 9)
    """

    k: int
    n: int

    def __post_init__(self) -> None:
        if not isinstance(self.k, (int, np.integer)) or not isinstance(self.n, (int, np.integer)):
            raise UserError("torus parameters k and n must be integers")
        if self.k < 3:
            raise UserError(f"the load analysis needs k >= 3 on a torus (k={self.k}: the + and - "
                            "links of a dimension would join the same two nodes)")
        if self.n < 1:
            raise UserError(f"a torus needs n >= 1 dimensions (got n={self.n})")
        if self.k ** self.n > MAX_NODES:
            raise UserError(f"torus:k={self.k},n={self.n} has {self.k ** self.n} nodes; the load "
                            f"analysis handles at most {MAX_NODES} (its tables are N x N)")

    # ------------------------------------------------------------------ sizes
    @property
    def N(self) -> int:  # noqa: N802 - N is the papers' name for the node count
        """Number of nodes ``k**n``."""
        return self.k ** self.n

    @property
    def num_channels(self) -> int:
        """Number of directed channels ``2n * N``."""
        return 2 * self.n * self.N

    @cached_property
    def powers(self) -> np.ndarray:
        """``k**i`` for each dimension ``i`` (int64)."""
        return self.k ** np.arange(self.n, dtype=np.int64)

    @cached_property
    def coords(self) -> np.ndarray:
        """Coordinates of every node, shape ``(N, n)``, row ``v`` is node ``v``."""
        ids = np.arange(self.N, dtype=np.int64)
        return (ids[:, None] // self.powers[None, :]) % self.k

    # ------------------------------------------------------------------ nodes
    def node(self, coords) -> int | np.ndarray:
        """Node id(s) of coordinate vector(s) (last axis = dimension), taken modulo ``k``."""
        c = np.asarray(coords, dtype=np.int64) % self.k
        ids = c @ self.powers
        return int(ids) if ids.ndim == 0 else ids

    def label(self, node: int) -> str:
        """Printed label ``"x0,x1,..."`` of a node."""
        return ",".join(str(int(x)) for x in self.coords[int(node)])

    def parse_node(self, text: str) -> int:
        """Node id from its id (``"39"``) or its label (``"3,4"``); UserError if not a node."""
        text = text.strip()
        try:
            if "," in text:
                parts = [int(p) for p in text.split(",")]
                if len(parts) != self.n or not all(0 <= p < self.k for p in parts):
                    raise ValueError
                return self.node(parts)
            value = int(text)
        except ValueError:
            raise UserError(f"{text!r} is not a node of torus:k={self.k},n={self.n}") from None
        if not 0 <= value < self.N:
            raise UserError(f"{text!r} is not a node of torus:k={self.k},n={self.n}")
        return value

    def sub(self, a, b) -> np.ndarray:
        """Coordinate-wise ``a - b`` (mod k) of node ids, i.e. the offset of ``a`` seen from ``b``."""
        ca = self.coords[np.asarray(a, dtype=np.int64)]
        cb = self.coords[np.asarray(b, dtype=np.int64)]
        return ((ca - cb) % self.k) @ self.powers

    def add(self, a, b) -> np.ndarray:
        """Coordinate-wise ``a + b`` (mod k) of node ids (translation of ``a`` by offset ``b``)."""
        ca = self.coords[np.asarray(a, dtype=np.int64)]
        cb = self.coords[np.asarray(b, dtype=np.int64)]
        return ((ca + cb) % self.k) @ self.powers

    @cached_property
    def offset_table(self) -> np.ndarray:
        """``offset_table[s, d] = d - s`` coordinate-wise: the relative offset of every pair (N x N).

        It is cached because every relative-routing computation (Towles, "Finding worst-case
        permutations", §4.2) indexes the pair loads from node 0 with it.
        """
        c = self.coords
        return (((c[None, :, :] - c[:, None, :]) % self.k) @ self.powers).astype(np.int64)

    def min_distance(self, offsets) -> np.ndarray:
        """Minimal hop count from node 0 to each node in ``offsets`` (Lee distance)."""
        c = self.coords[np.asarray(offsets, dtype=np.int64)]
        return np.minimum(c, self.k - c).sum(axis=-1)

    # --------------------------------------------------------------- channels
    def channel(self, tail, dim, sign) -> int | np.ndarray:
        """Channel index of the link leaving ``tail`` in dimension ``dim``, direction ``sign`` (+1/-1)."""
        tail = np.asarray(tail, dtype=np.int64)
        dim = np.asarray(dim, dtype=np.int64)
        back = (np.asarray(sign) < 0).astype(np.int64)
        c = tail * 2 * self.n + 2 * dim + back
        return int(c) if c.ndim == 0 else c

    def channel_parts(self, channel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(tail, dim, sign) of channel index/indices."""
        c = np.asarray(channel, dtype=np.int64)
        tail = c // (2 * self.n)
        dim = (c % (2 * self.n)) // 2
        sign = 1 - 2 * (c % 2)
        return tail, dim, sign

    def channel_ends(self, channel: int) -> tuple[int, int]:
        """(tail node, head node) of a channel index."""
        tail, dim, sign = (int(x) for x in self.channel_parts(channel))
        head_coords = self.coords[tail].copy()
        head_coords[dim] = (head_coords[dim] + sign) % self.k
        return tail, int(self.node(head_coords))

    def channel_label(self, channel: int) -> str:
        """``"tail->head"`` with node labels, e.g. ``"0,0->1,0"``."""
        tail, head = self.channel_ends(channel)
        return f"{self.label(tail)}->{self.label(head)}"

    # --------------------------------------------------------------- capacity
    @property
    def capacity_load(self) -> Fraction:
        """Per-channel load of uniform traffic under minimal balanced routing.

        ``k/8`` for even ``k``, ``(k^2 - 1)/(8k)`` for odd ``k``; a throughput is reported as
        a fraction of capacity as ``capacity_load / max_load``.
        """
        k = self.k
        return Fraction(k, 8) if k % 2 == 0 else Fraction(k * k - 1, 8 * k)

    @property
    def average_min_distance(self) -> Fraction:
        """Average minimal hop count over all N^2 ordered pairs (including s = d)."""
        per_dim = sum(min(x, self.k - x) for x in range(self.k))
        return Fraction(self.n * per_dim, self.k)

    @property
    def name(self) -> str:
        return f"torus:k={self.k},n={self.n}"
