"""SDF worlds in the forms Gazebo reads: lenient XML, relative file:// meshes, caches, missing."""

import logging

import pytest
from sdf_helpers import box_model, down_range, load, world_sdf, write
from tolerances import f32_hit_bound_m

from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.errors import WorldError
from ubot_lidar_sim.core.yaml_io import MAX_FILE_BYTES

# bound: boxes and plates are exact triangles: float32 hit rounding only
MM = f32_hit_bound_m(100.0, 1.0)
READING = 'ubot_lidar_sim.core.world.sdf.reading'
# a 1 m x 1 m plate at z = 1 m in its model frame
PLATE_OBJ = ('v -0.5 -0.5 1\nv 0.5 -0.5 1\nv 0.5 0.5 1\nv -0.5 0.5 1\n'
             'f 1 2 3\nf 1 3 4\n')
ENV = ('GZ_SIM_RESOURCE_PATH', 'IGN_GAZEBO_RESOURCE_PATH', 'GAZEBO_MODEL_PATH',
       'GAZEBO_RESOURCE_PATH', 'GZ_FILE_PATH', 'GZ_FUEL_CACHE_PATH', 'IGN_FUEL_CACHE_PATH')


@pytest.fixture(autouse=True)
def _clean_paths(monkeypatch, tmp_path):
    for var in ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv('HOME', str(tmp_path / 'home'))
    monkeypatch.chdir(tmp_path)


def _include(uri, pose='0 0 0 0 0 0', name=None):
    return (f'<include><uri>{uri}</uri><pose>{pose}</pose>'
            + (f'<name>{name}</name>' if name else '') + '</include>')


def _mesh_model(name, uri):
    return (f'<sdf version="1.6"><model name="{name}"><static>true</static><link name="l">'
            f'<visual name="v"><geometry><mesh><uri>{uri}</uri></mesh></geometry></visual>'
            '</link></model></sdf>')


def test_gz_sim_and_classic_forms_that_strict_xml_refuses_load(tmp_path, caplog):
    # gz-sim's empty.sdf: '--' in a comment; an undeclared gz: prefix; Classic's cafe.world:
    # a comment before <?xml; an AWS hospital model.config: a bare '&'
    world = ('<!-- cafe.world -- Classic -->\n<?xml version="1.0" ?>\n<sdf version="1.6">'
             '<world name="w"><!-- gz sim -r empty.sdf ---><gz:nothing a="1"/>'
             + _include('model://post', '2 0 0 0 0 0') + '</world></sdf>')
    config = ('<?xml version="1.0"?><model><name>post</name><sdf version="1.6">model.sdf</sdf>'
              '<description>Tables & chairs R&D &amp; &#65; &unknown;</description></model>')
    write(tmp_path, {'w.world': world, 'models/post/model.config': config,
                     'models/post/model.sdf': '<sdf version="1.6">'
                     + box_model('post', '0 0 0.5 0 0 0') + '</sdf>'})
    with caplog.at_level(logging.WARNING, logger=READING):
        world = load(tmp_path / 'w.world', model_paths=[str(tmp_path / 'models')])
    assert down_range(world, 2, 0) == pytest.approx(9.5, abs=MM)     # the include's pose
    lines = [r.getMessage() for r in caplog.records if r.name == READING]
    assert len(lines) == 2          # one line per repaired file, each naming every repair
    assert ('text before <?xml' in lines[0] and "'--' inside a comment" in lines[0]
            and 'undeclared prefix gz:' in lines[0] and 'w.world' in lines[0])
    assert "a bare '&'" in lines[1] and 'model.config' in lines[1]


@pytest.mark.parametrize('doctype', [
    '<!DOCTYPE sdf SYSTEM "http://example.invalid/sdf.dtd">',
    '<!DOCTYPE sdf [<!ELEMENT sdf ANY>]>',
    '<!DOCTYPE sdf PUBLIC "-//x//y" "file:///etc/passwd">'])
def test_any_doctype_is_refused_in_a_world_or_an_included_model(tmp_path, doctype):
    write(tmp_path, {'w.world': f'<?xml version="1.0"?>{doctype}' + world_sdf('')[21:],
                     'm/model.sdf': f'{doctype}<sdf version="1.6">'
                     + box_model('m', '0 0 0 0 0 0') + '</sdf>',
                     'v.world': world_sdf(_include('m'))})
    for name in ('w.world', 'v.world'):
        with pytest.raises(WorldError, match=r'refused: a DOCTYPE \(DTDs and entities are not '
                           r'read\)'):
            load(tmp_path / name)


