//! Two tools with one name anywhere in a binary: the catalog refuses to build and names
//! both places.

mod billing {
    use tool_runtime::tool;

    /// Look up an invoice.
    #[tool]
    pub fn lookup(id: u32) -> u32 {
        id
    }
}

mod shipping {
    use tool_runtime::tool;

    /// Look up a parcel.
    #[tool(name = "lookup")]
    pub fn lookup_parcel(id: u32) -> u32 {
        id
    }
}

#[test]
fn the_catalog_names_both_locations() {
    let error = tool_runtime::catalog::Catalog::global().unwrap_err();
    let tool_runtime::catalog::CatalogError::DuplicateName { name, locations } = &error else {
        panic!("expected a duplicate name, got {error:?}");
    };
    assert_eq!(name, "lookup");
    let places: Vec<String> = locations.iter().map(ToString::to_string).collect();
    assert_eq!(
        places,
        [
            "tests/tests/duplicate_names.rs:9",
            "tests/tests/duplicate_names.rs:19"
        ]
    );
    assert_eq!(
        error.to_string(),
        "tool name `lookup` is used by 2 tools, at tests/tests/duplicate_names.rs:9 \
         (duplicate_names::billing) and tests/tests/duplicate_names.rs:19 \
         (duplicate_names::shipping); give each a unique name with #[tool(name = \"...\")], \
         or put a module's tools under a prefix with tool_runtime::namespace!"
    );
    let registry_error = tool_runtime::Registry::new().unwrap_err();
    assert!(matches!(
        registry_error,
        tool_runtime::registry::RegistryError::Catalog(_)
    ));
}
