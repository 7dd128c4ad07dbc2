"""Typed errors of the core: each names what was wrong, the value given and what is allowed."""


class SimError(Exception):
    """Base class of every error the simulator raises on bad input."""


class ConfigError(SimError, ValueError):
    """
    A configuration value is out of its allowed range or of the wrong type.

    The message always reads ``<name>: got <value!r>, allowed <allowed>``.
    """

    def __init__(self, name, value, allowed):
        self.name = name
        self.value = value
        self.allowed = allowed
        super().__init__(f'{name}: got {value!r}, allowed {allowed}')


class WorldError(SimError):
    """
    A world file, mesh, heightfield or map cannot be loaded.

    The message names the file, the key and the problem.
    """


class ScanError(SimError):
    """A scan cannot be computed as configured (e.g. more rays than max_rays_per_scan)."""
