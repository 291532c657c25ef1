//! The fixtures that ask the client while they run: elicitation, sampling and roots, in
//! the handshake era (the question goes to the client at once) and at 2026-07-28 (the call
//! is answered `input_required` and runs again when the client retries with the answers).
//! Each is written once for both.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_runtime::ask::{AskError, ClientCapability, Elicited, Sampling, UrlElicitation};
use tool_runtime::result::PromptMessage;
use tool_runtime::{prompt, tool, CallContext};

/// How an answer reads in a tool's text: its action, and its values when accepted.
fn described<T: Serialize>(answer: &Elicited<T>) -> String {
    match answer {
        Elicited::Accepted(values) => format!(
            "action=accept, content={}",
            serde_json::to_string(values).unwrap_or_default()
        ),
        Elicited::Declined => "action=decline".to_owned(),
        Elicited::Cancelled => "action=cancel".to_owned(),
    }
}

/// Ask the client's model to answer a prompt.
#[tool]
async fn test_sampling(
    /// What to ask the model.
    prompt: String,
    ctx: CallContext,
) -> Result<String, AskError> {
    let sampled = ctx.sample(Sampling::new(100).user(prompt)).await?;
    Ok(format!("LLM response: {}", sampled.text()))
}

/// Who the user is.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct UserInfo {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

/// Ask the user who they are.
#[tool]
async fn test_elicitation(
    /// What to tell the user.
    message: String,
    ctx: CallContext,
) -> Result<String, AskError> {
    let answer = ctx.elicit::<UserInfo>(message).await?;
    Ok(format!("User response: {}", described(&answer)))
}

/// A user's status.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Status {
    #[default]
    Active,
    Inactive,
    Pending,
}

/// A form whose every field has a default, shown pre-filled.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
struct Defaults {
    /// User name
    name: String,
    /// User age
    age: u32,
    /// User score
    score: f64,
    /// User status
    status: Status,
    /// Verification status
    verified: bool,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            name: "John Doe".to_owned(),
            age: 30,
            score: 95.5,
            status: Status::Active,
            verified: true,
        }
    }
}

/// Ask the user to review a form whose fields have defaults.
#[tool]
async fn test_elicitation_sep1034_defaults(ctx: CallContext) -> Result<String, AskError> {
    let answer = ctx
        .elicit::<Defaults>("Please review and update the form fields with defaults")
        .await?;
    Ok(format!("Elicitation completed: {}", described(&answer)))
}

/// Plain choices.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Plain {
    Option1,
    Option2,
    Option3,
}

/// Choices with labels.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Labelled {
    #[schemars(title = "First Option")]
    Value1,
    #[schemars(title = "Second Option")]
    Value2,
    #[schemars(title = "Third Option")]
    Value3,
}

/// Choices with labels, for a list.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum LabelledChoice {
    #[schemars(title = "First Choice")]
    Value1,
    #[schemars(title = "Second Choice")]
    Value2,
    #[schemars(title = "Third Choice")]
    Value3,
}

/// Legacy choices, labelled the old way (`enumNames`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Legacy {
    Opt1,
    Opt2,
    Opt3,
}

/// Every kind of choice a form can offer.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Choices {
    /// Select one option
    untitled_single: Option<Plain>,
    /// Select one option with titles
    titled_single: Option<Labelled>,
    /// Select one option (legacy)
    #[schemars(extend("enumNames" = ["Option One", "Option Two", "Option Three"]))]
    legacy_enum: Option<Legacy>,
    /// Select multiple options
    #[serde(default)]
    #[schemars(length(min = 1, max = 3))]
    untitled_multi: Vec<Plain>,
    /// Select multiple options with titles
    #[serde(default)]
    #[schemars(length(min = 1, max = 3))]
    titled_multi: Vec<LabelledChoice>,
}

/// Ask the user to choose among options, one and several at a time.
#[tool]
async fn test_elicitation_sep1330_enums(ctx: CallContext) -> Result<String, AskError> {
    let answer = ctx
        .elicit::<Choices>("Please select options from the enum fields")
        .await?;
    Ok(format!("Elicitation completed: {}", described(&answer)))
}

/// Needs the client's model; a client that cannot lend it gets the error that says so.
#[tool]
async fn test_missing_capability(ctx: CallContext) -> Result<String, AskError> {
    let sampled = ctx.sample(Sampling::new(50).user("Say hello")).await?;
    Ok(format!("Success: {}", sampled.text()))
}

/// Whether to go on.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Confirmation {
    /// Go on?
    ok: bool,
}

/// Ask for a confirmation; the question goes with the answer, never as a request of its
/// own on the call's stream.
#[tool]
async fn test_streaming_elicitation(ctx: CallContext) -> Result<String, AskError> {
    let answer = ctx.elicit::<Confirmation>("Go on?").key("confirm").await?;
    Ok(format!("Streaming elicitation: {}", described(&answer)))
}

/// A name.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Name {
    /// Your name
    name: String,
}

/// Greet the user by the name they give.
#[tool]
async fn test_input_required_result_elicitation(ctx: CallContext) -> Result<String, AskError> {
    let answer = ctx
        .elicit::<Name>("What is your name?")
        .key("user_name")
        .await?;
    Ok(match answer {
        Elicited::Accepted(Name { name }) => format!("Hello, {name}!"),
        _ => "Hello, whoever you are!".to_owned(),
    })
}

/// Ask the client's model a question.
#[tool]
async fn test_input_required_result_sampling(ctx: CallContext) -> Result<String, AskError> {
    let asked = Sampling::new(100).user("What is the capital of France?");
    let sampled = ctx.sample(asked).key("capital_question").await?;
    Ok(format!("The model says: {}", sampled.text()))
}

