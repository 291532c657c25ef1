"""The REST endpoints as OpenAPI 3.1, checked by tools nobody here wrote.

1. `GET /openapi.json` of a running server and `list --format openapi` are valid OpenAPI 3.1
   documents (openapi-spec-validator) describing the same operations.
2. A generic OpenAPI client (openapi3), given nothing but the document, calls a tool by its
   operation id and reads the result; a bad value comes back as the runtime's error.

Usage: openapi_check.py <a tool binary built from tests/fixtures/agent.rs>
"""

import json
import subprocess
import sys
import urllib.request

from checks import serve_http
from openapi3 import OpenAPI
from openapi_spec_validator import validate



def fetch(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def main():
    binary = sys.argv[1]
    listed = json.loads(subprocess.run([binary, "list", "--format", "openapi"], check=True,
                                       capture_output=True, text=True).stdout)
    validate(listed)
    assert listed["openapi"] == "3.1.0", listed["openapi"]
    assert listed["info"]["title"] == "agent-tools", listed["info"]
    print(f"ok: list --format openapi is valid OpenAPI 3.1 ({len(listed['paths'])} operations)")

    server, port = serve_http([binary, "serve"])
    try:
        base = f"http://127.0.0.1:{port}"
        served = fetch(f"{base}/openapi.json")
        validate(served)
        assert served["paths"].keys() == listed["paths"].keys(), "the same operations"
        print("ok: GET /openapi.json is valid OpenAPI 3.1 and lists the same operations")

        # A generic client, from the document alone.
        served["servers"] = [{"url": base}]
        api = OpenAPI(served)
        result = api.call_get_weather(data={"city": "Paris", "days": 2})
        output = result.output if hasattr(result, "output") else result["output"]
        city = output.city if hasattr(output, "city") else output["city"]
        assert city == "Paris", result
        print("ok: a generic OpenAPI client called get_weather by its operation id")
        # The client reads a refusal (400) by the document too: the runtime's error.
        try:
            refused = api.call_get_weather(data={"city": 42})
            text = refused.error if hasattr(refused, "error") else refused["error"]
        except Exception as error:  # a client that raises on 4xx: the body is the error
            text = str(error) + getattr(getattr(error, "response", None), "text", "")
        assert "'city' must be a string" in text and "42" in text, text
        print("ok: a bad value comes back as the runtime's error, naming the parameter")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
