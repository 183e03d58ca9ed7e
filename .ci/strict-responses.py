#!/usr/bin/env python3
"""Real sandbox responses checked against the contract by strict validators.

Drives a running sandbox over HTTP through the flows whose responses carry the schema's
harder shapes — a collection transaction with no recipient and no exchange rate, a
cross-currency payment with one, payment requests with and without an amount, recipients,
virtual accounts, webhooks — and validates every 2xx body against its documented response
schema twice: with openapi-schema-validator's OAS30ReadValidator against
openapi/payments.yaml (OpenAPI 3.0.3, where `nullable` does not reach into a `$ref`) and with
its OAS31Validator against docs/openapi-3.1.json. Exits 1 on the first document that rejects
a response, naming the operation, the instance path and the reason.

Usage: strict-responses.py BASE_URL TOKEN
"""
import decimal
import json
import re
import sys
import urllib.error
import urllib.request
import uuid

import yaml
from openapi_schema_validator import OAS30ReadValidator, OAS31Validator


def load_documents():
    with open("openapi/payments.yaml") as f:
        v30 = yaml.safe_load(f)
    with open("docs/openapi-3.1.json") as f:
        v31 = json.load(f)
    return [("3.0.3", v30, OAS30ReadValidator), ("3.1", v31, OAS31Validator)]


def response_schema(document, method, template, status):
    operation = document["paths"][template][method.lower()]
    response = operation["responses"][str(status)]
    while "$ref" in response:
        name = response["$ref"].rsplit("/", 1)[1]
        response = document["components"]["responses"][name]
    return response["content"]["application/json"]["schema"]


def validate(documents, method, template, status, body):
    """Validates `body` against every document; returns the number of documents checked."""
    for label, document, validator_class in documents:
        schema = response_schema(document, method, template, status)
        # The document's components sit beside the schema, so `#/components/...` references
        # resolve inside it; `components` is no schema keyword and is otherwise ignored.
        root = {**schema, "components": document["components"]}
        validator = validator_class(root, format_checker=validator_class.FORMAT_CHECKER)
        errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
        if errors:
            for error in errors[:5]:
                path = "/" + "/".join(str(p) for p in error.absolute_path)
                print(f"FAIL {label}: {method} {template} {status} at {path}: {error.message}")
            sys.exit(1)
    return len(documents)


class Sandbox:
    def __init__(self, base, token, documents):
        self.base = base.rstrip("/")
        self.token = token
        self.documents = documents
        self.checked = 0

    def call(self, method, template, path_values=None, body=None, query="", expect=(200, 201)):
        path = template
        for key, value in (path_values or {}).items():
            path = path.replace("{" + key + "}", str(value))
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path + query, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        parsed = json.loads(raw) if raw else None
        if status not in expect:
            print(f"FAIL: {method} {path} answered {status}, expected {expect}: {raw[:300]!r}")
            sys.exit(1)
        self.checked += validate(self.documents, method, template, status, parsed)
        return parsed


