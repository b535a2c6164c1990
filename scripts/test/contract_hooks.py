"""Schemathesis hooks for the contract run (scripts/test/contract.sh).

Every phase (examples, coverage, fuzzing, stateful) passes through `before_call`, which adjusts
a case only where the schema cannot say what the service documents in words, and only for
values the schema accepts (an invalid value is left as drawn, so negative cases stay negative):

* Tenant endpoints are called on the `default` account (random ids only find 404s), and the
  admin API neither replaces nor deletes `default` (those go to the account `generated`), so
  the tenant endpoints keep an account and its live loopback upstreams.
* An RFC 8484 query (`dns`, or a POST body) that the schema accepts is a well-formed base64url
  string or body, not necessarily a DNS message: it is replaced by a real query for
  www.example.test A (invalid ones are left as drawn). `GET /dns-query` needs `dns`, or `name`
  with `Accept: application/dns-json`: a case without the one its Accept needs gets it.
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
  above maxCacheTTL, no upstreams and no fallback, a `listed` domain list that allows nothing,
  a rule whose `weights` count differs from its longer address list, two rules of one name.
  The contradiction is removed; so, in an account body and a policy document, is a
  `dns64Prefix` the pattern lets through that is no RFC 6052 prefix (host bits, bits 64-71).
  A rule's network that the schema's loose IPv6 pattern lets through is made a network the
  service reads (host bits cleared; an unreadable one replaced).
* `PUT /v1/{accountId}/policy` needs the document's current ETag in `If-Match`, which only a GET
  just before gives: the case sends `*` (PolicyHandlerTests and PolicyAPITests cover 412 and 428).

The service's upstreams are live (unbound behind dnss on loopback, every name answered), so
the stock `not_a_server_error` check runs: any 5xx is a fault of httpdnsd.
"""
import base64
import ipaddress
import re

import schemathesis

TENANT_PREFIXES = ("/v1/{accountId}/", "/{accountId}/")
DNS_ARGUMENT = re.compile(r"^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}(?:==)?|[A-Za-z0-9_-]{3}=?)?$")
# www.example.test A, ID 0, base64url without padding (RFC 8484 section 4.1).
DNS_QUERY = "AAABAAABAAAAAAAAA3d3dwdleGFtcGxlBHRlc3QAAAEAAQ"
DNS_PATHS = ("/dns-query", "/v1/{accountId}/dns-query")


@schemathesis.serializer("application/dns-message")
def dns_message(ctx, value):
    """A DNS message body as the bytes drawn, or text as its code points (latin-1)."""
    return value if isinstance(value, bytes) else str(value).encode("latin-1", errors="replace")
ENC = re.compile(r"^[A-Za-z0-9_-]{38,}$")
FLAGS = {"0", "1", "true", "false"}
# openapi.yaml's QueryType.
QUERY_TYPE = re.compile(r"^(|[Aa]|[Aa]{4}|[Aa][Uu][Tt][Oo]|[Bb][Oo][Tt][Hh]|1|4|6|28|4,6|[Aa],[Aa]{4})$")


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
    "type": lambda value: isinstance(value, str) and QUERY_TYPE.match(value) is not None,
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
    elif parameters and path == "/v1/accounts/{accountId}" and method in ("PUT", "DELETE") \
            and parameters.get("accountId") == "default":
        parameters["accountId"] = "generated"
    _dns_query(case, path, method)
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
        # First: a dropped secret may leave a contradiction that the lines below remove.
        for key in ("accessKeySecret", "secretKey", "aesSecretKey"):
            if body.get(key) == "***":
                del body[key]
        if isinstance(body.get("clientKeys"), list):
            body["clientKeys"] = [key for key in body["clientKeys"] if not (isinstance(key, dict) and key.get("secret") == "***")]
        if body.get("requireSignedRequests") is True and body.get("clientKeys") in (None, []):
            body["requireSignedRequests"] = False
        if body.get("requireEncryption") is True and "aesSecretKey" not in body:
            body["requireEncryption"] = False
        low, high = body.get("minCacheTTL"), body.get("maxCacheTTL", 3600)
        if _whole(low) and _whole(high) and 0 <= low <= 604800 and 1 <= high <= 604800 and low > high:
            body["minCacheTTL"] = high
        if body.get("upstreams") == [] and body.get("localDNSFallback") is False:
            body["localDNSFallback"] = True
        _policy_contradictions(body)
    if method == "PUT" and path == "/v1/{accountId}/policy":
        headers = case.headers if isinstance(case.headers, dict) else {}
        headers["If-Match"] = "*"
        case.headers = headers
        if isinstance(body, dict):
            _policy_contradictions(body)


def _policy_contradictions(body):
    """What the schema cannot say of the policy keys (an account body's or a policy document's)."""
    domains = body.get("domains")
    if isinstance(domains, dict) and domains.get("mode") == "listed" and not domains.get("allow"):
        domains["mode"] = "any"
    if isinstance(body.get("rules"), list):
        _rules(body["rules"])
    prefix = body.get("dns64Prefix")
    if isinstance(prefix, str) and DNS64_PATTERN.match(prefix) and not _is_dns64_prefix(prefix):
        body["dns64Prefix"] = "64:ff9b::/96"


# openapi.yaml's DNS64Prefix pattern; the service also wants an IPv6 prefix without host bits
# and with bits 64-71 zero (RFC 6052).
DNS64_PATTERN = re.compile(r"^[0-9A-Fa-f:.]+/(32|40|48|56|64|96)$")


def _is_dns64_prefix(text):
    try:
        network = ipaddress.IPv6Network(text, strict=True)
    except ValueError:
        return False
    return network.network_address.packed[8] == 0 and network.network_address.ipv4_mapped is None


def _rules(rules):
    """Removes what makes valid-looking rules contradict each other or the service's parsing."""
    names = set()
    for index, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue
        if isinstance(rule.get("name"), str):
            if rule["name"] in names:
                rule["name"] = ("r%d-" % index + rule["name"])[:64]
            names.add(rule["name"])
        answer = rule.get("answer")
        if isinstance(answer, dict) and isinstance(answer.get("weights"), list):
            lists = [answer.get(key) for key in ("ipv4", "ipv6")]
            longest = max([len(value) for value in lists if isinstance(value, list)] or [0])
            weights = answer["weights"][:longest]
            answer["weights"] = weights + [1] * (longest - len(weights))
        when = rule.get("when")
        if isinstance(when, dict) and isinstance(when.get("networks"), list):
            when["networks"] = [_network(value) for value in when["networks"]]


def _network(value):
    if not isinstance(value, str):
        return value
    try:
        return str(ipaddress.ip_network(value, strict=False))
    except ValueError:
        return "2001:db8::/32"


def _dns_query(case, path, method):
    """A real DNS query where the schema lets any well-formed string or bytes through."""
    if path not in DNS_PATHS:
        return
    if method == "POST":
        if case.media_type == "application/dns-message" and isinstance(case.body, (bytes, str)):
            # Text, as the schema's `type: string` is (the serializer writes it as latin-1).
            case.body = base64.urlsafe_b64decode(DNS_QUERY + "==").decode("latin-1")
        return
    query = case.query if isinstance(case.query, dict) else {}
    dns = query.get("dns")
    if isinstance(dns, str) and len(dns) >= 16 and DNS_ARGUMENT.match(dns):
        query["dns"] = DNS_QUERY
    accept = (case.headers or {}).get("Accept", "")
    if path == "/dns-query" and "dns" not in query:
        if accept.startswith("application/dns-json"):
            query.setdefault("name", "www.example.test")
        else:
            query["dns"] = DNS_QUERY
    case.query = query
