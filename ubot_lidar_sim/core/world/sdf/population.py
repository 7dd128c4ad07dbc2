"""
SDF ``<population>`` -> the positions of its clones, as Gazebo Classic's Population places them.

gazebo-classic gazebo/physics/Population.cc: ``ParseSdf`` reads ``<pose>``, ``<model_count>``
(or ``<rows>``, ``<cols>``, ``<step>`` of a grid), a ``<box><size>`` or ``<cylinder><radius>
<length>`` region and ``<distribution><type>``; a box region's origin is its pose minus half
its size (unrotated); each clone is at ``pose.pos + pose.rot * offset`` (math::Pose's ``+``)
with no rotation, named ``MODEL_clone_i`` (``PopulateOne``). The deterministic distributions are
exact: ``grid`` (``CreatePosesBoxGrid``: the grid centred on the pose, row-major from -x -y)
and ``linear-x/y/z`` (``CreatePosesBoxLinearX``: the i-th of n at size * i / n along the axis,
the other two at half the size). ``random`` draws uniform offsets in the box, or an angle and a
radius uniform in [0, radius) in the cylinder, as Classic does, but from a NumPy generator
seeded by the population's index and model name (Classic's draws come from its global
math::Rand seed, so no one layout is Gazebo's). ``uniform`` clusters samples (a 0.1 m grid in
the box, 10,000 draws in the cylinder) into n k-means centroids like Classic's math::Kmeans.
"""

from xml.etree.ElementTree import Element
import zlib

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.world.sdf.poses import parse_pose
from ubot_lidar_sim.core.world.sdf.reading import numbers, SdfError

DISTRIBUTIONS = ('random', 'uniform', 'grid', 'linear-x', 'linear-y', 'linear-z')
MAX_CLONES = 100_000            # reading.MAX_MODELS: the clones count as models
KMEANS_ITERATIONS = 50          # [ENG] Lloyd's iterations; the centroids settle well before
CYLINDER_SAMPLES = 10_000       # Population::CreatePosesCylinderUniform's sample count
# [ENG] Classic samples a box every 0.1 m; past this many samples the spacing grows so that
# k-means stays under a second (the centroids of a denser sampling of a box barely move).
MAX_SAMPLES = 20_000
BLOCK = 1 << 20                 # point-centroid distances computed at a time


def _int(el: Element, tag: str, where: str) -> int:
    """Return the integer child tag of el, 1 to MAX_CLONES."""
    text = (el.findtext(tag) or '').strip()
    try:
        value = int(text)
    except ValueError:
        raise SdfError(f"{where}/{tag}: '{text[:40]}' is not an integer") from None
    if not 1 <= value <= MAX_CLONES:
        raise SdfError(f'{where}/{tag}: {value} is outside 1-{MAX_CLONES}')
    return value


def _vector(el: Element, tag: str, where: str) -> NDArray[np.float64]:
    """Return the 3 finite numbers of el's child tag."""
    return np.asarray(numbers(el.findtext(tag) or '', 3, f'{where}/{tag}', tag, 1e6))


def clone_count(el: Element, where: str) -> int:
    """Return how many clones a <population> makes (rows x cols for a grid)."""
    dist = el.find('distribution')
    kind = '' if dist is None else (dist.findtext('type') or '').strip()
    if kind not in DISTRIBUTIONS:
        raise SdfError(f"{where}/distribution/type: '{kind}' is not one of "
                       + ', '.join(DISTRIBUTIONS))
    if kind == 'grid' and dist is not None:
        return (_int(dist, 'rows', f'{where}/distribution')
                * _int(dist, 'cols', f'{where}/distribution'))
    return _int(el, 'model_count', where)


