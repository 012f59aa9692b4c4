"""Traffic patterns between the terminals of the networks with concentration (dragonfly, fat
tree, flattened butterfly, HyperX), for the all-pairs analysis of :mod:`universal.oblivious.graphs`
and the open-loop sources: the T terminals (numbered first) form one line, so ``uniform``,
``bitcomp``, ``random-perms`` and the others act on them as on a line of T nodes, and the
dragonfly adds ``wc-group``, its adversarial group-to-group pattern.
"""

from __future__ import annotations

import numpy as np

from universal.errors import UserError
from universal.networks import Network
from universal.oblivious.traffic import Grid, Traffic, make_traffic, rational_traffic
from universal.registry import Spec, check_known_params

__all__ = ["terminal_traffic", "wc_group_traffic"]


def terminal_traffic(network: Network, spec: Spec, text: str) -> Traffic:
    """A traffic pattern over the terminals of a network with terminals: ``wc-group`` on a
    dragonfly, otherwise the patterns of a line of T nodes (``uniform``, ``bitcomp``, ...).

    Parameters
    ----------
    network : Network
        A network with terminals (dragonfly, fat tree, flattened butterfly, HyperX).
    spec : Spec
        The parsed pattern name.
    text : str
        The pattern as written (its name in tables).

    Returns
    -------
    Traffic
        A T x T pattern, terminal ``t`` being row and column ``t``.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.registry import parse_spec
    >>> terminal_traffic(build_network("fattree:k=2,n=2"), parse_spec("bitcomp"), "bitcomp").perm.tolist()
    [3, 2, 1, 0]

    References
    ----------
    Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
    networks", ISCA 2003, §2 (the named patterns); Kim, Dally, Scott & Abts, "Technology-Driven,
    Highly-Scalable Dragonfly Topology", ISCA 2008, §4.2 (``wc-group``).
    """
    if spec.name == "wc-group":
        check_known_params(spec, set())
        return wc_group_traffic(network)
    if spec.name in ("neighbor", "transpose", "tornado", "diagonal"):
        raise UserError(f"traffic {spec.name!r} needs a mesh, torus or graph; on {network.name} use uniform, "
                        f"random-perms, bitcomp, bitrev, shuffle, hotspot, matrix:file=, permutation:file=" +
                        (" or wc-group" if network.kind == "dragonfly" else ""))
    return make_traffic(Grid(len(network.terminals), 1, network.name), text)


def wc_group_traffic(network: Network) -> Traffic:
    """The dragonfly's worst case for minimal routing (Kim et al. 2008, §4.2): every terminal of
    group ``i`` sends to group ``i + 1 (mod g)``, spread uniformly over its ``a*p`` terminals (a
    matrix, ``1/(a*p)`` to each, not one permutation).

    Parameters
    ----------
    network : Network
        A dragonfly.

    Returns
    -------
    Traffic
        A T x T matrix pattern named ``wc-group``, exact.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> t = wc_group_traffic(build_network("dragonfly:p=2"))
    >>> t.exact[1], int(t.exact[0][0].sum()), t.exact[0][0, 8:16].tolist()   # group 0 -> group 1
    (8, 8, [1, 1, 1, 1, 1, 1, 1, 1])

    References
    ----------
    J. Kim, W. J. Dally, S. Scott & D. Abts, "Technology-Driven, Highly-Scalable Dragonfly
    Topology", ISCA 2008, §4.2 (adversarial traffic: group i to group i+1).
    """
    if network.kind != "dragonfly":
        raise UserError(f"traffic 'wc-group' is defined on the dragonfly, not on {network.name}")
    p, a, g = network.params["p"], network.params["a"], network.params["g"]
    T = len(network.terminals)
    group = np.arange(T) // (a * p)
    num = (group[None, :] == (group[:, None] + 1) % g).astype(np.int64)
    return rational_traffic("wc-group", num, a * p)
