"""What we hand to each provider, checked against the providers' own SDK types.

1. Every history of tests/golden/agent/ (a user's question, the model's turn as we keep it,
   and our results) is validated item by item against the request types of the official
   Python SDKs (openai, anthropic, google-genai), strictly and with no extra field allowed.
2. Model turns built with those SDKs' own response types are given to our `answer`
   command; what it prints must be one valid result per call, in the model's order, with
   the call's id echoed.

Usage: provider_types.py <a tool binary built from tests/fixtures/agent.rs> <golden dir>
"""

import json
import subprocess
import sys
from pathlib import Path

import anthropic.types as anthropic_types
import openai.types.chat as chat
import openai.types.responses as responses
from google.genai import types as gemini
from openai.types.responses import response_input_item_param
from pydantic import TypeAdapter

FAILURES = []
ADAPTERS = {}


def consume(value):
    """Walks a validated value, so the items of lazy `Iterable` fields are checked too:
    pydantic validates those only when they are iterated."""
    if type(value).__name__ == "ValidatorIterator":
        return [consume(item) for item in value]
    if isinstance(value, dict):
        return {key: consume(item) for key, item in value.items()}
    if isinstance(value, list):
        return [consume(item) for item in value]
    return value


def check(label, kind, value):
    try:
        if isinstance(kind, type) and issubclass(kind, gemini._common.BaseModel):
            kind.model_validate(value, strict=False)
        else:
            # The adapter must outlive the walk: lazy items are validated by it.
            adapter = ADAPTERS.setdefault(kind, TypeAdapter(kind))
            consume(adapter.validate_python(value, strict=True, extra="forbid"))
    except Exception as error:  # a validation error, reported with the value
        FAILURES.append(f"{label}: not a valid {getattr(kind, '__name__', kind)}:\n{error}\n{json.dumps(value)[:600]}")


def chat_item(item):
    role = item.get("role")
    return {
        "user": chat.ChatCompletionUserMessageParam,
        "assistant": chat.ChatCompletionAssistantMessageParam,
        "tool": chat.ChatCompletionToolMessageParam,
    }.get(role)


def responses_item(item):
    if item.get("role") == "user":
        return responses.EasyInputMessageParam
    return {
        "reasoning": responses.ResponseReasoningItemParam,
        "function_call": responses.ResponseFunctionToolCallParam,
        "function_call_output": response_input_item_param.FunctionCallOutput,
    }.get(item.get("type"))


def anthropic_item(item):
    return {
        "user": anthropic_types.UserMessageParam,
        "assistant": anthropic_types.AssistantMessageParam,
    }.get(item.get("role"))


def gemini_item(_item):
    return gemini.Content


ITEM_TYPES = {
    "openai-chat": chat_item,
    "openai-responses": responses_item,
    "anthropic": anthropic_item,
    "gemini": gemini_item,
}


def check_history(label, dialect, history):
    for index, item in enumerate(history):
        kind = ITEM_TYPES[dialect](item)
        if kind is None:
            FAILURES.append(f"{label}[{index}]: no request type takes this item: {json.dumps(item)[:300]}")
            continue
        check(f"{label}[{index}]", kind, item)


def golden_histories(golden):
    for dialect in ITEM_TYPES:
        path = golden / f"{dialect}.json"
        history = json.loads(path.read_text())
        check_history(path.name, dialect, history)
        print(f"ok: {path.name}: {len(history)} items are valid {dialect} request items")


# Model turns built with the SDKs' own response types.