def _kmeans(points: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Return n centroids (n, 3) of points (m, 3) by Lloyd's algorithm from n random samples."""
    centroids = points[rng.choice(len(points), size=min(n, len(points)), replace=False)]
    labels = np.full(len(points), -1)
    rows = max(1, BLOCK // len(centroids))
    for _ in range(KMEANS_ITERATIONS):
        new = np.concatenate([
            ((points[k:k + rows, None, :] - centroids[None, :, :]) ** 2).sum(axis=2).argmin(1)
            for k in range(0, len(points), rows)])
        if np.array_equal(new, labels):
            break
        labels = new
        counts = np.bincount(labels, minlength=len(centroids))
        sums = np.stack([np.bincount(labels, points[:, k], len(centroids)) for k in range(3)],
                        axis=1)
        keep = counts > 0
        centroids[keep] = sums[keep] / counts[keep, None]
    return centroids


def _box_offsets(kind: str, n: int, size: NDArray[np.float64],
                 rng: np.random.Generator) -> NDArray[np.float64]:
    """Return the offsets (n, 3) of a box region from its corner."""
    if kind == 'random':
        return rng.uniform(0.0, 1.0, (n, 3)) * size
    if kind == 'uniform':
        step = max(0.1, float(np.sqrt(size[0] * size[1] / MAX_SAMPLES)))
        xs, ys = np.arange(0.0, size[0], step), np.arange(0.0, size[1], step)
        gx, gy = np.meshgrid(xs, ys)
        pts = np.stack([gx.ravel(), gy.ravel(), rng.uniform(0.0, size[2], gx.size)], axis=1)
        return _kmeans(pts, n, rng)
    axis = 'xyz'.index(kind[-1])
    out = np.tile(size / 2.0, (n, 1))
    out[:, axis] = size[axis] * np.arange(n) / n
    return out


def _cylinder_offsets(kind: str, n: int, radius: float, length: float,
                      rng: np.random.Generator) -> NDArray[np.float64]:
    """Return the offsets (n, 3) of a cylinder region from its base centre."""
    m = n if kind == 'random' else CYLINDER_SAMPLES
    ang, r = rng.uniform(0.0, 2.0 * np.pi, m), rng.uniform(0.0, radius, m)
    pts = np.stack([r * np.cos(ang), r * np.sin(ang), rng.uniform(0.0, length, m)], axis=1)
    return pts if kind == 'random' else _kmeans(pts, n, rng)


def clone_positions(el: Element, index: int, where: str) -> tuple[Element, NDArray[np.float64]]:
    """Return (model element, positions (n, 3) in the population's parent frame)."""
    model = el.find('model')
    if model is None:
        raise SdfError(f'{where}: <model> missing')
    pose = parse_pose(el.find('pose'), f'{where}/pose')[0]
    n = clone_count(el, where)      # a <distribution> with a known <type>, else SdfError
    dist = el.find('distribution')
    kind = '' if dist is None else (dist.findtext('type') or '').strip()
    rng = np.random.default_rng([index, zlib.crc32((model.get('name') or '').encode())])
    origin = pose[:3, 3].copy()
    if kind == 'grid' and dist is not None:
        rows, cols = _int(dist, 'rows', where), _int(dist, 'cols', where)
        step = _vector(dist, 'step', f'{where}/distribution')
        # ParseSdf centres the grid: (cols - 1) / 2 steps back in x, (rows - 1) / 2 in y
        origin[:2] -= step[:2] * (np.array([cols, rows]) - 1) / 2.0
        j, i = np.meshgrid(np.arange(cols), np.arange(rows))
        offsets = np.stack([j.ravel() * step[0], i.ravel() * step[1], np.zeros(n)], axis=1)
    elif (box := el.find('box')) is not None:
        size = _vector(box, 'size', f'{where}/box')
        if not np.all(size > 0):
            raise SdfError(f'{where}/box/size: expected 3 numbers > 0')
        origin -= size / 2.0
        offsets = _box_offsets(kind, n, size, rng)
    elif (cyl := el.find('cylinder')) is not None:
        radius, length = (numbers(cyl.findtext(t) or '', 1, f'{where}/cylinder/{t}', t, 1e6)[0]
                          for t in ('radius', 'length'))
        if kind.startswith('linear') or not (radius > 0 and length > 0):
            raise SdfError(f'{where}/cylinder: a {kind} distribution needs a box region, and '
                           'radius and length > 0')
        offsets = _cylinder_offsets(kind, n, radius, length, rng)
    else:
        raise SdfError(f'{where}: no <box> or <cylinder> region (Population::ParseSdf)')
    return model, origin + offsets @ pose[:3, :3].T
