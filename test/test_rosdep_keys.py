"""
Every dependency in both package.xml files resolves for rosdep on each release the workflow covers.

test/fixtures/rosdep_keys.yaml lists each one's source in github.com/ros/rosdistro: a key of
rosdep/python.yaml or rosdep/base.yaml, or a package released in <distro>/distribution.yaml.
"""

import pathlib
import xml.etree.ElementTree as ET

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
FIXTURE = yaml.safe_load((ROOT / 'test' / 'fixtures' / 'rosdep_keys.yaml').read_text())
WORKFLOW = yaml.safe_load((ROOT / '.github' / 'workflows' / 'ros.yml').read_text())
MANIFESTS = (ROOT / 'package.xml', ROOT / 'ubot_lidar_sim_msgs' / 'package.xml')


def _dependencies():
    """Return {dependency name: [package.xml paths declaring it]} over both packages."""
    deps = {}
    for path in MANIFESTS:
        for element in ET.parse(path).getroot():
            if element.tag.endswith('depend'):
                deps.setdefault(element.text.strip(), []).append(str(path.relative_to(ROOT)))
    return deps


def _own_packages():
    return {ET.parse(p).getroot().findtext('name') for p in MANIFESTS}


def _workflow_distros():
    job = WORKFLOW['jobs']['colcon-test']
    return {row['ros_distribution'] for row in job['strategy']['matrix']['include']}


def test_both_packages_are_read():
    assert _own_packages() == {'ubot_lidar_sim', 'ubot_lidar_sim_msgs'}


def test_every_dependency_is_a_rosdep_key_or_a_ros_package_of_every_workflow_distro():
    keys, packages = FIXTURE['rosdep_keys'], FIXTURE['ros_packages']
    unresolved = {}
    for name, where in _dependencies().items():
        if name in _own_packages() or name in keys:
            continue
        missing = _workflow_distros() - set(packages.get(name, {}).get('distros', []))
        if missing:
            unresolved[name] = (where, sorted(missing))
    assert not unresolved, f'no rosdep key nor released package (where, distros): {unresolved}'


def test_every_rosdep_key_comes_from_rosdistros_rosdep_files_and_installs_on_ubuntu():
    for key, entry in FIXTURE['rosdep_keys'].items():
        assert entry['file'] in ('rosdep/python.yaml', 'rosdep/base.yaml'), key
        assert entry['ubuntu'], f'{key}: no ubuntu entry, rosdep cannot install it there'


def test_the_fixture_lists_only_dependencies_package_xml_declares():
    listed = set(FIXTURE['rosdep_keys']) | set(FIXTURE['ros_packages'])
    assert listed <= set(_dependencies()), listed - set(_dependencies())
