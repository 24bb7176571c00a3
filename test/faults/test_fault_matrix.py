"""docs/faults.md is generated from the fault matrix, and every row is shown by an existing test that checks it."""

import ast

import pytest
from fault_matrix import DOC, FAULTS, ROOT, render


def test_the_page_is_generated_from_the_matrix():
    assert DOC.read_text() == render(), "docs/faults.md is stale: run `python test/faults/fault_matrix.py --write`"


def test_ids_are_unique_and_each_phrase_is_part_of_what_the_user_sees():
    assert len({f.id for f in FAULTS}) == len(FAULTS)
    for fault in FAULTS:
        assert fault.phrase in fault.sees or fault.phrase in fault.fault, fault


@pytest.mark.parametrize("fault", FAULTS, ids=[f.id for f in FAULTS])
def test_each_row_is_checked_by_the_test_it_names(fault):
    path, _, name = fault.test.partition("::")
    source = (ROOT / path).read_text()
    function = next((n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == name),
                    None)
    assert function is not None, f"{fault.id}: {fault.test} does not exist"
    body = ast.get_source_segment(source, function)
    # the test takes this row's expectations from the matrix (row("id"), or the id in its table of cases), or
    # asserts the row's phrase itself
    assert f'"{fault.id}"' in body or fault.phrase in body, f"{fault.id}: {fault.test} does not check it"
