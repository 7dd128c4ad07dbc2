"""The parameters every node shares (the world) and every sensor shares (seed, QoS, fleet)."""

from dataclasses import dataclass

from ubot_lidar_sim.core.config.fields import Floats, parameter as _p, Strs, Validated
from ubot_lidar_sim.core.limits import CASTER_NAMES, DEFAULT_CASTER, GLASS_MODELS
from ubot_lidar_sim.core.world.schema import SDF_GEOMETRIES, SDF_GEOMETRY_DEFAULT


@dataclass(frozen=True)
class WorldParams(Validated):
    """The world a node loads: its file, frame and SDF options (sensors and base_sim alike)."""

    world_file: str = _p('flat', 'World YAML or SDF (.world, .sdf) path (relative: to the '
                         "working directory), or a built-in world: 'demo', 'flat', 'example'.",
                         read_only=True, nonempty=True)
    world_frame: str = _p('map', 'Ground-truth world frame of the world file and the poses.',
                          read_only=True, nonempty=True)
    # SDF worlds (docs/worlds.md, "Gazebo SDF worlds")
    model_paths: Strs = _p((), 'Directories searched for model:// URIs after the Gazebo '
                           'resource path variables.', item_type=str, read_only=True)
    sdf_geometry: str = _p(SDF_GEOMETRY_DEFAULT, 'Which SDF geometry the rays meet: visual '
                           '(what a GPU lidar sees) or collision (CPU lidar, physics).',
                           choices=SDF_GEOMETRIES, read_only=True)
    caster: str = _p(DEFAULT_CASTER, 'Ray-casting backend: open3d or embree (Embree 4, casts '
                     'without holding the GIL); the same first hits within float32 rounding.',
                     choices=CASTER_NAMES, read_only=True)
    sdf_missing: str = _p('error', 'A model or mesh an SDF world names that is not there: error '
                          '(refuse the world) or warn (load the rest, one warning naming '
                          'every missing one).', choices=('error', 'warn'), read_only=True)


@dataclass(frozen=True)
class SharedParams(WorldParams):
    """Parameters every sensor node declares (docs/parameters.md)."""

    seed: int = _p(0, 'Seed of the noise, clutter and roughness streams.', min=0, max=2**63 - 1)
    qos_reliability: str = _p('reliable', 'QoS reliability of the output topic.',
                              choices=('reliable', 'best_effort'), read_only=True)
    qos_depth: int = _p(5, 'QoS history depth of the output topic.', min=1, max=1000,
                        read_only=True)
    ignored_objects: Strs = _p((), 'Names of world objects the rays pass through.',
                               item_type=str)
    glass: str = _p('physical', 'Panes (materials glass, tinted_glass): physical passes the '
                    'rays on attenuated with a specular return near normal incidence, opaque '
                    'makes them walls (docs/physics.md, "Glass and mirrors").',
                    choices=GLASS_MODELS)
    fleet_frames: Strs = _p((), 'TF frames of the other robots of a fleet, each drawn as a '
                            'fleet_body_size_m box standing on its frame (an actor, '
                            'docs/worlds.md).', item_type=str, read_only=True)
    fleet_body_size_m: Floats = _p((0.8, 0.6, 0.5), 'Body box (x, y, z) of the fleet robots.',
                                   'm', item_type=float, length=3, min=0.01, max=100.0,
                                   read_only=True)
    fleet_base_height_m: float = _p(0.4, "Height of the fleet robots' frames above the ground "
                                    "(demo_driver's base_height_m): the body box stands on the "
                                    'ground that far below its frame.', 'm', min=0.0, max=100.0,
                                    read_only=True)
