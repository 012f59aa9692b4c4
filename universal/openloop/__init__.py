"""Open-loop mode: packets created at a rate while the network runs; latency against offered
load, accepted throughput and saturation (SPEC §11; Singh, Dally, Gupta & Towles, "GOAL: a
load-balanced adaptive routing algorithm for torus networks", 2003, §2, §4, §5).
"""

from universal.engine.creation import CHUNK, RunSpec, draw_chunk
from universal.engine.runs import PRIORITIES, simulate, simulate_batch
from universal.engine.measure import Measurement, RunResult
from universal.engine.routes import ADAPTIVE_ROUTINGS, Router, build_router
from universal.engine.workload import INJECTIONS, build_injection
from universal.openloop.workload import capacity_rate, offered_traffic

__all__ = ["CHUNK", "RunSpec", "draw_chunk", "PRIORITIES", "simulate", "simulate_batch", "Measurement",
           "RunResult", "ADAPTIVE_ROUTINGS", "Router", "build_router", "INJECTIONS", "build_injection",
           "capacity_rate", "offered_traffic"]
