//! `stgflow explain --json`: the answer as one JSON object, the same tree as the text.

mod common;

use common::{stdout_of, tempdir};
use serde_json::Value;

fn explain(args: &[&str]) -> Value {
    let args: Vec<&str> = ["explain"]
        .into_iter()
        .chain(args.iter().copied())
        .chain(["--json"])
        .collect();
    let text = stdout_of(&args);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

const PROGRAM: &str = "datasets/examples/device_safety.tdl";
const STREAM: &str = "datasets/examples/device_safety.facts";

/// Every input fact the tree rests on, in order.
fn inputs(derivation: &Value, into: &mut Vec<String>) {
    if !derivation.is_object() {
        return;
    }
    for step in derivation["body"].as_array().into_iter().flatten() {
        if let Some(fact) = step["input"].as_str() {
            into.push(fact.to_owned());
        }
        inputs(&step["holds"], into);
    }
    inputs(&derivation["start"], into);
}

#[test]
fn a_derivation_as_json_has_the_text_s_facts_rules_and_conditions() {
    let answer = explain(&[PROGRAM, STREAM, "trusted(d1,5)"]);
    assert_eq!(answer["fact"], "trusted(d1, 5)");
    assert_eq!(answer["holds"], true);
    let derivation = &answer["derivation"];
    assert!(
        derivation["rule"]
            .as_str()
            .is_some_and(|r| r.contains("device_safety.tdl:26"))
    );
    let body = derivation["body"]
        .as_array()
        .unwrap_or_else(|| panic!("{derivation}"));
    assert_eq!(body.len(), 3);
    assert_eq!(body[0]["holds"]["fact"], "safe(d1, 5)");
    assert_eq!(body[1]["derived_above"], "safe(d1, 4)");
    let mut facts = Vec::new();
    inputs(derivation, &mut facts);
    assert_eq!(facts, ["repair(d1, 1)"]);
    let text = serde_json::to_string(&answer).unwrap_or_default();
    assert!(text.contains("{\"absent\":\"warning(d1, 4)\"}"), "{text}");

    // --depth cuts the tree where the text shows `…`.
    let cut = explain(&[PROGRAM, STREAM, "trusted(d1,5)", "--depth", "1"]);
    assert_eq!(cut["derivation"]["body"][0]["holds"]["deeper"], true);

    let not = explain(&[PROGRAM, STREAM, "trusted(d1,1)"]);
    assert_eq!(not["holds"], false);
    assert!(
        not["reason"]["rules"][0]["why"]
            .as_str()
            .is_some_and(|w| w.contains("safe(d1, 1)"))
    );
    let outside = explain(&[PROGRAM, STREAM, "trusted(d1,900)"]);
    assert_eq!(outside["reason"], "outside the timeline");
}

/// A fact kept by inertia over many time points is one `chain`, not a tree as deep.
#[test]
fn a_fact_kept_over_many_time_points_is_one_chain() {
    let dir = tempdir();
    let stream = dir.join("long.facts");
    std::fs::write(&stream, "repair(d1, 0).\nrepair(d2, 2999).\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let stream = stream.to_string_lossy().into_owned();
    let answer = explain(&[PROGRAM, &stream, "safe(d1,2999)"]);
    let derivation = &answer["derivation"];
    assert_eq!(derivation["chain"]["time_points"], 2996, "{derivation}");
    assert_eq!(
        (&derivation["chain"]["from"], &derivation["chain"]["to"]),
        (&Value::from(3), &Value::from(2998))
    );
    assert_eq!(derivation["start"]["fact"], "safe(d1, 2)");
    let mut facts = Vec::new();
    inputs(derivation, &mut facts);
    assert_eq!(facts, ["repair(d1, 0)"]);
    let size = serde_json::to_string(&answer).unwrap_or_default().len();
    assert!(size < 2000, "{size} bytes");
}
