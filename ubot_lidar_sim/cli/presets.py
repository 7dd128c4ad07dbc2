"""The ``presets`` command: one line per preset (name, sensors, pattern, summary)."""

from ubot_lidar_sim.core.config import presets as presets_mod


def run_presets():
    """Return the ``presets`` table, one line per preset."""
    rows = [(n, ','.join(presets_mod.preset_nodes(n)), presets_mod.preset_pattern(n),
             presets_mod.preset_summary(n)) for n in presets_mod.list_presets(None)]
    widths = [max(len(row[k]) for row in rows) for k in range(3)]
    return '\n'.join(f'{n:<{widths[0]}}  {s:<{widths[1]}}  {p:<{widths[2]}}  {text}'
                     for n, s, p, text in rows)


def command(args, checked=None):
    """Print the presets table; return 0."""
    print(run_presets())
    return 0
