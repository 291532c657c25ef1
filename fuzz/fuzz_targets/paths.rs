//! The workspace tools' path resolution on any path: it never panics, and whatever it
//! resolves is inside the root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use workspace_tools::paths::{check_syntax, Workspace};

fn workspace() -> &'static Workspace {
    static WORKSPACE: OnceLock<Workspace> = OnceLock::new();
    WORKSPACE.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("fuzz-paths-{}", std::process::id()));
        let root = base.join("root");
        std::fs::create_dir_all(root.join("src/nested")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(base.join("outside/secret"), "secret").unwrap();
        let _ = std::os::unix::fs::symlink(base.join("outside"), root.join("out"));
        let _ = std::os::unix::fs::symlink(root.join("src"), root.join("in"));
        let _ = std::os::unix::fs::symlink("/", root.join("slash"));
        Workspace::new(&root).unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(path) = std::str::from_utf8(data) else { return };
    if let Ok(relative) = check_syntax(path) {
        assert!(relative.is_relative());
    }
    let workspace = workspace();
    if let Ok((real, _)) = workspace.resolve(path) {
        assert!(real.starts_with(workspace.root()), "{path:?} resolved outside: {real:?}");
    }
    if let Err(error) = workspace.resolve(path) {
        let text = error.to_string();
        assert!(
            !text.contains(workspace.root().to_str().unwrap())
                || path.contains(workspace.root().to_str().unwrap())
        );
    }
});
