"""
The config a sensor runs with offline: preset < parameter file < --set < explicit values.

The CLI (``scan``, ``describe``) and the dataset runner build their sensors' configs here, so
both refuse the same values with the same message.
"""

from typing import Any, Dict, Iterable, Mapping, Optional, Union

from ubot_lidar_sim.core import yaml_io
from ubot_lidar_sim.core.config import presets as presets_mod
from ubot_lidar_sim.core.config.laser import LaserScanConfig
from ubot_lidar_sim.core.config.lidar import LidarConfig
from ubot_lidar_sim.core.config.mapping import from_dict
from ubot_lidar_sim.core.config.params_file import read_params_file
from ubot_lidar_sim.core.config.terrain import TerrainConfig
from ubot_lidar_sim.core.errors import ConfigError
import yaml

CONFIG_CLASSES = {'lidar_3d': LidarConfig, 'laser_scan': LaserScanConfig,
                  'terrain_sensor': TerrainConfig}
# ROS-only keys a node parameter file may carry; they mean nothing offline.
_ROS_ONLY = ('use_sim_time',)


def one_line(err: object) -> str:
    """Return the text of an error on one line."""
    return ' '.join(str(err).split())


def parse_overrides(items: Iterable[str]) -> Dict[str, Any]:
    """Return {name: value} from NAME=VALUE strings, values parsed as YAML."""
    out: Dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition('=')
        if not sep or not name.strip():
            raise ConfigError('--set', item, 'NAME=VALUE')
        try:
            out[name.strip()] = yaml_io.parse(text) if text.strip() else ''
        except yaml.YAMLError as e:
            raise ConfigError(name.strip(), text, f'a YAML value ({one_line(e)})') from e
    return out


def effective_config(sensor: str, params_file: Optional[str] = None,
                     overrides: Optional[Mapping[str, Any]] = None,
                     extra: Optional[Mapping[str, Any]] = None,
                     ) -> Union[LidarConfig, LaserScanConfig, TerrainConfig]:
    """Return the sensor's config: preset < params file < --set < explicit flags (``extra``)."""
    file_params: Dict[str, Any] = {}
    if params_file:
        try:
            file_params = read_params_file(params_file, sensor)
        except OSError as e:
            raise ConfigError('--params', params_file,
                              f'a readable parameter file ({e.strerror or e})') from e
        except yaml.YAMLError as e:
            raise ConfigError('--params', params_file, f'valid YAML ({one_line(e)})') from e
    for key in _ROS_ONLY:
        file_params.pop(key, None)
    merged = {**(overrides or {}), **(extra or {})}
    params = presets_mod.merge_params(file_params, merged,
                                      use_presets=sensor in presets_mod.PRESET_NODES, node=sensor)
    cls: Any = CONFIG_CLASSES[sensor]
    return from_dict(cls, params)  # type: ignore[no-any-return]
