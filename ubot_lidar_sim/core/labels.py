"""
Class ids the simulator gives returns of its own (world objects carry SemanticKITTI's).

Beyond SemanticKITTI's ids (core/class_ids.py, up to 259), so a labelled cloud tells weather,
smoke, the robot itself, mirror ghosts and false alarms from surfaces; SIM_CLASSES gives each
its name and the SemanticKITTI class it is written as under ``label_map: semantickitti``:
``outlier`` (1) for returns of no real surface where they are (SemanticKITTI marks erroneous
returns, reflections among them, outlier), ``unlabeled`` (0) for the robot's own body, which
SemanticKITTI's recordings do not contain.
"""

#: Rain and fog/haze clutter: the backscatter of the air itself (core/physics/clutter.py).
PRECIPITATION_CLASS = 1000
#: A smoke volume that stopped the ray (core/raycast).
SMOKE_CLASS = 1001
#: A return from the robot's own body (self-occlusion, core/robot).
SELF_CLASS = 1002
#: A ghost point: a target seen through a mirror, placed along the unfolded ray.
GHOST_CLASS = 1003
#: A false alarm: the background's noise crossing the threshold (core/physics/false_alarms.py).
FALSE_ALARM_CLASS = 1004

#: {class id: (name, SemanticKITTI id it is written as)}.
SIM_CLASSES = {PRECIPITATION_CLASS: ('precipitation', 1), SMOKE_CLASS: ('smoke', 1),
               SELF_CLASS: ('self', 0), GHOST_CLASS: ('ghost', 1),
               FALSE_ALARM_CLASS: ('false_alarm', 1)}
