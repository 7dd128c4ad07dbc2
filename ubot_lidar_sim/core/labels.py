"""
Class ids the simulator gives returns of its own (world objects carry theirs from the world file).

An object's default class_id is its material index (docs/worlds.md, "Materials"); the ids below
are beyond them, so a labelled cloud tells weather returns from surfaces.
"""

#: Rain and fog/haze clutter: the backscatter of the air itself (core/physics/clutter.py).
PRECIPITATION_CLASS = 20
#: A smoke volume that stopped the ray (core/raycast).
SMOKE_CLASS = 21
#: The robot's own body (core/robot/body.py): a return from a link of the sensor's robot.
SELF_CLASS = 22
