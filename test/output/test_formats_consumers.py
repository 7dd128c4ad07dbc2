"""KISS-ICP (kiss-icp 1.3.0, PyPI) runs on a recorded SemanticKITTI sequence and on its MCAP."""

from pathlib import Path

from builders import run_dataset
from kiss_icp.datasets import dataset_factory
from kiss_icp.pipeline import OdometryPipeline
import numpy as np
import pytest
import yaml

FRAMES = 30
SPEED_M_S = 6.0


def _world():
    """Return a world of posts and boxes on both sides of a drive, no ground plane."""
    objs = []
    for i in range(-2, 16):
        for side in (-1, 1):
            for row in (1, 2):
                xyz = [i * 5.0 + 2.0 * (row - 1), side * (5.0 + 4.0 * row + i % 3)]
                if (i + row) % 2:
                    objs.append({'name': f'b{len(objs)}', 'type': 'box', 'size_m': [1.5, 0.8, 2],
                                 'pose': {'xyz': [*xyz, 1.0],
                                          'rpy_deg': [0, 0, (i * 37 + row * 53) % 90]},
                                 'material': 'building'})
                else:
                    objs.append({'name': f'c{len(objs)}', 'type': 'cylinder', 'radius_m': 0.4,
                                 'height_m': 3, 'pose': {'xyz': [*xyz, 1.5]},
                                 'material': 'bark'})
    return {'frame': 'map', 'objects': objs}


@pytest.fixture(scope='module')
def sequence(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('kiss')
    (tmp / 'world.yaml').write_text(yaml.safe_dump(_world()))
    spec = {'worlds': ['world.yaml'], 'frames': FRAMES, 'seeds': [0],
            'trajectories': [{'name': 'drive', 'pose': [0, 0, 0.4, 0, 0, 0],
                              'twist': [SPEED_M_S, 0, 0, 0, 0, 3]}],
            'sensors': [{'type': 'lidar_3d', 'preset': 'velodyne_vlp16',
                         'mount': [0, 0, 1.2, 0, 0, 0]}],
            'formats': ['mcap', 'semantickitti']}
    out = run_dataset(tmp, spec)
    gt = np.loadtxt(out / 'sequences' / '00' / 'poses.txt').reshape(-1, 3, 4)
    return tmp, out, gt


def test_kiss_icp_kitti_pipeline_follows_the_recorded_poses(sequence, monkeypatch):
    tmp, out, gt = sequence
    monkeypatch.chdir(tmp)                 # the pipeline writes results/ in the working dir
    dataset = dataset_factory('kitti', out, sequence='00')
    assert len(dataset) == FRAMES
    # kiss-icp 1.3.0's kitti loader returns times.txt as (N, 1), which its TUM writer cannot
    # turn into floats with NumPy 2.4 (TypeError after the trajectory is computed); one column.
    monkeypatch.setattr(dataset, 'get_frames_timestamps',
                        lambda: np.loadtxt(out / 'sequences' / '00' / 'times.txt'))
    pipeline = OdometryPipeline(dataset)
    pipeline.run()
    # Its ground truth is ours: poses/00.txt through calib.txt's Tr (the identity).
    np.testing.assert_array_equal(pipeline.gt_poses[:, :3], gt)
    path_m = np.sum(np.linalg.norm(np.diff(gt[:, :, 3], axis=0), axis=1))
    assert path_m == pytest.approx(SPEED_M_S * (FRAMES - 1) / 10, rel=1e-3)  # bound: 3 deg/s arc
    error_m = np.linalg.norm(pipeline.poses[-1, :3, 3] - gt[-1, :, 3])
    # Measured 0.07 % (0.013 m over 17.4 m). Bound 1 % of the path: twice the 0.50 % average
    # relative translation error KISS-ICP reports on KITTI (Vizzo et al., RA-L 2023, Table I),
    # which a wrong pose convention (frame, order, Tr) or a wrong scan layout far exceeds.
    assert error_m < 0.01 * path_m


def test_kiss_icp_rosbag_dataloader_follows_the_mcap(sequence, monkeypatch):
    tmp, out, gt = sequence
    monkeypatch.chdir(tmp)
    dataset = dataset_factory('rosbag', Path(out / 'seq_0000.mcap'), topic='/points')
    assert len(dataset) == FRAMES              # it opens the file and finds every cloud
    pipeline = OdometryPipeline(dataset)
    pipeline.run()
    error_m = np.linalg.norm(pipeline.poses[-1, :3, 3] - gt[-1, :, 3])
    # Measured 1.7 % (0.29 m over 17.4 m): the same sweeps as the kitti test, but KISS-ICP
    # deskews them with the cloud's per-point 'time' field (its default) and does not apply
    # its KITTI scan correction. Bound 3 % of the path: the measured value with margin, six
    # times KISS-ICP's KITTI average (not investigated further).
    assert error_m < 0.03 * np.sum(np.linalg.norm(np.diff(gt[:, :, 3], axis=0), axis=1))
