"""The parameter reference in docs/parameters.md is exactly what the nodes declare."""

from pathlib import Path

from ubot_lidar_sim import param_reference

PAGE = Path(__file__).resolve().parents[1] / 'docs' / 'parameters.md'


def test_docs_parameter_reference_matches_the_node_descriptors():
    text = PAGE.read_text()
    assert param_reference.replace_block(text) == text, (
        'docs/parameters.md is stale: run '
        'python -m ubot_lidar_sim.param_reference --write docs/parameters.md')


def test_reference_lists_parameters_of_every_node():
    table = param_reference.markdown()
    for name in ('channels', 'horizontal_samples', 'max_rays_per_scan', 'return_mode',
                 'rain_override_mm_h', 'smoke_density_threshold', 'point_layout', 'stamp_at',
                 'fov_deg', 'debug_ray_lifetime_s', 'tire_radii_m', 'trace_enabled'):
        assert f'| `{name}` |' in table, name
