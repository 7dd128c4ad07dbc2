"""
Dataset specs (YAML): every world x trajectory x weather x seed is one sequence of one rig.

Every problem raises SpecError '<file>: <key path>: <problem>' (the CLI prints it on one line
and exits 2), as world files do. The weather entries take the fields of core Weather by name,
so a field added there is accepted here without an edit. README "Datasets" shows an example.
"""

from dataclasses import dataclass, fields, replace
import hashlib
import itertools
import json
import math
from pathlib import Path

from ubot_lidar_sim.core import yaml_io
from ubot_lidar_sim.core.errors import ConfigError, SimError
from ubot_lidar_sim.core.physics.weather import Weather, weather_from
from ubot_lidar_sim.core.poses import (BodyTwist, pose_matrix_deg, twist_from_cli,
                                       WaypointPath)
from ubot_lidar_sim.core.resources import config_path
from ubot_lidar_sim.core.world.schema import Context, short, SMOKE_KEYS
from ubot_lidar_sim.dataset import formats as formats_mod, perception as perception_mod
from ubot_lidar_sim.dataset.formats import DEFAULT_FORMATS, parse_formats
from ubot_lidar_sim.dataset.perception import Perception
from ubot_lidar_sim.output.ros_names import check_frame_id
from ubot_lidar_sim.pipeline.record import check_sensor_topic, MAX_FRAMES
from ubot_lidar_sim.pipeline.rig import MESSAGE_OF, SENSOR_KINDS

SPEC_KEYS = ('worlds', 'trajectories', 'sensors', 'weather', 'seeds', 'frames', 'base_frame',
             'tf_rate_hz', 'compression', 'formats', *perception_mod.KEYS)
SENSOR_KEYS = ('type', 'name', 'preset', 'params', 'params_file', 'mount', 'topic')
TRAJECTORY_KEYS = ('name', 'pose', 'twist', 'waypoints', 'speed_m_s')
DEFAULT_POSE = (0.0, 0.0, 0.5, 0.0, 0.0, 0.0)   # base_link: the CLI's terrain_sensor default
MAX_SEQUENCES = 100_000     # worlds x trajectories x weather entries x seeds, checked first


class SpecError(SimError, ValueError):
    """A dataset spec key is unknown or its value is not allowed: '<file>: <key>: <problem>'."""


class _Ctx(Context):
    def error(self, where, problem):
        return SpecError(f'{self.source}: {where}: {problem}')


@dataclass(frozen=True)
class SensorSpec:
    """One sensor of the rig: kind, name, node parameters, parameter file, mount, topic."""

    kind: str
    name: str
    params: dict
    params_file: str
    mount: tuple        # x y z (m) roll pitch yaw (deg), base_frame -> sensor frame
    topic: str


@dataclass(frozen=True)
class Sequence:
    """One sequence: index, name (seq_0000), world, trajectory and weather entry, seed, frames."""

    index: int
    name: str
    world: str
    trajectory: dict
    weather: dict
    seed: int
    frames: int


@dataclass(frozen=True)
class DatasetSpec:
    """A parsed spec: the rig, the recording settings and the sequences, in spec order."""

    source: str
    sensors: tuple
    base_frame: str
    tf_rate_hz: float
    compression: str
    sequences: tuple
    formats: tuple = DEFAULT_FORMATS
    perception: Perception = Perception()

    def parameters(self, seq):
        """Everything that decides a sequence's files, as plain JSON data."""
        out = {'world': seq.world, 'trajectory': seq.trajectory, 'weather': seq.weather,
               'seed': seq.seed, 'frames': seq.frames, 'base_frame': self.base_frame,
               'tf_rate_hz': self.tf_rate_hz, 'compression': self.compression,
               'sensors': [s.__dict__ for s in self.sensors]}
        if self.formats != DEFAULT_FORMATS:     # the keys of earlier specs stay as they were
            out['formats'] = list(self.formats)
        out.update(self.perception.parameters())
        return out

    def key(self, seq):
        """sha256 of the canonical JSON of parameters(seq): a manifest row matches it."""
        text = json.dumps(self.parameters(seq), sort_keys=True, allow_nan=True)
        return hashlib.sha256(text.encode('utf-8')).hexdigest()


