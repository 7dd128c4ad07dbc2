"""
Rewrite the build machine's Python prefix in the ROS wheels' CMake files to this interpreter's.

The Kilted wheels were built with Python at /opt/python/cpXY-cpXY and their CMake export files point
at its include directory and at numpy's include directory there; CMake then fails with "includes
non-existent path". Usage: python fix_cmake_prefix.py VENV
"""

from pathlib import Path
import re
import sys
import sysconfig

import numpy


def main(venv):
    """Rewrite every <venv>/share/**/*.cmake in place; print how many files changed."""
    include = sysconfig.get_paths()['include']
    numpy_include = numpy.get_include()
    purelib = sysconfig.get_paths()['purelib']
    pattern_np = re.compile(r'/opt/python/cp\d+-cp\d+/lib/python3\.\d+/site-packages/numpy/[^;"]*include')
    pattern_inc = re.compile(r'/opt/python/cp\d+-cp\d+/include/python3\.\d+')
    pattern_site = re.compile(r'/opt/python/cp\d+-cp\d+/lib/python3\.\d+/site-packages')
    changed = 0
    for path in Path(venv, 'share').rglob('*.cmake'):
        text = path.read_text(errors='surrogateescape')
        if '/opt/python/' not in text:
            continue
        new = pattern_np.sub(numpy_include, text)
        new = pattern_inc.sub(include, new)
        new = pattern_site.sub(purelib, new)
        if new != text:
            path.write_text(new, errors='surrogateescape')
            changed += 1
    print(f'fix_cmake_prefix: rewrote {changed} CMake files')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
