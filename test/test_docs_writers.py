"""The manual's table of `--out` formats is the writers' table (pipeline/writers.py WRITERS)."""

from pathlib import Path
import re

from ubot_lidar_sim.pipeline.writers import WRITERS

PAGE = Path(__file__).resolve().parents[1] / 'docs' / 'cli-and-datasets.md'


def test_the_out_table_lists_each_writer_with_its_sensors():
    rows = re.findall(r'^\| `(\.\w+)` \| ([a-z_0-9, ]+) \|', PAGE.read_text(), re.MULTILINE)
    documented = {ext: tuple(s.strip() for s in sensors.split(',')) for ext, sensors in rows}
    assert documented == {ext: fmt.sensors for ext, fmt in WRITERS.items()}