def chat_turn():
    calls = [
        chat.ChatCompletionMessageFunctionToolCall(
            id="call_a", type="function",
            function={"name": "get_weather", "arguments": '{"city": "Paris", "days": 1}'}),
        chat.ChatCompletionMessageFunctionToolCall(
            id="call_b", type="function",
            function={"name": "get_weather", "arguments": 'Sure: ```json\n{"city": "Rome"'}),
        chat.ChatCompletionMessageFunctionToolCall(
            id="call_c", type="function", function={"name": "weather_chart", "arguments": "{}"}),
        chat.ChatCompletionMessageFunctionToolCall(
            id="call_d", type="function", function={"name": "get_wether", "arguments": "{}"}),
    ]
    completion = chat.ChatCompletion(
        id="chatcmpl-sdk", object="chat.completion", created=1, model="gpt",
        choices=[{"index": 0, "finish_reason": "tool_calls",
                  "message": chat.ChatCompletionMessage(role="assistant", content=None, tool_calls=calls)}],
        usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
    ids = [call.id for call in calls]
    return [
        ("ChatCompletion", completion.model_dump(mode="json"), ids),
        ("ChatCompletion without nulls", completion.model_dump(mode="json", exclude_none=True), ids),
        ("ChatCompletionMessage", completion.choices[0].message.model_dump(mode="json"), ids),
    ]


def responses_turn():
    items = [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        responses.ResponseFunctionToolCall(
            type="function_call", id="fc_1", call_id="call_a", name="get_weather",
            arguments='{"city": "Oslo"}', status="completed"),
        responses.ResponseFunctionToolCall(
            type="function_call", id="fc_2", call_id="call_b", name="weather_chart",
            arguments="{}", status="completed"),
    ]
    response = responses.Response(
        id="resp_sdk", object="response", created_at=1, model="gpt", status="completed",
        output=items, parallel_tool_calls=True, tool_choice="auto", tools=[],
        usage={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
               "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
               "output_tokens_details": {"reasoning_tokens": 0}})
    return [
        ("Response", response.model_dump(mode="json"), ["call_a", "call_b"]),
        ("Response without nulls", response.model_dump(mode="json", exclude_none=True), ["call_a", "call_b"]),
    ]


def anthropic_turn():
    message = anthropic_types.Message(
        id="msg_sdk", type="message", role="assistant", model="claude",
        stop_reason="tool_use", stop_sequence=None,
        content=[
            anthropic_types.TextBlock(type="text", text="Checking."),
            anthropic_types.ToolUseBlock(type="tool_use", id="toolu_a", name="get_weather", input={"city": "Bern"}),
            anthropic_types.ToolUseBlock(type="tool_use", id="toolu_b", name="weather_chart", input={}),
            anthropic_types.ToolUseBlock(type="tool_use", id="toolu_c", name="rain_sensor", input={}),
        ],
        usage=anthropic_types.Usage(input_tokens=10, output_tokens=5))
    ids = ["toolu_a", "toolu_b", "toolu_c"]
    return [
        ("Message", message.model_dump(mode="json"), ids),
        ("Message without nulls", message.model_dump(mode="json", exclude_none=True), ids),
    ]


def gemini_turn():
    response = gemini.GenerateContentResponse(
        candidates=[gemini.Candidate(
            index=0, finish_reason="STOP",
            content=gemini.Content(role="model", parts=[
                gemini.Part(function_call=gemini.FunctionCall(id="g1", name="get_weather", args={"city": "Lima"}),
                            thought_signature=b"signature"),
                gemini.Part(function_call=gemini.FunctionCall(name="weather_chart", args={})),
                gemini.Part(function_call=gemini.FunctionCall(id="g3", name="rain_sensor", args={})),
            ]))],
        usage_metadata=gemini.GenerateContentResponseUsageMetadata(
            prompt_token_count=10, candidates_token_count=5, total_token_count=15))
    wire = response.model_dump(mode="json", by_alias=True, exclude_none=True)
    return [("GenerateContentResponse", wire, ["g1", None, "g3"])]


def answered_ids(dialect, messages):
    if dialect == "openai-chat":
        return [message["tool_call_id"] for message in messages]
    if dialect == "openai-responses":
        return [item["call_id"] for item in messages]
    if dialect == "anthropic":
        return [block["tool_use_id"] for block in messages[0]["content"]]
    return [part["functionResponse"].get("id") for part in messages[0]["parts"]]


def sdk_turns(binary):
    turns = {
        "openai-chat": chat_turn(),
        "openai-responses": responses_turn(),
        "anthropic": anthropic_turn(),
        "gemini": gemini_turn(),
    }
    for dialect, cases in turns.items():
        for label, turn, ids in cases:
            run = subprocess.run([binary, "answer", "--dialect", dialect], input=json.dumps(turn),
                                 capture_output=True, text=True, timeout=60)
            if run.returncode != 0:
                FAILURES.append(f"{dialect} {label}: answer exited {run.returncode}: {run.stderr}")
                continue
            messages = json.loads(run.stdout)
            check_history(f"{dialect} answer to an SDK {label}", dialect, messages)
            if answered_ids(dialect, messages) != ids:
                FAILURES.append(f"{dialect} {label}: answered {answered_ids(dialect, messages)}, asked {ids}")
            print(f"ok: {dialect}: the answer to an SDK-built {label} is valid, one result per call in order")
    # Unreadable input exits 2 with the reason.
    run = subprocess.run([binary, "answer", "--dialect", "anthropic"], input='{"role": "user"}',
                         capture_output=True, text=True, timeout=60)
    if run.returncode != 2 or "role" not in run.stderr:
        FAILURES.append(f"an unreadable turn should exit 2 naming the field: {run.returncode} {run.stderr}")


def main():
    binary, golden = sys.argv[1], Path(sys.argv[2])
    golden_histories(golden)
    sdk_turns(binary)
    if FAILURES:
        print("\n\n".join(FAILURES), file=sys.stderr)
        sys.exit(1)
    print("ok: every message we produce is valid for its provider's SDK")


if __name__ == "__main__":
    main()