def weather_fields():
    """Weather entry keys: core Weather's field names, with smoke as a list of volumes."""
    return tuple(f.name for f in fields(Weather) if f.name != 'smoke_density')


def make_weather(entry, where='weather'):
    """Return the core Weather of a weather entry; ConfigError names '<where>.<field>'."""
    kw = {k: v for k, v in entry.items() if k != 'smoke'}
    smoke = entry.get('smoke', [])
    names = {name: f'{where}.{name}' for name in weather_fields()}
    return weather_from(names, **kw, smoke=[[*s['center'], s['radius_m']] for s in smoke],
                        smoke_density=[s['density'] for s in smoke])


def _keys(ctx, obj, allowed, where):
    if not isinstance(obj, dict):
        raise ctx.error(where, f'expected a mapping, got {short(obj)}')
    for key in obj:
        if key not in allowed:
            raise ctx.error(f'{where}.{key}' if where else str(key),
                            f'unknown key, allowed: {", ".join(allowed)}')
    return obj


def _list(ctx, value, where, default):
    value = default if value is None else value
    if not isinstance(value, list) or not value:
        raise ctx.error(where, f'expected a non-empty list, got {short(value)}')
    return value


def _name(ctx, value, where):
    if not isinstance(value, str) or not value or not value.replace('_', 'a').isalnum():
        raise ctx.error(where, f'expected a name of letters, digits and _, got {short(value)}')
    return value


def _weather_entry(ctx, entry, where):
    names = weather_fields()
    _keys(ctx, entry, names, where)
    out = {}
    for key, value in entry.items():
        if key == 'smoke':
            vols = _list(ctx, value, f'{where}.smoke', None)
            out['smoke'] = [{'center': ctx.vector(_keys(ctx, v, SMOKE_KEYS, f'{where}.smoke[{i}]'),
                                                  'center', f'{where}.smoke[{i}]', 3).tolist(),
                             'radius_m': ctx.number(v, 'radius_m', f'{where}.smoke[{i}]'),
                             'density': ctx.number(v, 'density', f'{where}.smoke[{i}]')}
                            for i, v in enumerate(vols)]
        elif isinstance(value, str) and value.strip().lower() in ('inf', '.inf'):
            out[key] = math.inf
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ctx.error(f'{where}.{key}', f'expected a number, got {short(value)}')
        else:
            out[key] = float(value)
    try:
        make_weather(out, where)
    except ConfigError as e:
        raise ctx.error(e.name, f'expected {e.allowed}, got {short(e.value)}') from None
    return out


def _weathers(ctx, value, others):
    """Return the weather entries; others: the counts of worlds, trajectories and seeds."""
    if value is None:
        _check_count(ctx, 'seeds', others + [1])
        return [{}]
    if isinstance(value, dict) and set(value) == {'grid'}:
        grid = _keys(ctx, value['grid'], weather_fields(), 'weather.grid')
        axes = {k: _list(ctx, v, f'weather.grid.{k}', None) for k, v in grid.items()}
        _check_count(ctx, 'weather.grid', others + [len(v) for v in axes.values()])
        combos = [dict(zip(axes, vals)) for vals in itertools.product(*axes.values())]
        return [_weather_entry(ctx, c, f'weather.grid[{i}]') for i, c in enumerate(combos)]
    if not isinstance(value, list):
        raise ctx.error('weather', f'expected a list of entries or {{grid: ...}}, got '
                        f'{short(value)}')
    _check_count(ctx, 'weather', others + [len(value)])
    return [_weather_entry(ctx, e or {}, f'weather[{i}]') for i, e in enumerate(value)]


def _trajectory(ctx, entry, i):
    where = f'trajectories[{i}]'
    _keys(ctx, entry, TRAJECTORY_KEYS, where)
    out = {'name': _name(ctx, entry.get('name', f'trajectory{i}'), f'{where}.name')}
    if 'waypoints' in entry:
        for key in ('pose', 'twist'):
            if key in entry:
                raise ctx.error(f'{where}.{key}', 'not with waypoints (their path sets the pose)')
        pts = _list(ctx, entry['waypoints'], f'{where}.waypoints', None)
        out['waypoints'] = [ctx.vector({'p': p}, 'p', f'{where}.waypoints[{j}]', 3).tolist()
                            for j, p in enumerate(pts)]
        out['speed_m_s'] = ctx.number(entry, 'speed_m_s', where)
    else:
        if 'speed_m_s' in entry:
            raise ctx.error(f'{where}.speed_m_s', 'only with waypoints (a twist has its speed)')
        out['pose'] = ctx.vector(entry, 'pose', where, 6, default=list(DEFAULT_POSE)).tolist()
        out['twist'] = ctx.vector(entry, 'twist', where, 6, default=[0.0] * 6).tolist()
    try:
        make_trajectory(out)
    except ConfigError as e:
        raise ctx.error(f'{where}.{e.name}', f'expected {e.allowed}, got {short(e.value)}') \
            from None
    return out


