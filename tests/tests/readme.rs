//! The README's table of diagnostic codes is the code tables of the layers, row for row:
//! the language's, the streams', the LARS front end's and the Event Calculus front end's.

use stgflow_lang::diag::ErrorCode;

fn rows<C: ErrorCode>(codes: &[C]) -> Vec<String> {
    codes
        .iter()
        .map(|code| format!("| {} | {} |", code.as_str(), code.summary()))
        .collect()
}

#[test]
fn the_readme_code_table_is_every_layers_table() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .unwrap_or_else(|e| panic!("README.md: {e}"));
    let table: Vec<&str> = readme
        .lines()
        .skip_while(|line| *line != "| code | meaning |")
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .collect();
    let mut expected = rows(stgflow_lang::diag::Code::ALL);
    expected.extend(rows(stgflow_io::stream::Code::ALL));
    expected.extend(rows(stgflow_lars::codes::Code::ALL));
    expected.extend(rows(stgflow_ec::codes::Code::ALL));
    assert_eq!(
        table, expected,
        "README.md's code table (one row per code, in table order)"
    );
}
