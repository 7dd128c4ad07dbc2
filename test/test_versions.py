"""One version number: both package.xml files, setup.py and ubot_lidar_sim.__version__ agree."""

import pathlib
import re
import xml.etree.ElementTree as ET

import ubot_lidar_sim

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_package_xml_setup_py_and_the_module_carry_one_version():
    versions = {ET.parse(p).getroot().findtext('version')
                for p in (ROOT / 'package.xml', ROOT / 'ubot_lidar_sim_msgs' / 'package.xml')}
    versions.add(re.search(r"version='([^']+)'", (ROOT / 'setup.py').read_text()).group(1))
    versions.add(ubot_lidar_sim.__version__)
    assert versions == {'0.5.0'}
