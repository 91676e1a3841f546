//! The README's tables of situations and the tests' tables are the same list of rows, so
//! neither can change without the other.

mod common;
use common::*;

#[test]
fn the_tests_tables_are_the_readmes_tables() {
    assert_rows_are_the_readme_table(INCREX_HEADING, INCREX_ROWS);
    assert_rows_are_the_readme_table(ZWINDOW_HEADING, ZWINDOW_ROWS);
    assert_rows_are_the_readme_table(CAD_HEADING, CAD_ROWS);
    assert_rows_are_the_readme_table(GCRA_HEADING, GCRA_ROWS);
}
