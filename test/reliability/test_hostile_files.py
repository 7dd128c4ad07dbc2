"""
Hostile files: YAML bombs, devices and FIFOs, huge images, many objects, absurd numbers.

Each case runs in a fresh process with its address space limited (RLIMIT_AS) and a time bound, so
a regression shows up as a failed case instead of a machine out of memory or a hung suite.
"""

import os
import resource
import struct
import subprocess
import sys
import time
import zlib

import numpy as np
import pytest
from rel_helpers import ROOT

# The interpreter with numpy and open3d imported maps ~450 MB; the bound leaves ~550 MB.
AS_LIMIT_MB = 1000


def bounded(code, *args, as_mb=AS_LIMIT_MB, timeout_s=60):
    """Run ``python -c code args`` with RLIMIT_AS as_mb; return (CompletedProcess, wall s)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (as_mb << 20, as_mb << 20))
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, '-c', code, *map(str, args)], capture_output=True,
                       text=True, timeout=timeout_s, preexec_fn=limit, cwd=ROOT)
    return r, time.monotonic() - t0


def cli(*args, as_mb=AS_LIMIT_MB, timeout_s=60):
    """Run the CLI bounded; return (exit code, stderr lines, wall s)."""
    r, wall = bounded('import sys; from ubot_lidar_sim.cli import main; sys.exit(main())',
                      *args, as_mb=as_mb, timeout_s=timeout_s)
    return r.returncode, r.stderr.strip().splitlines(), wall


# Times the call alone (not the imports) and prints 'seconds|error line'.
TIMED = """
import sys, time
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.core.config.params_file import read_params_file
kind, path = sys.argv[1], sys.argv[2]
call = {'world': lambda: World.load(path), 'materials': lambda: MaterialTable.load(path),
        'params': lambda: read_params_file(path, 'lidar_3d')}[kind]
t0 = time.process_time()
try:
    call()
    print(f'{time.process_time() - t0:.3f}|loaded')
except Exception as exc:
    print(f'{time.process_time() - t0:.3f}|{type(exc).__name__}: {exc}')
"""


def timed_load(kind, path, timeout_s=60):
    """
    Load path as kind in a bounded process; return (CPU seconds of the call, error line).

    CPU time of the loading process (all its threads), not wall time: other processes on busy
    cores stretch the wall time of the same work (6.8 s seen for 5,000 boxes beside a suite).
    """
    r, _ = bounded(TIMED, kind, path, timeout_s=timeout_s)
    assert r.returncode == 0 and '|' in r.stdout, r.stderr[-2000:]
    seconds, line = r.stdout.strip().split('|', 1)
    return float(seconds), line


def _laughs(levels=9):
    """Return a YAML value of `levels` nested anchors of 9 aliases each (9**levels leaves)."""
    items = ['&a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]']
    items += [f'&a{k} [' + ','.join([f'*a{k - 1}'] * 9) + ']' for k in range(1, levels)]
    return '[' + ','.join(items) + ']'


BOMBS = {
    'world': ('world.yaml', 'objects:\n  - {name: b, type: box, size_m: ' + _laughs() + '}\n'),
    'materials': ('mat.yaml', 'other: {reflectivity: ' + _laughs() + '}\n'),
    'params': ('params.yaml', '/**:\n  ros__parameters:\n    channels: ' + _laughs() + '\n'),
}


@pytest.mark.parametrize('kind', sorted(BOMBS))
def test_billion_laughs_is_refused_in_well_under_a_second(tmp_path, kind):
    name, text = BOMBS[kind]
    (tmp_path / name).write_text(text)
    assert len(text) < 500         # the file was 374 bytes
    seconds, line = timed_load(kind, tmp_path / name)
    assert seconds < 0.5, (seconds, line)
    assert 'alias' in line and name in line and len(line) < 300, line


@pytest.mark.parametrize('kind,flag', [('world', '--world'), ('materials', 'materials_file'),
                                       ('params', '--params')])
def test_billion_laughs_on_the_command_line_exits_2_with_one_line(tmp_path, kind, flag):
    name, text = BOMBS[kind]
    path = tmp_path / name
    path.write_text(text)
    args = ['--set', f'materials_file={path}'] if flag == 'materials_file' else [flag, path]
    code, lines, wall = cli('scan', '--world', 'flat', *args, '--out', tmp_path / 'o.npz')
    assert code == 2 and len(lines) == 1, lines[-5:]
    assert 'alias' in lines[0] and name in lines[0], lines
    assert wall < 20.0


def test_an_alias_in_a_set_value_is_refused_too(tmp_path):
    code, lines, _ = cli('describe', '--set', 'channels=' + _laughs())
    assert code == 2 and len(lines) == 1 and 'alias' in lines[0], lines[-5:]


# -- a value's size is measured before it is printed --------------------------------------------
HUGE_VALUE = """
import time
from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.world.world import World
value = ['x'] * 9
for _ in range(9):
    value = [value] * 9                      # 9**10 leaves, shared: cheap to build
