"""
ROS parameters <-> a frozen core config dataclass, 1:1, descriptors from the field metadata.

``ConfigParameters(node, LidarConfig)`` declares every field of the dataclass as a parameter
(description, range, read_only, static type), reads the ``preset`` parameter first and uses the
preset's values as defaults (explicit overrides from the command line or a YAML file win),
builds the frozen config, and installs an on-set callback that validates the whole new
config with the core and refuses a change with the core's message. A pre-set callback first
gives a set the field's own type where ``ros2 param set`` guessed another one from the text
(``[]`` arrives as a bool array, ``50`` for a float field as an integer), and has a value of
another type refused in the words of a ConfigError. An override (parameter
file, ``-p``, ``parameter_overrides=``) whose name no node of this package declares, or a
nested value (``channels: {a: 1}`` reaches the node as ``channels.a``), is a ConfigError naming
it: rclpy would ignore it silently. A name another node of the package declares (a ``/**``
block shared by several nodes) is ignored with one info line.
"""

import math

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rcl_interfaces.msg import SetParametersResult
from rclpy.exceptions import ParameterUninitializedException
from rclpy.parameter import Parameter

from ubot_lidar_sim.core.config import (flat_fields, from_dict, LaserScanConfig, LidarConfig,
                                        TerrainConfig)
from ubot_lidar_sim.core.config.fields import is_list
from ubot_lidar_sim.core.config.mapping import NODE_OF
from ubot_lidar_sim.core.config.presets import load_preset
from ubot_lidar_sim.core.errors import ConfigError, did_you_mean, SimError
from ubot_lidar_sim.core.motion.config import BaseSimConfig
from ubot_lidar_sim.core.robot.mapping import robot_sensor_params
from ubot_lidar_sim.ros.demo.scenario import DemoDriverConfig
from ubot_lidar_sim.ros.rclpy_compat import declare_typed, parameter_overrides
from ubot_lidar_sim.ros.robot_description import node_robot

_SCALAR_TYPES = {
    bool: Parameter.Type.BOOL, int: Parameter.Type.INTEGER,
    float: Parameter.Type.DOUBLE, str: Parameter.Type.STRING,
}
_ARRAY_TYPES = {
    bool: Parameter.Type.BOOL_ARRAY, int: Parameter.Type.INTEGER_ARRAY,
    float: Parameter.Type.DOUBLE_ARRAY, str: Parameter.Type.STRING_ARRAY,
}
_ARRAY_KINDS = frozenset(_ARRAY_TYPES.values()) | {Parameter.Type.BYTE_ARRAY}
_INT64_MAX = 2 ** 63 - 1


def parameter_type(f):
    """Return the rclpy Parameter.Type of a dataclass field (tuples use metadata item_type)."""
    if is_list(f) or f.type == 'tuple':
        return _ARRAY_TYPES[f.metadata.get('item_type', float)]
    kind = f.type if isinstance(f.type, type) else type(f.default)
    return _SCALAR_TYPES[kind]


def _item_kind(f):
    if is_list(f) or f.type == 'tuple':
        return f.metadata.get('item_type', float)
    return f.type if isinstance(f.type, type) else type(f.default)


