//! The official JSON-Schema-Test-Suite (draft 2020-12, its required part and the optional
//! files that do not test `format`) run against both validators: every case of every
//! schema the validator of whole schemas compiles gives the suite's verdict, and so does
//! every case the simple validator can take (as the schema of one parameter). A schema the
//! validator refuses when it is built (see `suite-refusals.txt`, with the reason for each)
//! is the only way out; a refusal not listed there, or listed and no longer refused, fails.
//!
//! The suite is not vendored: `scripts/schema-suite.sh` takes it, pinned, from the Python
//! `jsonschema` source distribution on PyPI and runs this test with `JSON_SCHEMA_TEST_SUITE`
//! naming its `draft2020-12` directory. Run without it, the test fails saying so. With
//! `SUITE_PRINT_REFUSALS` set it prints each refusal as a line of the refusals file.

use super::full;
use super::simple;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Optional files about `format`, which both validators take as an annotation only.
const FORMAT_FILES: [&str; 1] = ["format-assertion.json"];

/// The schemas refused when built, by design, as `file: description  # reason` lines.
const REFUSALS: &str = include_str!("suite-refusals.txt");

fn suite_files(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [root.to_path_buf(), root.join("optional")] {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.extension().is_some_and(|ext| ext == "json") && !FORMAT_FILES.contains(&&*name)
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// `optional/bignum.json`-style names, as the refusals file writes them.
fn short_name(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn listed_refusals() -> BTreeSet<String> {
    REFUSALS
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| line.split("  # ").next().unwrap_or_default().trim())
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
#[ignore = "needs the JSON-Schema-Test-Suite, which scripts/schema-suite.sh fetches (pinned) and passes in JSON_SCHEMA_TEST_SUITE"]
fn the_official_test_suite_passes_on_both_validators() {
    let root = PathBuf::from(std::env::var_os("JSON_SCHEMA_TEST_SUITE").expect(
        "JSON_SCHEMA_TEST_SUITE names the suite's draft2020-12 directory; \
         scripts/schema-suite.sh fetches it and runs this test",
    ));
    let listed = listed_refusals();
    let mut refused = BTreeSet::new();
    let mut wrong = Vec::new();
    let (mut full_cases, mut simple_cases) = (0, 0);
    for file in suite_files(&root) {
        let name = short_name(&root, &file);
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for group in groups {
            let description = group["description"].as_str().unwrap_or_default();
            let schema = &group["schema"];
            let key = format!("{name}: {description}");
            let compiled = match full::Compiled::new(schema) {
                Ok(compiled) => compiled,
                Err(why) => {
                    if std::env::var_os("SUITE_PRINT_REFUSALS").is_some() {
                        eprintln!("REFUSED {key}  # {why}");
                    }
                    refused.insert(key);
                    continue;
                }
            };
            // The schema as one parameter of a tool, for the simple validator when it
            // takes it (`null` means "absent" for a tool's argument, so it is left out).
            // Its `$schema` (the standard one, or it would have been refused) names the
            // dialect of a document, not a rule of the parameter.
            let mut parameter = schema.clone();
            if let Some(object) = parameter.as_object_mut() {
                object.remove("$schema");
            }
            let root_schema = json!({
                "type": "object",
                "properties": {"value": parameter},
                "required": ["value"]
            });
            let simple =
                simple::is_simple(&root_schema).then(|| simple::Compiled::new(&root_schema));
            for case in group["tests"].as_array().unwrap() {
                let data = &case["data"];
                let valid = case["valid"].as_bool().unwrap();
                let what = format!("{key} / {}", case["description"].as_str().unwrap_or(""));
                full_cases += 1;
                if compiled.is_valid(data) != valid {
                    wrong.push(format!("full: {what}: expected valid = {valid}"));
                }
                if compiled.errors(data).is_empty() != valid {
                    wrong.push(format!("full, errors: {what}: expected valid = {valid}"));
                }
                if let Some(simple) = simple.as_ref().filter(|_| !data.is_null()) {
                    simple_cases += 1;
                    let mut arguments = Map::new();
                    arguments.insert("value".to_owned(), data.clone());
                    if simple.accepts(&arguments) != valid {
                        wrong.push(format!("simple: {what}: expected valid = {valid}"));
                    }
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} cases differ from the suite:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    let unlisted: Vec<&String> = refused.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "refused but not listed in suite-refusals.txt: {unlisted:#?}"
    );
    let stale: Vec<&String> = listed.difference(&refused).collect();
    assert!(
        stale.is_empty(),
        "listed in suite-refusals.txt but compiled: {stale:#?}"
    );
    // The suite was there and read: thousands of cases, hundreds through `simple`.
    assert!(
        full_cases > 1_000 && simple_cases > 100,
        "{full_cases} and {simple_cases} cases"
    );
    eprintln!("{full_cases} cases through full, {simple_cases} through simple, {} schemas refused as listed", refused.len());
}
