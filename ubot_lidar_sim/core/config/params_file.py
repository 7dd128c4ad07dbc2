"""
Node parameter files (the ROS 2 ``--params-file`` format): which blocks apply to which node.

A file maps node keys to ``{ros__parameters: {name: value}}``. A key applies to the node
``name`` when it is ``name``, ``/name``, a namespaced form ending in ``/name``
(``/robot1/name``) or a wildcard: ``/**`` (every node) or ``/**/name``. Offline and in
``python -m ubot_lidar_sim run`` the nodes sit in no namespace, so the namespace part of a key
is not compared. The blocks that apply merge in file order: a later block overrides the keys
of an earlier one, as rclpy does. A file whose blocks are all for other nodes applies nothing.
The CLI (``scan --params``) and the runner (``run --params``) both read files here.
"""

from os import PathLike
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from ubot_lidar_sim.core import yaml_io
from ubot_lidar_sim.core.errors import ConfigError

_SHAPE = '<node>: ros__parameters: {name: value, ...}'
#: A parameter file's path; its blocks, [(node key, {name: value})].
Path_ = Union[str, 'PathLike[str]']
Blocks = List[Tuple[str, Dict[str, Any]]]


def key_applies(key: object, node_name: str) -> bool:
    """Return True when the node key of a parameter file applies to node_name (see above)."""
    parts = str(key).strip('/').split('/')
    return parts == ['**'] or parts[-1] == node_name


def load_blocks(path: Path_) -> Blocks:
    """
    Return the blocks of a node parameter file, [(node key, {name: value})], in file order.

    OSError (yaml_io.FileRefused for a device, FIFO or oversized file) and yaml.YAMLError
    (aliases refused) propagate; a file of the wrong shape raises ConfigError naming it. An
    empty file has no blocks.
    """
    doc = yaml_io.load(Path(path))
    if doc is None:
        return []
    if not isinstance(doc, dict):
        raise ConfigError('params', str(path), f'a mapping {_SHAPE}')
    blocks: Blocks = []
    for key, node in doc.items():
        params = node.get('ros__parameters') if isinstance(node, dict) else []
        if not isinstance(params, (dict, type(None))):
            raise ConfigError('params', str(path), f'{key}: ros__parameters: {{name: value}}')
        blocks.append((str(key), dict(params or {})))
    return blocks


def node_params(blocks: Blocks, node_name: str) -> Optional[Dict[str, Any]]:
    """Return the merged parameters of the blocks that apply to node_name, None when none does."""
    applied = [params for key, params in blocks if key_applies(key, node_name)]
    if not applied:
        return None
    merged: Dict[str, Any] = {}
    for params in applied:
        merged.update(params)
    return merged


def read_params_file(path: Path_, node_name: str) -> Dict[str, Any]:
    """
    Return the parameters a node parameter file gives node_name, as a dict.

    Raises ConfigError naming the file and its keys when no block applies to node_name (a file
    for other nodes), and as load_blocks does.
    """
    blocks = load_blocks(path)
    params = node_params(blocks, node_name)
    if params is None:
        keys = ', '.join(key for key, _ in blocks) or 'none'
        raise ConfigError('params', str(path),
                          f'a file with a block for {node_name} ({node_name}, /{node_name}, '
                          f'/<namespace>/{node_name}, /** or /**/{node_name}); its keys: {keys}')
    return params
