"""
A node's one line while it waits for its world: a load that takes longer than LOAD_NOTICE_S.

The world loads in the node's constructor (meshes parsed, then cached; heightfields; SDF
includes). A load that ends within LOAD_NOTICE_S says nothing more than the start line after
it; a longer one gets one warning, from a timer thread, naming the file and what it reads
(core/world/outline.py), so a user knows why the start line has not come yet.
"""

import contextlib
import threading

from ubot_lidar_sim.core.world.outline import outline

LOAD_NOTICE_S = 1.0


def loading_line(world_file):
    """Return the line of a node still loading world_file."""
    try:
        what = outline(world_file)
    except Exception:  # noqa: B902 (the load itself reports what is wrong with the file)
        what = 'its content could not be counted'
    return (f'waiting for the world: loading {world_file!r} ({what}); the node starts when '
            'it is loaded')


def loading_world(node, world_file, seconds=LOAD_NOTICE_S):
    """Return said_when_slow: node's warning loading_line(world_file) once seconds pass."""
    return said_when_slow(lambda: node.get_logger().warning(loading_line(world_file)), seconds)


@contextlib.contextmanager
def said_when_slow(say, seconds):
    """Run the body; when it has not ended after seconds, call say() (from a timer thread)."""
    timer = threading.Timer(seconds, say)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
