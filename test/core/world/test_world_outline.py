"""What a node says it loads while a world loads: counted from the file, nothing built."""

import threading

from sdf_helpers import box_model, world_sdf, write

from ubot_lidar_sim.core.world.outline import outline
from ubot_lidar_sim.ros.world_wait import loading_line, said_when_slow


def _mesh_model(name, uri):
    return (f'<model name="{name}"><link name="l"><visual name="v"><geometry><mesh>'
            f'<uri>{uri}</uri></mesh></geometry></visual></link></model>')


def test_an_sdf_world_is_outlined_by_its_meshes_and_includes(tmp_path):
    body = (_mesh_model('a', 'a.obj') + _mesh_model('b', 'b.obj') + box_model('c', '0 0 0')
            + '<include><uri>model://tree</uri></include>')
    write(tmp_path, {'w.sdf': world_sdf(body)})
    assert outline(str(tmp_path / 'w.sdf')) == 'SDF: 2 meshes, 1 included model'


def test_a_yaml_world_is_outlined_by_its_object_types_and_actors(tmp_path):
    write(tmp_path, {'w.yaml': 'objects:\n'
                     '  - {type: box, name: a, size_m: [1, 1, 1]}\n'
                     '  - {type: mesh, name: b, file: b.obj}\n'
                     '  - {type: mesh, name: c, file: c.obj}\n'
                     'actors:\n  - {type: box, name: d}\n'})
    assert outline(str(tmp_path / 'w.yaml')) == 'YAML: 1 box, 2 mesh, 1 actor'
    assert outline('demo') == 'built in'


def test_the_loading_line_names_the_file_and_what_it_reads(tmp_path):
    write(tmp_path, {'w.sdf': world_sdf(_mesh_model('a', 'a.obj'))})
    line = loading_line(str(tmp_path / 'w.sdf'))
    assert line == (f"waiting for the world: loading '{tmp_path / 'w.sdf'}' (SDF: 1 mesh); "
                    'the node starts when it is loaded')
    assert 'could not be counted' in loading_line(str(tmp_path / 'missing.sdf'))


def test_a_slow_body_is_announced_once_and_a_quick_one_not_at_all():
    said = []
    announced = threading.Event()
    with said_when_slow(lambda: (said.append(1), announced.set()), 0.01):
        assert announced.wait(60)       # the body lasts until the line came: slow by design
    with said_when_slow(lambda: said.append(2), 3600.0):
        pass                            # ends long before the hour
    assert said == [1]
