"""Schemathesis hooks for the contract run (scripts/test/contract.sh).

Every phase (examples, coverage, fuzzing, stateful) passes through `before_call`, which adjusts
a case only where the schema cannot say what the service documents in words, and only for
values the schema accepts (an invalid value is left as drawn, so negative cases stay negative):

* Tenant endpoints are called on the `default` account (random ids only find 404s), and the
  admin API does not delete `default`, so the tenant endpoints keep an account.
* A `cursor` is opaque, bound to the account, and only the service makes valid ones: drawn
  ones are dropped.
* `enc` (an encrypted request) is the AES-GCM sealing of a query string under an account's key:
  a well-formed one cannot be generated, so it is dropped (EncryptionTests cover it).
* `GET /v1/{accountId}/cache` takes `type`, `client_ip`, `short` and `expired` only with `host`
  (a listing refuses them, 400 naming the argument): valid ones drawn without `host` are dropped.
* Likewise a host lookup (`host` given) refuses the listing's `limit` and `cursor`: valid ones
  drawn beside `host` are dropped. `GET /v1/{accountId}/resolve` needs `host` unless it comes
  inside `enc` (which the spec cannot require): a case without it gets one.
* A sealed body (`application/octet-stream`, under `enc`) cannot be generated either: a positive
  case with one is sent as JSON instead.
* `"***"` in an account body stands for the secret stored for that account; a generator
  copies it from one account's GET into another's PUT, where nothing is stored (a 400 the
  spec describes). Such secrets are dropped (AdminAPITests cover the round trip).
* An account body whose keys contradict each other is a 400 the schema cannot express:
  requireSignedRequests without clientKeys, requireEncryption without aesSecretKey, minCacheTTL
  above maxCacheTTL, no upstreams and no fallback. The contradiction is removed.

The service's upstreams are dead loopback ports (and the run has no network besides loopback),
so a resolution ends in the documented upstream failure: 502/504 on the v1 and DoH JSON APIs,
500 `InternalError` "could not resolve" on the EMAS API. The stock `not_a_server_error` check
is replaced by one that allows exactly those and nothing else.
"""
import ipaddress
import re

import schemathesis

TENANT_PREFIXES = ("/v1/{accountId}/", "/{accountId}/")
ENC = re.compile(r"^[A-Za-z0-9_-]{38,}$")
FLAGS = {"0", "1", "true", "false"}


def _is_ip(text):
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def _whole(value):
    """A JSON number with no fraction (`524289.0` included), not a boolean."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer()


HOST_ONLY = {
    "type": lambda value: isinstance(value, str) and value in {"A", "AAAA", "auto", "both"},
    "short": lambda value: isinstance(value, str) and value in FLAGS,
    "expired": lambda value: isinstance(value, str) and value in FLAGS,
    "client_ip": lambda value: isinstance(value, str) and _is_ip(value),
}


@schemathesis.hook
def before_call(ctx, case, kwargs):
    path = case.operation.path
    method = case.operation.method.upper()
    parameters = case.path_parameters
    if parameters and path.startswith(TENANT_PREFIXES):
        parameters["accountId"] = "default"
    elif parameters and path == "/v1/accounts/{accountId}" and method == "DELETE" \
            and parameters.get("accountId") == "default":
        parameters["accountId"] = "generated"
    query = case.query
    if isinstance(query, dict):
        if isinstance(query.get("enc"), str) and ENC.match(query["enc"]):
            del query["enc"]
        if method == "GET" and path == "/v1/{accountId}/cache" and "host" not in query:
            for name, valid in HOST_ONLY.items():
                if name in query and valid(query[name]):
                    del query[name]
        if isinstance(query.get("cursor"), str):
            del query["cursor"]
        if method == "GET" and path == "/v1/{accountId}/cache" and "host" in query:
            if str(query.get("limit", "")).isdigit() and 1 <= int(query["limit"]) <= 1000:
                del query["limit"]
        if method == "GET" and path == "/v1/{accountId}/resolve" and "host" not in query:
            query["host"] = "www.example.test"
    elif method == "GET" and path == "/v1/{accountId}/resolve":
        case.query = {"host": "www.example.test"}
    if case.media_type == "application/octet-stream" and method in ("POST", "PUT"):
        case.media_type = "application/json"
        case.body = {"hosts": ["www.example.test"]} if path.endswith("/preload") else {}
    body = case.body
    if method == "PUT" and path == "/v1/accounts/{accountId}" and isinstance(body, dict):
        if body.get("requireSignedRequests") is True and body.get("clientKeys") in (None, []):
            body["requireSignedRequests"] = False
        if body.get("requireEncryption") is True and "aesSecretKey" not in body:
            body["requireEncryption"] = False
        low, high = body.get("minCacheTTL"), body.get("maxCacheTTL", 3600)
        if _whole(low) and _whole(high) and 0 <= low <= 604800 and 1 <= high <= 604800 and low > high:
            body["minCacheTTL"] = high
        if body.get("upstreams") == [] and body.get("localDNSFallback") is False:
            body["localDNSFallback"] = True
        for key in ("accessKeySecret", "secretKey", "aesSecretKey"):
            if body.get(key) == "***":
                del body[key]
        if isinstance(body.get("clientKeys"), list):
            body["clientKeys"] = [key for key in body["clientKeys"] if not (isinstance(key, dict) and key.get("secret") == "***")]


UPSTREAM_CODES = {"UpstreamFailed", "UpstreamTimeout"}


@schemathesis.check
def server_errors_are_upstream_failures(ctx, response, case):
    """A 5xx is allowed only as the documented answer to dead upstreams."""
    status = response.status_code
    if status < 500:
        return None
    try:
        body = response.json()
    except Exception:
        body = None
    if isinstance(body, dict):
        error = body.get("error") if isinstance(body.get("error"), dict) else body
        code = error.get("code") or error.get("Code")
        message = str(error.get("message") or error.get("Comment") or "")
        if status in (502, 504) and code in UPSTREAM_CODES:
            return None
        if status == 500 and code == "InternalError" and message.startswith("could not resolve"):
            return None
    raise AssertionError(f"unexplained server error {status}: {response.text[:300]}")
