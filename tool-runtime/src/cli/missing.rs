//! Flags whose feature this binary was built without: they are still accepted, so that
//! using one says which feature of tool-runtime to turn on instead of "unexpected
//! argument".

/// The error for `flag`, which needs tool-runtime's feature `feature`. (Unused in a build
/// with every such feature.)
#[cfg_attr(
    all(
        feature = "http",
        feature = "oauth",
        feature = "prometheus",
        feature = "otel-grpc"
    ),
    allow(dead_code)
)]
pub(super) fn feature(flag: &str, feature: &str) -> String {
    format!(
        "{flag} needs the `{feature}` feature of tool-runtime, which this binary was built \
         without; enable it in Cargo.toml: tool-runtime = {{ version = \"...\", features = \
         [\"{feature}\"] }}"
    )
}

/// The error for the first of `serve`'s flags whose feature this binary was built without,
/// if any: said before anything starts.
pub(super) fn refused(serve: &super::args::ServeArgs) -> Option<String> {
    #[cfg(not(feature = "http"))]
    if serve.http.is_some() {
        return Some(feature("--http", "http"));
    }
    #[cfg(not(feature = "otel"))]
    if serve.otel_endpoint.is_some() {
        return Some(feature("--otel-endpoint", "otel"));
    }
    #[cfg(not(feature = "otel"))]
    if serve.otel_arguments.is_some() {
        return Some(feature("--otel-arguments", "otel"));
    }
    #[cfg(not(feature = "otel"))]
    if serve.otel_protocol.is_some() {
        return Some(feature("--otel-protocol", "otel"));
    }
    #[cfg(all(feature = "otel", not(feature = "otel-grpc")))]
    if serve.otel_protocol.as_deref() == Some("grpc") {
        return Some(feature("--otel-protocol grpc", "otel-grpc"));
    }
    #[cfg(not(feature = "oauth"))]
    if let Some(refused) = serve.oauth.refused() {
        return Some(refused);
    }
    let _ = serve;
    None
}

/// The OAuth flags, in a binary built without the `oauth` feature.
#[cfg(not(feature = "oauth"))]
#[derive(clap::Args, Debug)]
pub(super) struct OAuthFlags {
    #[arg(long, value_name = "URI", hide = true)]
    oauth_resource: Option<String>,
    #[arg(long, value_name = "URI", hide = true)]
    oauth_issuer: Option<String>,
    #[arg(long, value_name = "PATH", hide = true)]
    oauth_jwks_file: Option<std::path::PathBuf>,
    #[arg(long, value_name = "RULE", hide = true)]
    oauth_scope_implies: Vec<String>,
    #[arg(long, hide = true)]
    list_permitted_tools: bool,
}

#[cfg(not(feature = "oauth"))]
impl OAuthFlags {
    /// The error for the first OAuth flag given, if any.
    pub(super) fn refused(&self) -> Option<String> {
        let given = [
            ("--oauth-resource", self.oauth_resource.is_some()),
            ("--oauth-issuer", self.oauth_issuer.is_some()),
            ("--oauth-jwks-file", self.oauth_jwks_file.is_some()),
            (
                "--oauth-scope-implies",
                !self.oauth_scope_implies.is_empty(),
            ),
            ("--list-permitted-tools", self.list_permitted_tools),
        ];
        given
            .iter()
            .find(|(_, given)| *given)
            .map(|(flag, _)| feature(flag, "oauth"))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_refusal_names_the_flag_and_the_feature_to_enable() {
        let message = super::feature("--metrics", "prometheus");
        assert!(
            message.starts_with("--metrics needs the `prometheus` feature"),
            "{message}"
        );
        assert!(message.contains("features = [\"prometheus\"]"), "{message}");
    }

    /// Run by the test command in a build without the feature (the default one).
    #[cfg(not(feature = "http"))]
    #[test]
    fn serving_http_in_a_build_without_http_says_which_feature() {
        use super::super::args::{Command, CommandLine};
        use clap::Parser;
        let parsed = CommandLine::try_parse_from(["tools", "serve", "--http", "127.0.0.1:1"])
            .expect("the flag is still accepted");
        let Some(Command::Serve(serve)) = parsed.command else {
            panic!("a serve command")
        };
        let refused = super::refused(&serve).expect("refused");
        assert!(
            refused.starts_with("--http needs the `http` feature of tool-runtime"),
            "{refused}"
        );
        assert!(refused.contains("features = [\"http\"]"), "{refused}");
    }

    /// Run by the test command in a build without the feature.
    #[cfg(not(feature = "oauth"))]
    #[test]
    fn an_oauth_flag_in_a_build_without_oauth_says_which_feature() {
        use super::super::args::{Command, CommandLine};
        use clap::Parser;
        let parsed = CommandLine::try_parse_from([
            "tools",
            "serve",
            "--http",
            "127.0.0.1:1",
            "--oauth-resource",
            "https://tools.example.com/mcp",
        ])
        .expect("the flag is still accepted");
        let Some(Command::Serve(serve)) = parsed.command else {
            panic!("a serve command")
        };
        let refused = serve.oauth.refused().expect("refused");
        assert!(
            refused.starts_with("--oauth-resource needs the `oauth` feature"),
            "{refused}"
        );
    }

    /// Run by the test command in a build without the feature (the default one).
    #[cfg(not(feature = "client"))]
    #[test]
    fn a_mount_flag_in_a_build_without_the_client_says_which_feature() {
        use super::super::args::{Command, CommandLine};
        use clap::Parser;
        for arguments in [
            ["--mount", "up=http://127.0.0.1:1/mcp"],
            ["--mount-token-file", "up=/run/secrets/up"],
            ["--mount-oauth", "up"],
            ["--mount-exclude", "up=purge"],
            ["--mount-timeout", "up=30s"],
        ] {
            let flag = arguments[0];
            let parsed = CommandLine::try_parse_from(["tools", "serve", flag, arguments[1]])
                .expect("the flag is still accepted");
            let Some(Command::Serve(serve)) = parsed.command else {
                panic!("a serve command")
            };
            let builder = crate::registry::RegistryBuilder::default();
            let refused = serve.mounts.apply(builder).map(drop).unwrap_err();
            assert!(
                refused.starts_with(&format!("{flag} needs the `client` feature")),
                "{refused}"
            );
        }
    }

    /// Run by the test command in a build without the feature (the default one).
    #[cfg(not(feature = "otel"))]
    #[test]
    fn a_traces_flag_in_a_build_without_otel_says_which_feature() {
        use super::super::args::{Command, CommandLine};
        use clap::Parser;
        for (flag, value) in [
            ("--otel-endpoint", "http://127.0.0.1:4318"),
            ("--otel-arguments", "64"),
            ("--otel-protocol", "grpc"),
        ] {
            let parsed = CommandLine::try_parse_from(["tools", "serve", flag, value])
                .expect("the flag is still accepted");
            let Some(Command::Serve(serve)) = parsed.command else {
                panic!("a serve command")
            };
            let refused = super::refused(&serve).expect("refused");
            assert!(
                refused.starts_with(&format!("{flag} needs the `otel` feature")),
                "{refused}"
            );
        }
    }
}
