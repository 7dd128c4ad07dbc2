"""
Input builders shared by tests in several directories (imported by name: test/ is on sys.path).

ROS message builders live in test/ros/ros_helpers.py; this module needs no ROS.
"""

from ubot_lidar_sim.cli import main
import yaml


def write_spec(directory, data, name='spec.yaml'):
    """Write the dataset spec ``data`` as YAML to ``directory / name`` and return that path."""
    path = directory / name
    path.write_text(yaml.safe_dump(data))
    return path


def run_dataset(directory, spec):
    """Write ``spec`` to directory/spec.yaml, run ``dataset`` serially into directory/out."""
    out = directory / 'out'
    code = main(['dataset', str(write_spec(directory, spec)), '--out', str(out), '--workers', '1',
                 '--quiet'])
    assert code == 0, f'dataset exited {code}'
    return out
