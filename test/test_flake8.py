"""ament_flake8 over the package's Python code (the standard ament_python lint test)."""

from ament_flake8.main import main_with_errors
import pytest

# The repository root is the package, so colcon's build/, install/ and log/ live beside the code:
# name the source paths instead of linting '.'.
PATHS = ['ubot_lidar_sim', 'test', 'launch', 'benchmarks', 'setup.py']


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8():
    rc, errors = main_with_errors(argv=PATHS)
    assert rc == 0, 'Found %d code style errors / warnings:\n' % len(errors) + '\n'.join(errors)