for call in (lambda: World.from_dict({'objects': [{'name': 'b', 'type': 'box',
                                                   'size_m': value}]}),
             lambda: LidarConfig(channels=value)):
    t0 = time.monotonic()
    try:
        call()
    except Exception as exc:
        print(f'{time.monotonic() - t0:.3f}|{len(str(exc))}|{exc}')
"""


def test_an_error_about_a_huge_value_is_short_and_immediate():
    r, _ = bounded(HUGE_VALUE, timeout_s=60)
    rows = [line.split('|', 2) for line in r.stdout.strip().splitlines()]
    assert len(rows) == 2, r.stderr[-2000:]
    for seconds, length, text in rows:
        assert float(seconds) < 0.1 and int(length) < 300, text
        assert 'size_m' in text or 'channels' in text


# -- files that are not regular files, or too big ---------------------------------------------
@pytest.fixture
def odd_files(tmp_path):
    fifo = tmp_path / 'fifo.yaml'
    os.mkfifo(fifo)
    sparse = tmp_path / 'sparse.yaml'
    with open(sparse, 'wb') as f:
        f.truncate(1 << 30)                    # 1 GiB of holes: no disk used
    return {'/dev/zero': '/dev/zero', 'fifo': fifo, 'directory': tmp_path, 'sparse_1_gib': sparse}


@pytest.mark.parametrize('case,problem', [('/dev/zero', 'not a regular file'),
                                          ('fifo', 'not a regular file'),
                                          ('directory', 'not a regular file'),
                                          ('sparse_1_gib', 'larger than')])
def test_a_world_file_that_is_a_device_fifo_directory_or_huge_exits_2_with_one_line(
        tmp_path, odd_files, case, problem):
    path = odd_files[case]
    code, lines, wall = cli('scan', '--world', path, '--out', tmp_path / 'o.npz', timeout_s=30)
    assert code == 2 and len(lines) == 1, lines[-5:]
    assert str(path) in lines[0] and problem in lines[0], lines
    assert wall < 20.0


@pytest.mark.parametrize('kind', ['materials', 'params'])
def test_a_materials_or_params_file_that_is_a_fifo_is_refused(odd_files, kind):
    seconds, line = timed_load(kind, odd_files['fifo'], timeout_s=30)
    assert 'not a regular file' in line and seconds < 0.5, line


@pytest.mark.parametrize('case', ['/dev/zero', 'fifo'])
def test_a_mesh_path_to_a_device_or_fifo_is_not_a_regular_file_not_missing(
        tmp_path, odd_files, case):
    world = tmp_path / 'w.yaml'
    world.write_text(f'objects:\n  - {{name: barn, type: mesh, file: {odd_files[case]}}}\n')
    seconds, line = timed_load('world', world, timeout_s=30)
    assert "objects[0] 'barn'.file" in line and 'not a regular file' in line, line
    assert 'not found' not in line and seconds < 0.5


# -- occupancy maps --------------------------------------------------------------------------
def write_png(path, block, repeats):
    """
    Write a grey 8-bit PNG: block (rows, cols) uint8 stacked repeats times, in milliseconds.

    Each block is deflated once and ends in a full flush (byte-aligned, no back references), so
    the compressed block repeats as it is.
    """
    rows, cols = block.shape
    raw = np.concatenate([np.zeros((rows, 1), np.uint8), block], axis=1).tobytes()
    comp = zlib.compressobj(6)
    first = comp.compress(raw) + comp.flush(zlib.Z_FULL_FLUSH)
    adler = 1
    for _ in range(repeats):
        adler = zlib.adler32(raw, adler)
    idat = first[:2] + first[2:] * repeats + b'\x01\x00\x00\xff\xff' + struct.pack('>I', adler)

    def chunk(kind, data):
        crc = zlib.crc32(kind + data)
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', crc)
    ihdr = struct.pack('>IIBBBBB', cols, rows * repeats, 8, 0, 0, 0, 0)
    path.write_bytes(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', ihdr) + chunk(b'IDAT', idat)
                     + chunk(b'IEND', b''))


def _map_world(tmp_path, image):
    (tmp_path / 'map.yaml').write_text(f'image: {image}\nresolution: 0.05\norigin: [0, 0, 0]\n'
                                       'negate: 0\noccupied_thresh: 0.65\nfree_thresh: 0.2\n')
    world = tmp_path / 'w.yaml'
    world.write_text('objects:\n  - {name: walls, type: occupancy_map, file: map.yaml}\n')
    return world


def test_a_30000_squared_png_map_is_refused_from_its_header_in_under_a_second(tmp_path):
    write_png(tmp_path / 'huge.png', np.full((1000, 30000), 255, np.uint8), 30)
    assert (tmp_path / 'huge.png').stat().st_size < 2_000_000
    seconds, line = timed_load('world', _map_world(tmp_path, 'huge.png'))
    assert seconds < 1.0, (seconds, line)
    assert 'huge.png' in line and '30000 x 30000' in line, line


def test_a_30000_squared_pgm_map_is_refused_from_its_header(tmp_path):
    with open(tmp_path / 'huge.pgm', 'wb') as f:
        f.write(b'P5\n# a comment\n30000 30000\n255\n')
        f.truncate(f.tell() + 30000 * 30000)       # sparse: the header is what counts
    seconds, line = timed_load('world', _map_world(tmp_path, 'huge.pgm'))
    assert seconds < 1.0 and 'huge.pgm' in line and '30000 x 30000' in line, line


# The child's own peak: VmHWM of its address space. Not ru_maxrss: Linux keeps that across
# execve, and bounded() forks the pytest process (preexec_fn), so ru_maxrss starts at the
# suite's RSS (736 MB once in a full run against 363 MB for the load alone).
LOAD_MAP = """
import sys
from ubot_lidar_sim.core.world.world import World
world = World.load(sys.argv[1])
with open('/proc/self/status') as f:
    hwm_kb = next(int(line.split()[1]) for line in f if line.startswith('VmHWM:'))
