//! Compressed input (the user-features issue, item 2): streams ending in `.gz` or `.zst`
//! are read decompressed, in batch replay on the parsing threads and line by line, their
//! format told by the ending before the compression's; binary input never reaches the
//! terminal (item 1).

mod common;

use std::io::Write;
use std::path::Path;

use common::{root, stdout_of, stgflow, tempdir};

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(data).unwrap_or_else(|e| panic!("{e}"));
    encoder.finish().unwrap_or_else(|e| panic!("{e}"))
}

fn zstd(data: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
}

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[test]
fn gzip_and_zstd_streams_read_as_the_plain_file_does() {
    let dir = tempdir();
    let facts = std::fs::read(root().join("datasets/examples/device_safety.facts"))
        .unwrap_or_else(|e| panic!("{e}"));
    // Two gzip members in one file: `cat a.gz b.gz` is a valid gzip file.
    let middle = facts[..facts.len() / 2]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let (first, rest) = facts.split_at(middle);
    let mut two_members = gzip(first);
    two_members.extend(gzip(rest));
    let gz = dir.join("device_safety.facts.gz");
    let zst = dir.join("device_safety.facts.zst");
    std::fs::write(&gz, two_members).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&zst, zstd(&facts)).unwrap_or_else(|e| panic!("{e}"));
    let program = "datasets/examples/device_safety.tdl";
    let plain = stdout_of(&["run", program, "datasets/examples/device_safety.facts"]);
    assert!(!plain.is_empty());
    for file in [&gz, &zst] {
        for threads in ["0", "2"] {
            let args = ["run", program, &path(file), "--parse-threads", threads];
            assert_eq!(stdout_of(&args), plain, "{args:?}");
        }
    }
    let fact = "safe(d1,3)";
    assert_eq!(
        stdout_of(&["explain", program, &path(&gz), fact]),
        stdout_of(&[
            "explain",
            program,
            "datasets/examples/device_safety.facts",
            fact
        ])
    );
}

#[test]
fn a_compressed_csv_is_read_in_the_format_its_name_says() {
    let dir = tempdir();
    let toy = root().join("../shared/data/rtec/toy");
    let data = std::fs::read(toy.join("toy_data.csv")).unwrap_or_else(|e| panic!("{e}"));
    let gz = dir.join("toy_data.csv.gz");
    std::fs::write(&gz, gzip(&data)).unwrap_or_else(|e| panic!("{e}"));
    let rules = path(&toy.join("rtec/rules.prolog"));
    let domain = path(&toy.join("rtec/toy_var_domain.prolog"));
    let plain = stdout_of(&[
        "run",
        "-q",
        &rules,
        &domain,
        &path(&toy.join("toy_data.csv")),
        "--mode",
        "rtec",
    ]);
    assert_eq!(plain.lines().count(), 4, "{plain}");
    assert_eq!(
        stdout_of(&["run", "-q", &rules, &domain, &path(&gz), "--mode", "rtec"]),
        plain
    );
}

#[test]
fn binary_input_is_an_error_whose_excerpt_shows_no_raw_bytes() {
    let dir = tempdir();
    let facts = std::fs::read(root().join("datasets/examples/device_safety.facts"))
        .unwrap_or_else(|e| panic!("{e}"));
    let binary = dir.join("device_safety.bin");
    std::fs::write(&binary, gzip(&facts)).unwrap_or_else(|e| panic!("{e}"));
    let output = stgflow()
        .args(["run", "datasets/examples/device_safety.tdl", &path(&binary)])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap_or_else(|e| panic!("not UTF-8: {e}"));
    assert!(
        stderr.contains("[E101]") && stderr.contains(".gz"),
        "{stderr}"
    );
    let raw = stderr
        .chars()
        .find(|c| c.is_control() && *c != '\n' && *c != '\t');
    assert_eq!(raw, None, "a control character in: {stderr:?}");
}

/// A compressed file cut short is an E103 that says so in words, for zstandard and gzip
/// alike, not the decoder's debug text.
#[test]
fn a_compressed_file_cut_short_says_so_in_words() {
    let dir = tempdir();
    let facts: String = (0..200_000)
        .map(|i| format!("repair(d{}, {i}).\n", i % 50))
        .collect();
    for (name, bytes, says) in [
        (
            "cut.facts.zst",
            zstd(facts.as_bytes()),
            "the zstandard data ends in the middle of a block",
        ),
        ("cut.facts.gz", gzip(facts.as_bytes()), "cannot read input"),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap_or_else(|e| panic!("{e}"));
        let output = stgflow()
            .args([
                "run",
                "datasets/examples/device_safety.tdl",
                &path(&file),
                "-q",
            ])
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains("error[E103]"), "{name}: {stderr}");
        assert!(stderr.contains(says), "{name}: {stderr}");
        assert!(
            !stderr.contains("Error {") && !stderr.contains("kind:"),
            "{name}: {stderr}"
        );
    }
}
