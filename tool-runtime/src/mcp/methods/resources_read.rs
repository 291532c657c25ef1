//! `resources/read`: a resource's contents, made by its function as a call is (stored large
//! outputs too), handed back as work.

use crate::mcp::connection::origin::Origin;
use crate::mcp::connection::requests::RoundBinding;
use crate::mcp::connection::Connection;
use crate::mcp::jsonrpc::RequestId;
use crate::mcp::outbox::Outbox;
use crate::mcp::params::ReadResourceParams;
use crate::mcp::responses::answered;
use crate::mcp::work::Work;
use serde_json::Value;

impl Connection {
    /// `resources/read`, as work.
    pub(super) fn read_resource(
        &self,
        id: RequestId,
        params: ReadResourceParams,
        origin: Origin<'_>,
        sink: &Outbox,
    ) -> Option<Work> {
        let ReadResourceParams {
            uri,
            input_responses,
            request_state,
            meta,
        } = params;
        let asked = RoundBinding {
            method: "resources/read",
            target: &uri,
            arguments: &Value::Null,
            responses: input_responses,
            sealed: request_state,
        };
        let request = self.surface_request(&id, asked, meta.progress_token(), origin, sink);
        match request {
            Ok(request) => Some(request.read_resource(uri)),
            Err(refusal) => answered(sink, refusal),
        }
    }
}
