"""ament_pep257 over the package's Python code (the standard ament_python lint test)."""

from ament_pep257.main import main
import pytest

PATHS = ['ubot_lidar_sim', 'test', 'launch', 'benchmarks', 'setup.py']


@pytest.mark.linter
@pytest.mark.pep257
def test_pep257():
    rc = main(argv=PATHS)
    assert rc == 0, 'Found code style errors / warnings'