def make_trajectory(entry):
    """Return the base trajectory (pose_at) of a trajectory entry."""
    if 'waypoints' in entry:
        return WaypointPath(entry['waypoints'], entry['speed_m_s'], name='waypoints')
    pose = entry['pose']
    return BodyTwist(pose_matrix_deg(pose[:3], pose[3:]), twist_from_cli(*entry['twist']))


def _sensor(ctx, entry, i):
    where = f'sensors[{i}]'
    _keys(ctx, entry, SENSOR_KEYS, where)
    kind = entry.get('type')
    if kind not in SENSOR_KINDS:
        raise ctx.error(f'{where}.type', f'expected one of {", ".join(SENSOR_KINDS)}, '
                        f'got {short(kind)}')
    params = entry.get('params') or {}
    if not isinstance(params, dict):
        raise ctx.error(f'{where}.params', f'expected a mapping, got {short(params)}')
    params = dict(params)
    if 'preset' in entry:
        params['preset'] = entry['preset']
    if kind == 'terrain_sensor' and 'mount' in entry:
        raise ctx.error(f'{where}.mount', 'not for terrain_sensor (its rays are placed in '
                        'base_frame by vehicle_center_m and tire_positions_m)')
    params_file = entry.get('params_file', '')
    if params_file:
        path = ctx.path({'file': params_file}, f'{where}.params_file')
        params_file = str(path)
    name = _name(ctx, entry.get('name', kind), f'{where}.name')
    topic = entry.get('topic', f'/{MESSAGE_OF[kind]}')
    try:
        check_sensor_topic(topic, 'topic')
    except ConfigError as e:
        raise ctx.error(f'{where}.topic', f'expected {e.allowed}, got {short(topic)}') from None
    mount = ctx.vector(entry, 'mount', where, 6, default=[0.0] * 6).tolist()
    return SensorSpec(kind, name, params, params_file, tuple(mount), topic)


def _check_count(ctx, where, counts):
    """Refuse a product of counts above MAX_SEQUENCES before anything is expanded."""
    if math.prod(counts) > MAX_SEQUENCES:
        raise ctx.error(where, f'the spec expands to {" x ".join(map(str, counts))} = '
                        f'{math.prod(counts):.3g} sequences (worlds x trajectories x seeds x '
                        f'weather), allowed at most {MAX_SEQUENCES}')


def _unique(ctx, values, where):
    seen = set()
    for i, v in enumerate(values):
        if v in seen:
            raise ctx.error(where(i), f'{v!r} is used twice (give each its own)')
        seen.add(v)


