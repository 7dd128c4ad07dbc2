"""
Class ids the simulator gives returns of its own (world objects carry theirs from the world file).

An object's default class_id is its material index (docs/worlds.md, "Materials"); the ids below
are beyond them, so a labelled cloud tells weather returns from surfaces.
"""

#: Rain and fog/haze clutter: the backscatter of the air itself (core/physics/clutter.py).
PRECIPITATION_CLASS = 20
#: A smoke volume that stopped the ray (core/raycast).
SMOKE_CLASS = 21
#: A mirror's ghost: a surface seen through a specular reflection, reported at the folded range
#: along the beam (physics/specular.py); its points also carry return_selection.FLAG_GHOST.
GHOST_CLASS = 22
