"""
Shared tools of the reliability suite: ROS domains, node subprocesses, a probe node, RSS.

Options: ``--soak-seconds N`` (length of the soak run, default 600 s). Tests marked ``soak``
run only when asked for (``-m soak`` or ``--soak-seconds``), so ``make test`` stays short.
"""

import pytest

from rel_helpers import new_domain, Probe, Proc


def pytest_addoption(parser):
    """Register --soak-seconds."""
    parser.addoption('--soak-seconds', type=float, default=None,
                     help='length of the soak run of test/reliability (default 600 s)')


def pytest_configure(config):
    """Register the soak marker (also done by test/conftest.py)."""
    config.addinivalue_line('markers', 'soak: long reliability run (make soak)')


def soak_requested(config):
    """Return True when the run asks for the soak tests (-m soak or --soak-seconds)."""
    return 'soak' in (config.getoption('-m', default='') or '') or \
        config.getoption('--soak-seconds', default=None) is not None


def pytest_collection_modifyitems(config, items):
    """Skip the soak tests unless requested."""
    if soak_requested(config):
        return
    skip = pytest.mark.skip(reason='soak run: use make soak (or -m soak / --soak-seconds)')
    for item in items:
        if 'soak' in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def soak_seconds(request):
    """Return the soak length in s (--soak-seconds, default 600)."""
    value = request.config.getoption('--soak-seconds', default=None)
    return 600.0 if value is None else float(value)


@pytest.fixture
def domain():
    """Return a ROS domain id of this test alone."""
    return new_domain()


@pytest.fixture
def procs(tmp_path):
    """Yield start(argv, domain, name) -> Proc; every process is stopped at teardown."""
    started = []

    def start(argv, domain_id, name):
        started.append(Proc(argv, domain_id, tmp_path, name))
        return started[-1]
    yield start
    for p in started:
        p.close()


@pytest.fixture
def probe_factory():
    """Yield make(domain_id, **kw) -> Probe; every probe is closed at teardown."""
    made = []

    def make(domain_id, **kw):
        made.append(Probe(domain_id, **kw))
        return made[-1]
    yield make
    for p in reversed(made):
        p.close()