def coerce(f, value):
    """Return value in the ROS type of field f: ints become floats for float fields."""
    kind = _item_kind(f)
    if kind is float:
        if isinstance(value, (list, tuple)):
            return [float(v) if isinstance(v, int) and not isinstance(v, bool) else v
                    for v in value]
        if isinstance(value, int) and not isinstance(value, bool):
            return float(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def describe(f):
    """Return the ParameterDescriptor of a dataclass field from its metadata."""
    meta = f.metadata
    ptype = parameter_type(f)
    text = meta.get('description', '')
    if meta.get('unit'):
        text += f' [{meta["unit"]}]'
    constraints = []
    if 'choices' in meta:
        constraints.append('one of ' + ', '.join(str(c) for c in meta['choices']))
    if meta.get('min_exclusive'):
        constraints.append(f'> {meta["min"]}')
    if meta.get('max_exclusive'):
        constraints.append(f'< {meta["max"]}')
    if meta.get('length') is not None:
        constraints.append(f'exactly {meta["length"]} values')
    desc = ParameterDescriptor(
        name=f.name, type=ptype.value, description=text,
        additional_constraints='; '.join(constraints),
        read_only=bool(meta.get('read_only', False)))
    lo, hi = meta.get('min'), meta.get('max')
    if (lo is not None or hi is not None) and 'choices' not in meta:
        if ptype == Parameter.Type.DOUBLE:
            desc.floating_point_range = [FloatingPointRange(
                from_value=-math.inf if lo is None else float(lo),
                to_value=math.inf if hi is None else float(hi), step=0.0)]
        elif ptype == Parameter.Type.INTEGER:
            desc.integer_range = [IntegerRange(
                from_value=-_INT64_MAX if lo is None else int(lo),
                to_value=_INT64_MAX if hi is None else int(hi), step=0)]
    return desc


def _value_of(node, name):
    """Return the parameter's value as the core wants it (arrays as tuples, unset as ())."""
    try:
        param = node.get_parameter(name)
    except ParameterUninitializedException:
        return ()
    value = param.value
    if param.type_ in (Parameter.Type.BOOL_ARRAY, Parameter.Type.INTEGER_ARRAY,
                       Parameter.Type.DOUBLE_ARRAY, Parameter.Type.STRING_ARRAY,
                       Parameter.Type.BYTE_ARRAY):
        return tuple(value)
    return value


def namespaced_name(namespace, name):
    """
    Return a frame id under a node's namespace: ('/front', 'lidar_3d') -> 'front/lidar_3d'.

    The form robot_state_publisher's frame_prefix gives (frame ids never start with '/');
    the root namespace '/' leaves the name as it is.
    """
    prefix = namespace.strip('/')
    return f'{prefix}/{name}' if prefix else name


class ConfigParameters:
    """
    The parameters of one node mapped onto a frozen config dataclass.

    ``config`` is the current, validated config (replaced atomically on an accepted set),
    ``changed`` holds the names changed since the last ``take_changes()``.

    ``namespaced``: names of frame-id fields whose default, for a node in a namespace, is
    put under it (``namespaced_name``); a value set explicitly is taken as it is.

    Raises ConfigError at construction when the start-up values are invalid.
    """

    def __init__(self, node, config_cls, use_presets=None, validate=None, namespaced=()):
        self._node = node
        self._cls = config_cls
        self._validate = validate
        self._fields = {f.name: f for f in flat_fields(config_cls)}
        if use_presets is None:
            use_presets = 'preset' in self._fields
        defaults = {name: f.default for name, f in self._fields.items()}
        if use_presets:
            preset = self._declare(self._fields['preset'], defaults['preset'], read_only=True)
            try:
                values = load_preset(preset, config_cls.preset_node)
            except ConfigError:
                raise                   # it names the preset and the choices already
            except (OSError, ValueError) as exc:
                raise ConfigError('preset', preset, f'a loadable preset ({exc})') from exc
            for key, value in values.items():
                if key not in self._fields:
                    raise ConfigError(key, value, f'a {config_cls.__name__} parameter '
                                      f'(from preset {preset!r})')
                defaults[key] = value
        self.robot = None       # the RobotDescription of robot_sensor, read once here
        if 'robot_sensor' in self._fields:
            defaults.update(self._robot_defaults(config_cls.preset_node))
        for name in namespaced:
            defaults[name] = namespaced_name(node.get_namespace(), defaults[name])
        for name, f in self._fields.items():
            if not node.has_parameter(name):
                self._declare(f, defaults[name])
        self._check_overrides()
        self.config = self._build({})
        self.changed = set()
        self._pending = None
        self._mistyped = {}         # name: value of another type, from the last pre-set call
        node.add_pre_set_parameters_callback(self._typed)
        node.add_on_set_parameters_callback(self._on_set)
        node.add_post_set_parameters_callback(self._post_set)

    def _robot_defaults(self, kind):
        """Return robot_sensor's Gazebo values (docs/robots.md), the description read once."""
        sensor = self._declare(self._fields['robot_sensor'], '')
        if not sensor:
            return {}
        source, args, paths = (self._declare(self._fields[n], self._fields[n].default)
                               for n in ('robot_description', 'robot_args', 'model_paths'))
        if not source:
            raise ConfigError('robot_sensor', sensor, 'empty without robot_description')
        self.robot = node_robot(self._node, source, args, paths)
        return robot_sensor_params(self.robot, sensor, kind)

    def _declare(self, f, default, read_only=None):
        """Declare field f with default (overrides win, ints coerced for float fields)."""
        desc = describe(f)
        if read_only is not None:
            desc.read_only = read_only
        overrides = parameter_overrides(self._node)
        if f.name in overrides:
            # A YAML '100' for a float parameter would be refused as the wrong type: coerce.
            fixed = coerce(f, overrides[f.name].value)
            # Compare types, not values: [2, 3] == [2.0, 3.0], yet the first is refused.
            if Parameter.Type.from_parameter_value(fixed) != overrides[f.name].type_:
                overrides[f.name] = Parameter(f.name, value=fixed)
        value = coerce(f, default)
        try:
            if isinstance(value, list) and not value:
                # rclpy infers BYTE_ARRAY from [] (then '-p name:=[wall]' is the wrong type):
                # declare the field's own array type with an empty value.
                param = declare_typed(self._node, f.name, parameter_type(f), [], desc)
            else:
                param = self._node.declare_parameter(f.name, value, desc)
        except Exception as exc:  # rclpy raises several unrelated types here
            given = overrides[f.name].value if f.name in overrides else value
            raise ConfigError(f.name, given, f'{_allowed_text(desc)} ({exc})') from exc
        return param.value

    def _check_overrides(self):
        """Raise ConfigError for an override no node of this package declares (see above)."""
        node, cls = self._node, self._cls.__name__
        unused = []
        for name, param in parameter_overrides(node).items():
            if node.has_parameter(name) or name.startswith('qos_overrides.'):
                continue
            head = name.split('.')[0]
            if head in self._fields:
                raise ConfigError(name, param.value, f'no nested value: {head} takes a plain '
                                  f'value (a mapping under {head} in the parameter file?)')
            if name in _package_names():
                unused.append(name)
                continue
            raise ConfigError(name, param.value, f'a {NODE_OF.get(cls, cls)} parameter name '
                              f'(docs/parameters.md){did_you_mean(name, self._fields)}')
        if unused:
            node.get_logger().info(f'not parameters of this node, ignored: {", ".join(unused)}')

    def values(self):
        """Return {field name: current parameter value} for every config field."""
        return {name: _value_of(self._node, name) for name in self._fields}

    def _build(self, changes):
        values = self.values()
        values.update(changes)
        return from_dict(self._cls, values)

    def _typed(self, params):
        """
        Return params, each in its field's type where the value fits it (pre-set callback).

        ``ros2 param set`` types a value by its YAML text (rclpy.parameter.get_parameter_value):
        ``"[]"`` comes as a bool array, ``50`` as an integer. An empty array of any type becomes
        the field's empty array, integers become floats for a float field. A value of another
        type is passed on as the value in force and kept aside, so that ``_on_set`` refuses it
        naming the parameter, the value and what is allowed (rclpy's own refusal names type
        numbers only: ``Wrong parameter type, expected '3' got '4'``).
        """
        out, self._mistyped = [], {}
        for p in params:
            f = self._fields.get(p.name)
            want = parameter_type(f) if f is not None else p.type_
            if p.type_ in (want, Parameter.Type.NOT_SET):
                out.append(p)
            elif p.type_ in _ARRAY_KINDS and want in _ARRAY_KINDS and len(p.value) == 0:
                out.append(Parameter(p.name, want, []))
            else:
                value = list(p.value) if p.type_ in _ARRAY_KINDS else p.value
                fixed = coerce(f, value)
                if Parameter.Type.from_parameter_value(fixed) == want:
                    out.append(Parameter(p.name, want, fixed))
                else:
                    self._mistyped[p.name] = value
                    out.append(self._node.get_parameter(p.name))
        return out

    def _on_set(self, params):
        for p in params:
            if p.name in self._mistyped:
                f = self._fields[p.name]
                return SetParametersResult(successful=False, reason=str(ConfigError(
                    p.name, self._mistyped[p.name], _allowed_text(describe(f)))))
        changes = {}
        for p in params:
            if p.name not in self._fields:
                continue
            value = p.value
            if isinstance(value, (list, tuple)) or p.type_ == Parameter.Type.NOT_SET:
                value = tuple(value or ())
            elif hasattr(value, 'tolist'):
                value = tuple(value.tolist())
            changes[p.name] = value
        if not changes:
            return SetParametersResult(successful=True)
        try:
            cfg = self._build(changes)
            if self._validate is not None:
                self._validate(cfg)
        except SimError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        self._pending = (cfg, set(changes))
        return SetParametersResult(successful=True)

    def _post_set(self, params):
        if self._pending is None:
            return
        cfg, names = self._pending
        self._pending = None
        self.config = cfg
        self.changed |= names

    def take_changes(self):
        """Return and clear the set of names changed since the last call."""
        names, self.changed = self.changed, set()
        return names


def _package_names():
    """Return the parameter names of every node of this package."""
    configs = (LidarConfig, LaserScanConfig, TerrainConfig, DemoDriverConfig, BaseSimConfig)
    return {f.name for cls in configs for f in flat_fields(cls)}


def _allowed_text(desc):
    parts = []
    if desc.floating_point_range:
        r = desc.floating_point_range[0]
        parts.append(f'[{r.from_value}, {r.to_value}]')
    if desc.integer_range:
        r = desc.integer_range[0]
        parts.append(f'[{r.from_value}, {r.to_value}]')
    if desc.additional_constraints:
        parts.append(desc.additional_constraints)
    parts.append(f'type {Parameter.Type(desc.type).name.lower()}')
    return ', '.join(parts)