print(world.n_triangles, hwm_kb // 1024)
"""


def test_a_10000_squared_map_extrudes_with_bounded_memory(tmp_path):
    # Every 100th row is a wall, and the first and last column: 100 runs of a whole row and
    # 2 one-pixel runs in each of the 9900 other rows; 12 triangles per run.
    block = np.full((100, 10000), 255, np.uint8)
    block[0] = 0
    block[:, [0, -1]] = 0
    write_png(tmp_path / 'grid.png', block, 100)
    r, _ = bounded(LOAD_MAP, _map_world(tmp_path, 'grid.png'), timeout_s=120)
    assert r.returncode == 0, r.stderr[-1500:]
    triangles, peak_mb = map(int, r.stdout.split())
    assert triangles == 12 * (100 + 2 * 9900)
    assert peak_mb < 600, peak_mb        # before: 1.87 GB (8+ bytes per pixel)


# -- many objects ------------------------------------------------------------------------------
def _boxes_file(path, n):
    rows = ['frame: map', 'objects:']
    rows += [f'  - {{name: box_{i}, type: box, size_m: [0.5, 0.5, 1.0], material: concrete, '
             f'pose: {{xyz: [{i % 100 * 2.0}, {i // 100 * 2.0}, 0.5]}}}}' for i in range(n)]
    path.write_text('\n'.join(rows) + '\n')
    return path


def test_5000_boxes_load_in_near_linear_time(tmp_path):
    seconds, line = timed_load('world', _boxes_file(tmp_path / 'b5000.yaml', 5000), 120)
    assert line == 'loaded'
    seconds_1000, line = timed_load('world', _boxes_file(tmp_path / 'b1000.yaml', 1000), 120)
    assert line == 'loaded'
    # Five times the boxes: n log n work (a BVH build) takes 5 x log(5000) / log(1000) = 6.2x
    # the CPU time of 1,000, quadratic work 25x (a name check over pairs took 8.5 s for 5,000
    # once); 15x lies between them (7.4x measured on an idle machine).
    assert seconds < 15.0 * seconds_1000, (seconds, seconds_1000)


def test_the_yaml_reader_uses_the_c_loader_when_libyaml_is_present():
    import yaml

    from ubot_lidar_sim.core import yaml_io

    if not yaml.__with_libyaml__:
        pytest.skip('PyYAML built without libyaml')
    assert issubclass(yaml_io.Loader, yaml.CSafeLoader)


# -- numbers beyond what the geometry can hold ------------------------------------------------
@pytest.mark.parametrize('obj,key', [
    ('{name: huge, type: box, size_m: [1.0e+39, 1, 1]}', "objects[1] 'huge'.size_m"),
    ('{name: huge, type: sphere, radius_m: 1.0e+39}', "objects[1] 'huge'.radius_m"),
    ('{name: far, type: box, size_m: [1, 1, 1], pose: {xyz: [1.0e+39, 0, 0]}}',
     "objects[1] 'far'.pose.xyz"),
    ('{name: g2, type: plane, size_m: [1.0e+10, 1.0e+10]}', "objects[1] 'g2'.size_m"),
])
def test_sizes_and_places_beyond_the_world_limit_are_refused_naming_file_and_key(
        tmp_path, obj, key):
    world = tmp_path / 'w.yaml'
    world.write_text('objects:\n  - {name: g, type: plane, size_m: [100, 100]}\n'
                     f'  - {obj}\n')
    code, lines, _ = cli('scan', '--world', world, '--out', tmp_path / 'o.npz')
    assert code == 2 and len(lines) == 1, lines[-5:]
    assert str(world) in lines[0] and key in lines[0], lines


@pytest.mark.parametrize('kind,flag', [('world', '--world'), ('params', '--params')])
def test_a_key_given_twice_in_one_mapping_exits_2_naming_it(tmp_path, kind, flag):
    # YAML 1.1 loaders keep the last of two equal keys without a word: refused instead.
    text = {'world': 'frame: map\nobjects: []\nframe: odom\n',
            'params': '/**:\n  ros__parameters:\n    channels: 8\n    channels: 16\n'}[kind]
    path = tmp_path / f'{kind}.yaml'
    path.write_text(text)
    code, lines, _ = cli('scan', '--world', 'flat', flag, path, '--out', tmp_path / 'o.npz')
    assert code == 2 and len(lines) == 1, lines[-5:]
    assert 'duplicate key' in lines[0] and path.name in lines[0] and 'line ' in lines[0], lines
    assert not (tmp_path / 'o.npz').exists()


def test_a_reader_that_goes_away_ends_the_cli_without_an_error_line():
    # `presets | head`: the pipe's reader is closed before the CLI writes (a real EPIPE).
    read, write = os.pipe()
    os.close(read)
    try:
        r = subprocess.run([sys.executable, '-m', 'ubot_lidar_sim', 'presets'], stdout=write,
                           stderr=subprocess.PIPE, text=True, timeout=60, cwd=ROOT)
    finally:
        os.close(write)
    assert r.returncode == 1 and r.stderr == '', r.stderr[-2000:]