def main():
    base, token = sys.argv[1], sys.argv[2]
    s = Sandbox(base, token, load_documents())

    for template in ["/currencies", "/countries", "/balances", "/transactions", "/recipients",
                     "/paymentrequests", "/virtualaccounts", "/webhook-endpoints"]:
        s.call("GET", template)
    s.call("GET", "/bankfields", query="?country=NG&currency=NGN")

    gbp = s.call("POST", "/balances", body={"currency": "GBP", "name": "Strict GBP"})
    s.call("GET", "/balances/{id}", {"id": gbp["id"]})
    # A collection: no recipient, no exchange rate (both `null`).
    collection = s.call("POST", "/sandbox/balances/{id}/transfers", {"id": gbp["id"]},
                        {"amount": 500_000, "sender_name": "Grace Hopper", "reference": "top-up"})
    assert collection["recipient"] is None and collection["exchange_rate"] is None, collection
    s.call("GET", "/transactions/{id}", {"id": collection["id"]})

    # A cross-currency payment: a recipient and an exchange rate.
    account = {"currency": "NGN", "bank_code": "058", "account_number": "0123456789"}
    held = s.call("POST", "/recipients/validate", body={"country": "NG", "bank_account": account})
    assert held["name_check"] == "not_checked", held
    account["account_name"] = held["account_name"].title()
    checked = s.call("POST", "/recipients/validate", body={"country": "NG", "bank_account": account})
    assert checked["name_check"] == "match", checked
    recipient = s.call("POST", "/recipients", body={"type": "personal", "country": "NG", "bank_account": account})
    s.call("GET", "/recipients/{id}", {"id": recipient["id"]})
    payment = s.call("POST", "/transactions", body={
        "transaction_type": "payment", "amount": 10_000, "balance_id": gbp["id"],
        "recipient_id": recipient["id"], "order_id": f"strict-{uuid.uuid4()}"})
    assert payment["recipient"] is not None and payment["exchange_rate"] is not None, payment
    # The published rate reproduces the converted amount to the minor unit.
    minor = {c["currency_code"]: c["minor_units"] for c in s.call("GET", "/currencies")}
    rate = decimal.Decimal(payment["exchange_rate"]["rate_decimal"])
    major_amount = decimal.Decimal(payment["amount"]).scaleb(-minor[payment["currency"]])
    expected = (major_amount * rate).scaleb(minor[payment["to_currency"]]).to_integral_value(decimal.ROUND_FLOOR)
    assert payment["to_amount"] == int(expected), (payment, expected)
    s.call("GET", "/transactions/{id}", {"id": payment["id"]})
    s.call("GET", "/transactions", query=f"?balance_id={gbp['id']}")

    request = s.call("POST", "/paymentrequests", body={"currency": "GBP", "amount": 2500, "reference": "Invoice"})
    s.call("GET", "/paymentrequests/{id}", {"id": request["id"]})
    s.call("POST", "/sandbox/paymentrequests/{id}/pay", {"id": request["id"]}, {})
    # An open request: `amount` is null until the payer chooses it.
    open_request = s.call("POST", "/paymentrequests", body={"currency": "GBP"})
    assert open_request["amount"] is None, open_request
    paid = s.call("POST", "/sandbox/paymentrequests/{id}/pay", {"id": open_request["id"]}, {"amount": 1234})
    assert paid["amount"] == 1234, paid
    cancelled = s.call("POST", "/paymentrequests", body={"currency": "GBP"})
    s.call("DELETE", "/paymentrequests/{id}", {"id": cancelled["id"]})

    s.call("POST", "/balances", body={"currency": "NGN", "name": "Strict NGN"})
    account = s.call("POST", "/virtualaccounts", body={"currency": "NGN", "account_name": "Strict"})
    s.call("GET", "/virtualaccounts/{id}", {"id": account["id"]})
    # The background rail (every second here) may have made it active already: then the
    # answer is the documented 409, validated like any other.
    s.call("POST", "/sandbox/virtualaccounts/{id}/status", {"id": account["id"]}, {"status": "active"},
           expect=(200, 201, 409))
    s.call("POST", "/sandbox/virtualaccounts/{id}/transfers", {"id": account["id"]},
           {"amount": 1_000, "payer_name": "Alan Turing"})

    # A ping waited for: its outcome (this host resolves nowhere, so the attempt fails).
    endpoint = s.call("POST", "/webhook-endpoints", body={"url": "https://hooks.invalid/payments"})
    s.call("GET", "/webhook-endpoints/{id}", {"id": endpoint["id"]})
    ping = s.call("POST", "/webhooks", body={"endpoint_id": endpoint["id"], "wait": True})
    assert ping["status"] == "failed" and ping["next_attempt"] is not None, ping
    s.call("GET", "/webhooks/{id}", {"id": ping["id"]})
    s.call("GET", "/webhooks")
    s.call("GET", "/transactions", query="?search=Grace")
    print(f"strict validation: {s.checked} responses valid (3.0.3 with OAS30ReadValidator, 3.1 with OAS31Validator)")


if __name__ == "__main__":
    main()