def test_world_and_included_model_over_the_size_cap_are_refused_unread(tmp_path):
    write(tmp_path, {'w.world': world_sdf(_include('big')), 'big/model.sdf': '<sdf>',
                     'huge.world': '<sdf>'})
    for name in ('big/model.sdf', 'huge.world'):
        with open(tmp_path / name, 'r+b') as f:
            f.truncate(MAX_FILE_BYTES + 1)      # sparse: nothing is written or read
    for name, culprit in (('w.world', 'model.sdf'), ('huge.world', 'huge.world')):
        with pytest.raises(WorldError, match=rf'{culprit}: .* {MAX_FILE_BYTES + 1} bytes, '
                           'larger than the 64 MiB allowed'):
            load(tmp_path / name)


def test_relative_file_mesh_resolves_against_the_world_directory(tmp_path):
    # AWS bookstore: the model's mesh URI is relative to the world package, not to the model
    uri = 'file://models/shelf/meshes/plate.obj'
    write(tmp_path, {'pkg/models/shelf/meshes/plate.obj': PLATE_OBJ,
                     'pkg/models/shelf/model.sdf': _mesh_model('shelf', uri),
                     'pkg/w.world': world_sdf(_include('models/shelf', '3 0 0 0 0 0'))})
    world = load(tmp_path / 'pkg' / 'w.world')
    assert down_range(world, 3, 0) == pytest.approx(9.0, abs=MM)
    assert (tmp_path / 'pkg/models/shelf/meshes/plate.obj') in world.files


@pytest.mark.parametrize('where', ['cwd', 'GAZEBO_RESOURCE_PATH', 'GZ_SIM_RESOURCE_PATH'])
def test_relative_file_mesh_resolves_through_cwd_and_resource_paths(tmp_path, monkeypatch, where):
    root = tmp_path / 'share'
    write(root, {'models/shelf/meshes/plate.obj': PLATE_OBJ})
    write(tmp_path, {'elsewhere/shelf/model.sdf':
                     _mesh_model('shelf', 'file://models/shelf/meshes/plate.obj'),
                     'elsewhere/w.world': world_sdf(_include('shelf', '0 3 0 0 0 0'))})
    if where == 'cwd':
        monkeypatch.chdir(root)
    else:
        monkeypatch.setenv(where, f'{tmp_path / "nothing"}:{root}')
    world = load(tmp_path / 'elsewhere' / 'w.world')
    assert down_range(world, 0, 3) == pytest.approx(9.0, abs=MM)


def test_bare_include_name_resolves_through_the_resource_path(tmp_path, monkeypatch):
    write(tmp_path, {'res/post/model.sdf': '<sdf version="1.6">'
                     + box_model('post', '0 0 0.5 0 0 0') + '</sdf>',
                     'w/w.world': world_sdf(_include('post', '-4 0 0.5 0 0 0'))})
    monkeypatch.setenv('GZ_SIM_RESOURCE_PATH', str(tmp_path / 'res'))
    assert down_range(load(tmp_path / 'w' / 'w.world'), -4, 0) == pytest.approx(9.0, abs=MM)


@pytest.mark.parametrize('cache', ['IGN_FUEL_CACHE_PATH', 'GZ_FUEL_CACHE_PATH', '.ignition',
                                   '.gz'])
def test_fuel_models_resolve_in_either_cache(tmp_path, monkeypatch, cache):
    base = tmp_path / 'home' / cache / 'fuel' if cache.startswith('.') else tmp_path / 'c'
    if not cache.startswith('.'):
        monkeypatch.setenv(cache, str(base))
    write(base / 'fuel.gazebosim.org/openrobotics/models/post/2',
          {'model.sdf': '<sdf version="1.6">' + box_model('post', '0 0 0.5 0 0 0') + '</sdf>'})
    url = 'https://fuel.gazebosim.org/1.0/OpenRobotics/models/Post'
    write(tmp_path, {'w.world': world_sdf(_include(url, '1 1 0.5 0 0 0'))})
    assert down_range(load(tmp_path / 'w.world'), 1, 1) == pytest.approx(9.0, abs=MM)


