import re

import numpy as np
import pytest

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.material_ids import FOLIAGE_MATERIALS, MATERIAL_NAMES, WATER
from ubot_lidar_sim.core.resources import config_path
from ubot_lidar_sim.core.world.materials import material_index, MaterialTable, PROPERTIES


def test_table_has_29_materials_in_contract_order_appended_only():
    assert len(MATERIAL_NAMES) == 29
    assert MATERIAL_NAMES[0] == 'other' and MATERIAL_NAMES[6] == 'water'
    assert MATERIAL_NAMES[16] == 'potato_leaf' and MATERIAL_NAMES[17] == 'snow'
    assert MATERIAL_NAMES[18:20] == ('glass', 'mirror')
    assert MATERIAL_NAMES[20:27] == ('wood', 'metal', 'fabric', 'plastic', 'paper', 'carpet',
                                     'tile')
    assert MATERIAL_NAMES[27:] == ('tinted_glass', 'polished_metal')
    assert material_index('metal_bin') == 13
    assert set(FOLIAGE_MATERIALS) <= set(MATERIAL_NAMES)


def test_every_property_is_an_array_of_29_read_only_floats():
    table = MaterialTable.load()
    for prop in PROPERTIES:
        arr = getattr(table, prop)
        assert arr.shape == (29,) and arr.dtype == np.float64
        assert not arr.flags.writeable


def test_helios_values_of_document_001():
    t = MaterialTable.load()
    for name in ('asphalt', 'concrete', 'gravel', 'grass'):
        assert t.incidence_exponent[material_index(name)] == 0.0
    # bound: float64 parsed from the table's decimals; default rtol 1e-7
    np.testing.assert_allclose(t.reflectivity_sd[[4, 2, 1]], [0.07, 0.24, 0.29])
    np.testing.assert_allclose(t.roughness_m[[3, 1, 2]], [0.0007, 0.0017, 0.0026])


def test_water_is_specular_with_low_diffuse_reflectance():
    t = MaterialTable.load()
    assert t.reflectivity[WATER] <= 0.05
    assert t.specular[WATER] > 1.0


def test_yaml_cites_a_source_for_every_value():
    lines = config_path('materials.yaml').read_text().splitlines()
    values = [ln for ln in lines if re.match(r'  [a-z_]+: ', ln)]     # a comment may go on
    # Nine properties per material; specular_reflectance and refractive_index where they are
    # not the default 0 (the specular materials).
    spec = [ln for ln in values if ln.lstrip().startswith('specular_reflectance:')]
    index = [ln for ln in values if ln.lstrip().startswith('refractive_index:')]
    assert len(values) == 29 * 9 + len(spec) + len(index) and len(spec) == 5
    assert len(index) == 5
    assert all('# [' in ln for ln in values)


def test_glass_and_mirror_carry_their_fresnel_and_metal_reflectances():
    t = MaterialTable.load()
    glass, mirror = material_index('glass'), material_index('mirror')
    r = ((1.5 - 1.0) / (1.5 + 1.0)) ** 2                 # 0.04 per face at n = 1.5
    tau2 = (0.83 / ((1.0 - r) / (1.0 + r))) ** 2         # the bulk's, out and back
    # bound: the table's three decimals of R + (1 - R)^2 R tau^2 / (1 - R^2 tau^2) = 0.0698
    assert t.specular_reflectance[glass] == pytest.approx(
        r + (1.0 - r) ** 2 * r * tau2 / (1.0 - r * r * tau2), abs=5e-4)
    assert t.specular_reflectance[mirror] == 0.9 and t.transmission[mirror] == 0.0
    assert 0.8 <= t.transmission[glass] <= 0.85 and t.reflectivity[glass] == 0.0
    specular = [material_index(x) for x in ('glass', 'mirror', 'water', 'tinted_glass',
                                            'polished_metal')]
    assert np.all(np.delete(t.specular_reflectance, specular) == 0.0)


def test_override_changes_only_listed_properties(tmp_path):
    f = tmp_path / 'm.yaml'
    f.write_text('other: {reflectivity: 0.1}\nwater: {specular: 3}\n')
    base, over = MaterialTable.load(), MaterialTable.load(f)
    assert over.reflectivity[0] == 0.1 and over.specular[WATER] == 3.0
    np.testing.assert_array_equal(over.reflectivity[1:], base.reflectivity[1:])
    np.testing.assert_array_equal(over.specular_width_deg, base.specular_width_deg)


def test_override_with_unknown_material_or_property_names_it(tmp_path):
    f = tmp_path / 'm.yaml'
    f.write_text('unobtainium: {reflectivity: 0.1}\n')
    with pytest.raises(ConfigError, match="material: got 'unobtainium'"):
        MaterialTable.load(f)
    f.write_text('soil: {shininess: 0.1}\n')
    with pytest.raises(ConfigError, match="soil property: got 'shininess'"):
        MaterialTable.load(f)
    f.write_text('soil: {reflectivity: 1.5}\n')
    with pytest.raises(ConfigError, match=r'soil\.reflectivity: got 1\.5, allowed .*0\.0, 1\.0'):
        MaterialTable.load(f)


def test_missing_override_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match='materials_file'):
        MaterialTable.load(tmp_path / 'nope.yaml')
