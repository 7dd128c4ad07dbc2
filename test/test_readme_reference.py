"""The README's parameter reference is exactly what the nodes declare."""

from pathlib import Path

from ubot_lidar_sim import param_reference

README = Path(__file__).resolve().parents[1] / 'README.md'


def test_readme_parameter_reference_matches_the_node_descriptors():
    text = README.read_text()
    assert param_reference.replace_block(text) == text, (
        'README parameter reference is stale: run '
        'python -m ubot_lidar_sim.param_reference --write README.md')


def test_reference_lists_every_contract_parameter_of_lidar_3d():
    table = param_reference.markdown()
    for name in ('channels', 'horizontal_samples', 'max_rays_per_scan', 'return_mode',
                 'rain_override_mm_h', 'smoke_density_threshold', 'point_layout', 'stamp_at',
                 'fov_deg', 'debug_ray_lifetime_s', 'tire_radii_m', 'trace_enabled'):
        assert f'| `{name}` |' in table, name
