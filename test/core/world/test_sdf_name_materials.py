"""Materials of textured SDF models from their names; the sidecar wins; describe --world."""

import json

import pytest
from sdf_helpers import load, world_sdf, write

from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.world.materials import material_index
from ubot_lidar_sim.core.world.sdf.name_rules import material_from_names, words


def _textured(model, link='link', visual='visual', texture=None, script=None, pose='0 0 0'):
    """Return a model of one box visual with a PBR albedo map or a script uri, as AWS models."""
    material = ''
    if texture:
        material = f'<material><pbr><metal><albedo_map>{texture}</albedo_map></metal></pbr>'
        material += '</material>'
    if script:
        material = (f'<material><script><uri>{script}</uri><name>{script.split("/")[-1]}</name>'
                    '</script></material>')
    return (f'<model name="{model}"><static>true</static><pose>{pose} 0 0 0</pose>'
            f'<link name="{link}"><visual name="{visual}"><geometry><box><size>1 1 1</size>'
            f'</box></geometry>{material}</visual></link></model>')


WORLD = ''.join([
    _textured('aws_robomaker_bookstore_BookShelf_01', pose='0 0 0'),
    _textured('Books_02', pose='2 0 0'),
    _textured('Window_01', pose='4 0 0'),
    _textured('house', 'floor', 'floor_visual', 'materials/textures/FloorTile_Diffuse.png',
              pose='6 0 0'),
    _textured('living_room', 'Sofa', pose='8 0 0'),
    _textured('rug', visual='v', texture='model://rug/materials/textures/Carpet_Col.jpg',
              pose='10 0 0'),
    _textured('PlasticChair', pose='12 0 0'),
    _textured('SteelRack', pose='14 0 0'),
    _textured('wall_1', script='model://aws/materials/scripts/Bricks', pose='16 0 0'),
    _textured('thing', pose='18 0 0'),
])


@pytest.mark.parametrize('name, expected', [
    ('BookShelf_01', ['book', 'shelf']), ('FloorTile_Diffuse.png', ['floor', 'tile', 'diffuse',
                                                                    'png']),
    ('aws_robomaker_WindowGLASS', ['aws', 'robomaker', 'window', 'glass'])])
def test_names_are_cut_at_non_letters_and_camel_case(name, expected):
    assert words(name) == expected


def test_the_head_noun_decides_and_the_visual_comes_before_the_model():
    assert material_from_names('aws_BookShelf_01::link::visual', None)[0] == 'wood'
    assert material_from_names('Bookcase::link::visual', None)[0] == 'wood'
    assert material_from_names('ShelfOfBooks::link::visual', None)[0] == 'paper'
    # the visual's name before the model's: a window in a house is glass
    assert material_from_names('house::link::Window', None) == (
        'glass', "name 'Window' (window -> glass)")
    assert material_from_names('house::link::visual', None) == (
        'building', "name 'house' (house -> building)")
    assert material_from_names('m::link::visual', None) == (None, '')


def test_textured_world_gets_a_material_for_every_surface_a_rule_names(tmp_path):
    write(tmp_path, {'w.world': world_sdf(WORLD),
                     'w.world.materials.yaml': '"Window_01": mirror\n'})
    world = load(tmp_path / 'w.world')
    got = {name.split('::')[0]: (material, why) for name, material, why in world.sdf_report}
    assert {k: m for k, (m, _) in got.items()} == {
        'aws_robomaker_bookstore_BookShelf_01': 'wood', 'Books_02': 'paper',
        'Window_01': 'mirror', 'house': 'tile', 'living_room': 'fabric', 'rug': 'carpet',
        'PlasticChair': 'plastic', 'SteelRack': 'metal', 'wall_1': 'building',
        'thing': 'other'}
    assert got['Window_01'][1] == "pattern 'Window_01'"     # NAME.world.materials.yaml wins
    assert got['house'][1] == "name 'FloorTile_Diffuse.png' (tile -> tile)"
    assert got['wall_1'][1] == "name 'Bricks' (bricks -> building)"
    assert got['thing'][1] == 'default'
    assert [o.material for o in world.objects][:3] == [material_index(m) for m in
                                                       ('wood', 'paper', 'mirror')]
    assert tmp_path / 'w.world.materials.yaml' in world.files


def test_describe_world_list_materials_says_why_and_leaves_no_named_surface_other(tmp_path,
                                                                                  capsys):
    write(tmp_path, {'w.world': world_sdf(WORLD)})
    assert main(['describe', '--sensor', 'laser_scan', '--world', str(tmp_path / 'w.world'),
                 '--list-materials']) == 0
    out = json.loads(capsys.readouterr().out)
    rows = out['world_materials']
    assert len(rows) == 10 and all(r['why'] for r in rows)
    others = [r['object'] for r in rows if r['material'] == 'other']
    assert others == ['thing::link::visual']
    assert all(material_from_names(o, None)[0] is None for o in others)
    assert out['settings']['world_file'] == str(tmp_path / 'w.world')
