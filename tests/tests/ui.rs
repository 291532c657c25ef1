//! Compile-time errors of `#[tool]`: one rule per file in `tests/ui/`, each pinned to its
//! `.stderr`. Regenerate with `TRYBUILD=overwrite` and read the diff before committing.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*.rs");
}
