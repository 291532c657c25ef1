//! `prompts/get`: the prompt's messages, made by its function as a call is (it may ask its
//! client, as a tool does), handed back as work.

use crate::mcp::connection::origin::Origin;
use crate::mcp::connection::requests::RoundBinding;
use crate::mcp::connection::Connection;
use crate::mcp::jsonrpc::RequestId;
use crate::mcp::outbox::Outbox;
use crate::mcp::params::GetPromptParams;
use crate::mcp::responses::answered;
use crate::mcp::work::Work;

impl Connection {
    /// `prompts/get`, as work.
    pub(super) fn get_prompt(
        &self,
        id: RequestId,
        params: GetPromptParams,
        origin: Origin<'_>,
        sink: &Outbox,
    ) -> Option<Work> {
        let GetPromptParams {
            name,
            arguments,
            input_responses,
            request_state,
            meta,
        } = params;
        let asked = RoundBinding {
            method: "prompts/get",
            target: &name,
            arguments: &arguments,
            responses: input_responses,
            sealed: request_state,
        };
        let request = self.surface_request(&id, asked, meta.progress_token(), origin, sink);
        let request = match request {
            Ok(request) => request,
            Err(refusal) => return answered(sink, refusal),
        };
        Some(request.get_prompt(name, arguments))
    }
}
