//! `completion/complete`: the values a prompt argument or a template variable may take,
//! from its completion function, handed back as work.

use crate::mcp::connection::origin::Origin;
use crate::mcp::connection::requests::Asking;
use crate::mcp::connection::Connection;
use crate::mcp::jsonrpc::RequestId;
use crate::mcp::outbox::Outbox;
use crate::mcp::params::CompleteParams;
use crate::mcp::surfaces;
use crate::mcp::work::Work;

impl Connection {
    /// `completion/complete`, as work. Completing an argument asks nobody: it runs as the
    /// user types.
    pub(super) fn complete(
        &self,
        id: RequestId,
        params: CompleteParams,
        origin: Origin<'_>,
        sink: &Outbox,
    ) -> Option<Work> {
        let progress_token = params.meta.progress_token();
        let scope = self.request_scope((&id, progress_token), origin, Asking::Nobody, sink);
        let request = self.surface_work(id, scope);
        Some(request.complete(surfaces::CompletionAsked::from(params)))
    }
}
