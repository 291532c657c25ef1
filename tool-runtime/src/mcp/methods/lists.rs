//! `tools/list`, `prompts/list`, `resources/list` and `resources/templates/list`: a page of
//! the list as the request's caller sees it, from bytes serialized once per version of the
//! list (see the `pages` module).

use crate::mcp::connection::origin::Origin;
use crate::mcp::connection::Connection;
use crate::mcp::jsonrpc::RequestId;
use crate::mcp::methods::invalid;
use crate::mcp::pages::List;
use crate::mcp::params::Method;
use crate::mcp::ServerMessage;

impl Connection {
    /// A page of one of the lists (tools, prompts, resources or resource templates), from
    /// `cursor` (`None`: the first), as the request's caller sees it.
    pub(super) fn list(
        &self,
        id: &RequestId,
        method: Method,
        cursor: Option<&str>,
        origin: &Origin<'_>,
    ) -> ServerMessage {
        let list = match method {
            Method::ListPrompts => List::Prompts,
            Method::ListResources => List::Resources,
            Method::ListResourceTemplates => List::ResourceTemplates,
            _ => List::Tools,
        };
        let shared = &self.shared;
        match shared
            .pages
            .page(shared, list, cursor, origin.era, origin.caller)
        {
            Ok(page) => ServerMessage::result(crate::mcp::jsonrpc::response_raw(id, page.text())),
            Err(message) => invalid(id, &message),
        }
    }
}
