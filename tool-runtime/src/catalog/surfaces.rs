//! Prompts and resources in the catalog. Each is described like a tool (a name, docs and
//! parameters read from the function), which is what lets them be checked, listed and run
//! the way tools are; these types show what a client sees of them.

use super::uri_template::UriTemplate;
use super::{ParamInfo, SourceLocation, Tool};
use std::fmt;

/// What a catalog item is: the checks, the artefact and `diff` speak of each by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ItemKind {
    /// A tool.
    Tool,
    /// A prompt.
    Prompt,
    /// A resource or a resource template.
    Resource,
}

impl fmt::Display for ItemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ItemKind::Tool => "tool",
            ItemKind::Prompt => "prompt",
            ItemKind::Resource => "resource",
        })
    }
}

/// A `#[prompt]`: messages a user picks by name, filled in with string arguments.
pub struct Prompt {
    about: Tool,
}

impl Prompt {
    pub(crate) fn new(about: Tool) -> Prompt {
        Prompt { about }
    }

    /// The name clients use.
    pub fn name(&self) -> &str {
        self.about.name()
    }

    /// A human-friendly title, from `#[prompt(title = "...")]`.
    pub fn title(&self) -> Option<&str> {
        self.about.title()
    }

    /// The description: the doc comment's prose, or `#[prompt(description = "...")]`.
    pub fn description(&self) -> &str {
        self.about.description()
    }

    /// The arguments clients give, in declaration order (runtime-provided parameters are
    /// not among them).
    pub fn arguments(&self) -> impl Iterator<Item = &ParamInfo> {
        self.about.arguments()
    }

    /// Where the prompt is written; `None` for prompts added at run time.
    pub fn location(&self) -> Option<SourceLocation> {
        self.about.location()
    }

    /// The prompt described as a tool would be (its arguments as an input schema), for
    /// running it through dispatch, checking it and comparing it.
    pub fn about(&self) -> &Tool {
        &self.about
    }

    pub(crate) fn about_mut(&mut self) -> &mut Tool {
        &mut self.about
    }
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt")
            .field("name", &self.name())
            .field("location", &self.location())
            .finish_non_exhaustive()
    }
}

/// A `#[resource]`: content read by URI. With parameters, its URI is an RFC 6570 template
/// whose variables are the parameters, and it stands for every URI the template matches.
pub struct Resource {
    about: Tool,
    template: UriTemplate,
    mime_type: Option<String>,
    size: Option<u64>,
    /// Whether reading it is passed on whole, the URI read as its `uri` argument (another
    /// server's resource): the URI cannot be remade from its variables for sure.
    relays_uri: bool,
}

impl Resource {
    pub(crate) fn new(
        about: Tool,
        template: UriTemplate,
        mime_type: Option<String>,
        size: Option<u64>,
    ) -> Resource {
        Resource {
            about,
            template,
            mime_type,
            size,
            relays_uri: false,
        }
    }

    /// Whether a read passes on the URI read (as its `uri` argument).
    pub(crate) fn relays_uri(&self) -> bool {
        self.relays_uri
    }

    #[cfg(feature = "client")]
    pub(crate) fn set_relays_uri(&mut self) {
        self.relays_uri = true;
    }

    /// The name clients show.
    pub fn name(&self) -> &str {
        self.about.name()
    }

    /// A human-friendly title, from `#[resource(title = "...")]`.
    pub fn title(&self) -> Option<&str> {
        self.about.title()
    }

    /// The description: the doc comment's prose, or `#[resource(description = "...")]`.
    pub fn description(&self) -> &str {
        self.about.description()
    }

    /// The URI, or the URI template.
    pub fn uri(&self) -> &str {
        self.template.as_str()
    }

    /// The URI as a template (one with no variables for a plain resource).
    pub fn template(&self) -> &UriTemplate {
        &self.template
    }

    /// Whether this stands for many resources (a URI template), rather than one.
    pub fn is_template(&self) -> bool {
        self.template.is_template()
    }

    /// The MIME type of the content, when known.
    pub fn mime_type(&self) -> Option<&str> {
        self.mime_type.as_deref()
    }

    /// The content's size in bytes, when known.
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    /// The template's variables: the parameters clients fill in through the URI.
    pub fn variables(&self) -> impl Iterator<Item = &ParamInfo> {
        self.about.arguments()
    }

    /// Where the resource is written; `None` for resources added at run time.
    pub fn location(&self) -> Option<SourceLocation> {
        self.about.location()
    }

    /// The resource described as a tool would be (its template variables as an input
    /// schema), for running it through dispatch, checking it and comparing it.
    pub fn about(&self) -> &Tool {
        &self.about
    }

    pub(crate) fn about_mut(&mut self) -> &mut Tool {
        &mut self.about
    }

    pub(crate) fn set_mime_type(&mut self, mime_type: Option<String>) {
        self.mime_type = mime_type;
    }

    pub(crate) fn set_size(&mut self, size: Option<u64>) {
        self.size = size;
    }
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("name", &self.name())
            .field("uri", &self.uri())
            .field("mime_type", &self.mime_type)
            .finish_non_exhaustive()
    }
}