def test_light_only_model_such_as_classics_sun_adds_nothing(tmp_path):
    sun = ('<?xml version="1.0" ?><sdf version="1.5"><light type="directional" name="sun">'
           '<cast_shadows>true</cast_shadows><pose>0 0 10 0 0 0</pose></light></sdf>')
    write(tmp_path, {'models/sun/model.config': '<model><name>Sun</name>'
                     '<sdf version="1.5">model.sdf</sdf></model>',
                     'models/sun/model.sdf': sun,
                     'w.world': world_sdf(_include('model://sun')
                                          + box_model('b', '0 0 0.5 0 0 0'))})
    world = load(tmp_path / 'w.world', model_paths=[str(tmp_path / 'models')])
    assert [o.name for o in world.objects] == ['b::l::v']
    assert (tmp_path / 'models/sun/model.sdf') in world.files


MISSING = (_include('model://gone_a', '5 0 0 0 0 0') + box_model('kept', '0 0 0.5 0 0 0')
           + _include('https://fuel.gazebosim.org/1.0/x/models/gone_b')
           + '<model name="m"><link name="l"><visual name="v"><geometry><mesh>'
           '<uri>meshes/Gone_C.DAE</uri></mesh></geometry></visual></link></model>')


def test_missing_warn_loads_the_rest_and_names_every_missing_one_in_one_line(tmp_path, caplog):
    write(tmp_path, {'w.world': world_sdf(MISSING),
                     'y.yaml': 'objects:\n  - {type: sdf, file: w.world, missing: warn}\n'})
    with caplog.at_level(logging.WARNING):
        world = load(tmp_path / 'y.yaml')
    assert [o.name for o in world.objects] == ['kept::l::v']
    assert down_range(world, 0, 0) == pytest.approx(9.0, abs=MM)
    lines = [r.getMessage() for r in caplog.records if 'missing: warn' in r.getMessage()]
    assert len(lines) == 1 and '\n' not in lines[0]
    assert 'without 3 missing' in lines[0]
    assert all(name in lines[0] for name in ('gone_a', 'gone_b', 'Gone_C.DAE'))


def test_missing_error_is_the_default_and_names_every_missing_one_in_one_line(tmp_path):
    write(tmp_path, {'w.world': world_sdf(MISSING)})
    with pytest.raises(WorldError, match=r'w\.world: 3 models or meshes missing \(missing: warn '
                       r"loads the rest\): .*model 'gone_a' not found") as err:
        load(tmp_path / 'w.world')
    assert '\n' not in str(err.value)
    assert all(name in str(err.value) for name in ('gone_a', 'gone_b', 'Gone_C.DAE'))


def test_missing_accepts_only_error_or_warn(tmp_path):
    write(tmp_path, {'w.world': world_sdf(''),
                     'y.yaml': 'objects:\n  - {type: sdf, file: w.world, missing: maybe}\n'})
    with pytest.raises(WorldError, match=r"objects\[0\]\.missing.*'maybe' is not one of "
                       'error, warn'):
        load(tmp_path / 'y.yaml')


def test_sdf_missing_parameter_applies_to_a_direct_sdf_world(tmp_path, capsys):
    write(tmp_path, {'w.world': world_sdf(MISSING)})
    out = tmp_path / 'scan.json'
    args = ['scan', '--sensor', 'laser_scan', '--world', str(tmp_path / 'w.world'), '--out',
            str(out)]
    assert main(args) == 2
    assert "model 'gone_a' not found" in capsys.readouterr().err
    assert main(args + ['--set', 'sdf_missing=warn']) == 0
    assert out.is_file()


def test_unterminated_openers_are_refused_in_one_line(tmp_path):
    # a million unterminated comment, CDATA and PI openers: one pass over the text (a lazy regex
    # would rescan to the end for each), then expat's refusal naming line and column
    for name, text in (('c.world', '<!--' * 1_000_000), ('d.world', '<![CDATA[' * 300_000),
                       ('p.world', '<sdf>' + '<?' * 1_000_000)):
        write(tmp_path, {name: text})
        with pytest.raises(WorldError, match=r'not valid XML, even as Gazebo reads it \(.*: '
                           r'line 1, column \d+\)'):
            load(tmp_path / name)


def test_well_formed_file_is_read_without_a_repair_warning(tmp_path, caplog):
    write(tmp_path, {'w.world': world_sdf('<!-- fine --><![CDATA[ a & b -- ]]>'
                                          + box_model('b', '0 0 0.5 0 0 0'))})
    with caplog.at_level(logging.WARNING, logger=READING):
        world = load(tmp_path / 'w.world')
    assert [o.name for o in world.objects] == ['b::l::v'] and not caplog.records
