"""Keep the garbage collector's passes short and rare on a long-running server.

Start-up leaves a few hundred thousand long-lived objects (modules, classes, pydantic schemas, SQLAlchemy mappers,
the route table). CPython's oldest generation scans all of them on every full collection, which took ~80 ms and
landed inside whichever request happened to trigger it (p99 spikes of 100+ ms). ``gc.freeze()`` moves them to the
permanent generation, which collections skip; objects created later are collected as before.

A turn allocates a few thousand containers (decoded rows, chat messages, JSON) and frees nearly all of them by
reference counting. With CPython's default young-generation threshold (700 allocations net of frees) a send ran
about one young collection, ~0.2-0.3 ms of CPU spent finding almost nothing to free; a conversation_search turn ran
three or four. At ``YOUNG_THRESHOLD`` (`MEMLET_GC_YOUNG_THRESHOLD`) a young collection runs once per ~100 sends and
takes a few ms (`bench/bench_ab.py . . --env-a MEMLET_GC_YOUNG_THRESHOLD=700` compares the CPU per send). The older
generations keep CPython's ratios, so cyclic garbage is still freed, only later: the young generation holds at most
that many extra objects.
"""

import gc

YOUNG_THRESHOLD = 20_000


def freeze_startup_objects(young_threshold: int = YOUNG_THRESHOLD) -> int:
    """Collect once, exempt everything alive from later collections and set the young generation's threshold;
    returns how many objects were frozen."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(young_threshold, middle, old)
    return gc.get_freeze_count()
