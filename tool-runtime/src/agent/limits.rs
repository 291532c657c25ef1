//! What an agent loop may spend ([`Limits`]) and what it spent ([`Usage`]).

/// Tokens a model turn (or a whole loop) used, as the provider counted them; `estimated`
/// when a response did not say and our tokenizer counted instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Usage {
    /// Tokens read: the prompt, the history, the tool definitions (cached ones included).
    pub input_tokens: u64,
    /// Tokens written (reasoning included).
    pub output_tokens: u64,
    /// All tokens of the turn, as the provider totals them.
    pub total_tokens: u64,
    /// Whether any of it was counted by our tokenizer because a response gave no usage.
    pub estimated: bool,
}

impl Usage {
    /// A turn's usage: `input` tokens read, `output` written, `total` as the provider
    /// totals them.
    pub fn new(input: u64, output: u64, total: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            total_tokens: total,
            estimated: false,
        }
    }

    /// A usage counted by our tokenizer from the request and response texts.
    pub(crate) fn estimated(input_text: &str, output_text: &str) -> Usage {
        let input = crate::tokens::count(input_text) as u64;
        let output = crate::tokens::count(output_text) as u64;
        Usage {
            estimated: true,
            ..Usage::new(input, output, input + output)
        }
    }

    /// This usage and `other`'s together.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.total_tokens += other.total_tokens;
        self.estimated |= other.estimated;
    }
}

/// How far an agent loop may go before it stops with a status that says which limit it
/// reached. Every limit is checked before the model is asked again, so a loop never starts
/// a turn it may not pay for.
///
/// ```
/// use tool_runtime::agent::Limits;
///
/// let limits = Limits::default().max_turns(5).max_total_tokens(20_000);
/// assert_eq!(limits.turns(), 5);
/// assert_eq!(limits.total_tokens(), Some(20_000));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    turns: u32,
    total_tokens: Option<u64>,
    tool_calls: Option<u32>,
    invalid_call_retries: u32,
}

impl Default for Limits {
    /// Ten model turns, no token or tool-call limit, two retries of invalid calls in a row.
    fn default() -> Limits {
        Limits {
            turns: 10,
            total_tokens: None,
            tool_calls: None,
            invalid_call_retries: 2,
        }
    }
}

impl Limits {
    /// At most `turns` model responses.
    pub fn max_turns(mut self, turns: u32) -> Limits {
        self.turns = turns;
        self
    }

    /// At most `tokens` in all (the providers' usage; our tokenizer where a response gives
    /// none).
    pub fn max_total_tokens(mut self, tokens: u64) -> Limits {
        self.total_tokens = Some(tokens);
        self
    }

    /// At most `calls` tool calls run in all.
    pub fn max_tool_calls(mut self, calls: u32) -> Limits {
        self.tool_calls = Some(calls);
        self
    }

    /// At most `retries` turns in a row whose every call was invalid (an unknown tool,
    /// arguments that do not fit) before the loop gives up: the model is told what was
    /// wrong each time, and may correct itself that often.
    pub fn max_invalid_call_retries(mut self, retries: u32) -> Limits {
        self.invalid_call_retries = retries;
        self
    }

    /// The most model turns.
    pub fn turns(&self) -> u32 {
        self.turns
    }

    /// The most tokens, if limited.
    pub fn total_tokens(&self) -> Option<u64> {
        self.total_tokens
    }

    /// The most tool calls, if limited.
    pub fn tool_calls(&self) -> Option<u32> {
        self.tool_calls
    }

    /// The most turns in a row of invalid calls retried.
    pub fn invalid_call_retries(&self) -> u32 {
        self.invalid_call_retries
    }
}
