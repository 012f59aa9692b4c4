"""universal: a packet-level emulator for universal routing.

Route a problem on a network along a path system with a contention-resolution protocol,
and compare the routing time with the congestion C, the dilation D and the protocol's bound
(Meyer auf der Heide & Scheideler, "Communication in Parallel Systems").
"""

__version__ = "0.1.0"