def parse_spec(data, source='<spec>', base_dir=None):
    """Return the DatasetSpec of a parsed YAML mapping (SpecError on the first problem)."""
    ctx = _Ctx(source, base_dir, 0)
    _keys(ctx, data, SPEC_KEYS, '')
    worlds = []
    for i, w in enumerate(_list(ctx, data.get('worlds'), 'worlds', ['flat'])):
        if w in ('demo', 'flat'):
            worlds.append(w)
        else:
            worlds.append(str(ctx.path({'file': w}, f'worlds[{i}]')))
    _unique(ctx, worlds, lambda i: f'worlds[{i}]')      # twice: the same sequences twice
    trajs = [_trajectory(ctx, t, i) for i, t in enumerate(
        _list(ctx, data.get('trajectories'), 'trajectories', [{'name': 'still'}]))]
    _unique(ctx, [t['name'] for t in trajs], lambda i: f'trajectories[{i}].name')
    sensors = [_sensor(ctx, s, i) for i, s in enumerate(
        _list(ctx, data.get('sensors'), 'sensors', None))]
    _unique(ctx, [s.name for s in sensors], lambda i: f'sensors[{i}].name')
    _unique(ctx, [s.topic for s in sensors], lambda i: f'sensors[{i}].topic')
    seeds = data.get('seeds', [0])
    seeds = [seeds] if isinstance(seeds, int) and not isinstance(seeds, bool) else seeds
    seeds = _list(ctx, seeds, 'seeds', None)
    for i, s in enumerate(seeds):
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2 ** 63:
            raise ctx.error(f'seeds[{i}]', f'expected an integer >= 0, got {short(s)}')
    _unique(ctx, seeds, lambda i: f'seeds[{i}]')
    frames = data.get('frames', 10)
    if isinstance(frames, bool) or not isinstance(frames, int) or not 1 <= frames <= MAX_FRAMES:
        raise ctx.error('frames', f'expected an integer 1-{MAX_FRAMES}, got {short(frames)}')
    base_frame = data.get('base_frame', 'base_link')
    try:
        check_frame_id(base_frame, 'base_frame')
    except ConfigError as e:
        raise ctx.error('base_frame', f'expected {e.allowed}, got {short(base_frame)}') from None
    tf_rate = data.get('tf_rate_hz', 100.0)
    if isinstance(tf_rate, bool) or not isinstance(tf_rate, (int, float)) or \
            not 1.0 <= tf_rate <= 10000.0:
        raise ctx.error('tf_rate_hz', f'expected a rate of 1 to 10000 Hz, got {short(tf_rate)}')
    compression = data.get('compression', 'zstd')
    if compression not in ('none', 'zstd'):
        raise ctx.error('compression', f"expected 'none' or 'zstd', got {short(compression)}")
    weathers = _weathers(ctx, data.get('weather'), [len(worlds), len(trajs), len(seeds)])
    combos = itertools.product(worlds, trajs, weathers, seeds)
    seqs = tuple(Sequence(n, f'seq_{n:04d}', w, t, wx, s, frames)
                 for n, (w, t, wx, s) in enumerate(combos))
    spec = DatasetSpec(source, tuple(sensors), base_frame, float(tf_rate), compression, seqs)
    try:
        spec = replace(spec, perception=perception_mod.parse(data))
    except ConfigError as e:
        raise ctx.error(e.name, f'expected {e.allowed}, got {short(e.value)}') from None
    if 'formats' not in data:
        return spec
    try:
        return with_formats(spec, data['formats'], 'formats')
    except ConfigError as e:
        raise ctx.error(e.name, f'expected {e.allowed}, got {short(e.value)}') from None


def with_formats(spec, value, name='--formats'):
    """
    Return spec writing the formats of value ('a,b' or a list); ConfigError names name.

    A format that numbers a sequence by its index in the spec (SemanticKITTI: 00-99) takes at
    most its max_sequences (dataset/formats.py SEQUENCE_FORMATS).
    """
    formats = parse_formats(value, name)
    for fmt in formats:
        most = formats_mod.SEQUENCE_FORMATS[fmt].max_sequences
        if most is not None and len(spec.sequences) > most:
            raise ConfigError(name, fmt, f'a spec of at most {most} sequences (numbers '
                              f'00-{most - 1:02d}), this one has {len(spec.sequences)}')
    return replace(spec, formats=formats)


def example_specs():
    """Return {name: path} of the shipped example specs (config/datasets/*.yaml)."""
    return {p.stem: p for p in sorted(config_path('datasets').glob('*.yaml'))}


def load_spec(path):
    """Read and check a spec file or a shipped example's name; SpecError names file and key."""
    import yaml

    examples = example_specs()
    path = examples[path] if path in examples and not Path(path).exists() else Path(path)
    try:
        data = yaml_io.load(path)
    except OSError as e:
        raise SpecError(f'{path}: cannot read ({e.strerror or e})') from None
    except yaml.YAMLError as e:
        raise SpecError(f'{path}: not valid YAML ({" ".join(str(e).split())})') from None
    return parse_spec(data, str(path), path.parent)


def with_perception(spec, label_map=None, deskew=False):
    """Return spec with the CLI's --label-map (None: the spec's) and --deskew (True: on)."""
    opts = {}
    if label_map is not None:
        opts['label_map'] = label_map
    if deskew:
        opts['deskew'] = True
    if not opts:
        return spec
    return replace(spec, perception=perception_mod.parse(opts, spec.perception))
