"""A butterfly's level paths kept as the rows their packets pass, their link ids written out only
when something reads them (Meyer auf der Heide & Scheideler, "Communication in Parallel Systems",
1996, §3: level paths and Valiant's trick on the butterfly).

A level path on BF(d) is fixed by the row it enters at and the row it leaves at (it crosses at
level ``i`` exactly when bit ``i`` of the two differs), and Valiant's trick is two such passes
back to back. So a large collection of them needs, to be routed, only those rows: C is counted
from them (:func:`universal.paths.level_loads.level_loads`) and the engine's loop on the node
words starts from them (:func:`universal.engine.compiled_levels.route_levels` with ``rows``).
The path array, 4 bytes per hop (672 MB for a 4-relation over Valiant paths on BF(20), half the
run's peak before), is then never allocated; anything else that reads ``links`` (``--analyze``,
``--links``, traces, OPT, a bounded-buffer run) gets it filled on first use, the same ids the
eager path systems write.
"""

from __future__ import annotations

import numpy as np

from universal.networks import Network
from universal.paths.collection import PathCollection

__all__ = ["LevelRowsCollection"]


class LevelRowsCollection(PathCollection):
    """Level paths on ``len(passes)`` butterflies of dimension ``d`` back to back, kept as rows.

    Parameters
    ----------
    network : Network
        The host: BF(d), or two butterflies back to back for Valiant's trick (levels ``k d ..
        (k + 1) d`` are pass ``k``'s).
    d : int
        The butterflies' dimension.
    passes : list of (ndarray, ndarray)
        Per pass, the row every packet enters it at and the row it leaves at (``0..2^d - 1``);
        a pass's exit rows are the next pass's entry rows.
    sources, dests : ndarray of int64
        The paths' end nodes in the host.
    system, note : str
        As :class:`PathCollection`'s.

    Attributes
    ----------
    level_rows : tuple of (int, list of (ndarray, ndarray))
        ``(d, passes)``: what the paths are made of.
    links : ndarray
        The path array, filled (:func:`universal.paths.level_loads.fill_level_links`) when first
        read and kept from then on.

    Examples
    --------
    >>> from universal.networks import butterfly
    >>> a, b = np.array([0, 3]), np.array([3, 3])
    >>> paths = LevelRowsCollection(butterfly(2), 2, [(a, b)], a, 8 + b, "dimension-order")
    >>> paths.dilation, paths.is_leveled, "_links" in paths.__dict__ and paths.__dict__["_links"] is None
    (2, True, True)
    >>> paths.links.tolist()        # row 0 crosses at both levels, row 3 at neither
    [2, 22, 12, 28]
    """

    def __init__(self, network: Network, d: int, passes: list[tuple[np.ndarray, np.ndarray]], sources: np.ndarray,
                 dests: np.ndarray, system: str, note: str = "") -> None:
        self.level_rows = (d, passes)
        offsets = np.arange(len(sources) + 1, dtype=np.int64) * (d * len(passes))
        super().__init__(network, offsets, None, sources, dests, system, note)
        # every link climbs one level (an even id), so the collection is leveled by construction
        self.__dict__["is_leveled"] = True

    def __post_init__(self) -> None:
        pass      # no link ids to convert: they are written in the host's link type when read

    @property
    def links(self) -> np.ndarray:
        links = self.__dict__.get("_links")
        if links is None:
            from universal.paths.level_loads import fill_level_links    # imports numba: kept off start-up
            d, passes = self.level_rows
            links = np.empty((self.size, d * len(passes)), dtype=self.network.link_type)
            fill_level_links(passes, d, links)
            links = links.reshape(-1)
            self.__dict__["_links"] = links
        return links

    @links.setter
    def links(self, value) -> None:
        # PathCollection's __init__ passes None: the links stay unwritten until read
        self.__dict__["_links"] = None if value is None else np.asarray(value).astype(self.network.link_type,
                                                                                      copy=False)

    @property
    def links_written(self) -> bool:
        """Whether the path array has been filled (something read :attr:`links`)."""
        return self.__dict__.get("_links") is not None