/// List the client's roots.
#[tool]
async fn test_input_required_result_list_roots(ctx: CallContext) -> Result<String, AskError> {
    let roots = ctx.roots().key("client_roots").await?;
    let uris: Vec<&str> = roots.iter().map(|root| root.uri.as_str()).collect();
    Ok(format!(
        "Found {} root(s): {}",
        roots.len(),
        uris.join(", ")
    ))
}

/// Ask for a confirmation, keeping a note for the round that gets it.
#[tool]
async fn test_input_required_result_request_state(ctx: CallContext) -> Result<String, AskError> {
    if ctx.kept::<String>("asked").is_none() {
        ctx.keep("asked", &"confirmation");
    }
    let answer = ctx
        .elicit::<Confirmation>("Please confirm")
        .key("confirm")
        .await?;
    let note = ctx.kept::<String>("asked").unwrap_or_default();
    Ok(format!("state-ok: {note} {}", described(&answer)))
}

/// Ask three things at once: the user's name, a greeting from the model, the roots.
#[tool]
async fn test_input_required_result_multiple_inputs(ctx: CallContext) -> Result<String, AskError> {
    let (name, greeting, roots) = tokio::join!(
        ctx.elicit::<Name>("What is your name?").key("user_name"),
        ctx.sample(Sampling::new(50).user("Generate a greeting"))
            .key("greeting"),
        ctx.roots().key("client_roots"),
    );
    let name = name?.accepted().map_or_else(String::new, |n| n.name);
    Ok(format!(
        "{} {name}; {} root(s)",
        greeting?.text(),
        roots?.len()
    ))
}

/// A color.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Color {
    /// Your favourite color
    color: String,
}

/// Ask two questions, the second only once the first is answered.
#[tool]
async fn test_input_required_result_multi_round(ctx: CallContext) -> Result<String, AskError> {
    let name = ctx
        .elicit::<Name>("What is your name?")
        .key("step1")
        .await?;
    let Elicited::Accepted(Name { name }) = name else {
        return Ok("No name, no color.".to_owned());
    };
    let color = ctx
        .elicit::<Color>(format!("What is your favourite color, {name}?"))
        .key("step2")
        .await?;
    Ok(match color {
        Elicited::Accepted(Color { color }) => format!("{name} likes {color}."),
        _ => format!("{name} keeps their color to themselves."),
    })
}

/// Ask for a confirmation; an altered request state is refused.
#[tool]
async fn test_input_required_result_tampered_state(ctx: CallContext) -> Result<String, AskError> {
    let answer = ctx
        .elicit::<Confirmation>("Please confirm")
        .key("confirm")
        .await?;
    Ok(format!("Confirmed: {}", described(&answer)))
}

/// Ask what the client can answer: the user if it can elicit, the model if it can sample.
#[tool]
async fn test_input_required_result_capabilities(ctx: CallContext) -> Result<String, AskError> {
    let (name, sampled) = tokio::join!(
        ctx.elicit::<Name>("What is your name?").key("user_input"),
        ctx.sample(Sampling::new(50).user("Say something"))
            .key("sample_input"),
    );
    let name = optional(name)?;
    let sampled = optional(sampled)?;
    if name.is_none() && sampled.is_none() {
        return Err(AskError::Unsupported(ClientCapability::Sampling));
    }
    Ok(format!(
        "Asked the user: {}; asked the model: {}",
        name.is_some(),
        sampled.is_some()
    ))
}

/// An answer, or none when the client cannot be asked this kind of question.
fn optional<T>(asked: Result<T, AskError>) -> Result<Option<T>, AskError> {
    match asked {
        Err(AskError::Unsupported(_)) => Ok(None),
        other => other.map(Some),
    }
}

/// Some context.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Context {
    /// The context to use
    context: String,
}

/// A prompt that asks the user for its context first.
#[prompt(title = "Prompt That Asks")]
async fn test_input_required_result_prompt(
    ctx: CallContext,
) -> Result<Vec<PromptMessage>, AskError> {
    let answer = ctx
        .elicit::<Context>("What context should the prompt use?")
        .key("user_context")
        .await?;
    let context = answer
        .accepted()
        .map_or_else(|| "none".to_owned(), |c| c.context);
    Ok(vec![PromptMessage::user(format!(
        "Use this context: {context}"
    ))])
}

/// The Example Co accounts whose owner has finished at the connect page.
static CONNECTED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// List the files of an Example Co account, once its owner has connected it at Example Co's
/// own page (which the client only shows: the account's password never passes through it).
/// Here the page is simulated: its owner finishes there a moment after it is sent.
#[tool]
async fn list_account_files(
    /// The account.
    account: String,
    ctx: CallContext,
) -> Result<String, AskError> {
    let connected = |account: &str| {
        let connected = CONNECTED.lock().unwrap_or_else(|e| e.into_inner());
        connected.iter().any(|a| a == account)
    };
    if connected(&account) {
        return Ok(format!("Files of {account}: notes.txt"));
    }
    let page = UrlElicitation::new(
        format!("Connect your Example Co account {account}"),
        format!("https://example.com/connect?account={account}"),
    );
    // What the page's handler does when the owner is done: record it, tell the client.
    let done = ctx.elicitation_completion(&page);
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let mut connected = CONNECTED.lock().unwrap_or_else(|e| e.into_inner());
        if !connected.contains(&account) {
            connected.push(account);
        }
        drop(connected);
        done.complete();
    });
    Err(ctx.url_elicitation_required([page]))
}
