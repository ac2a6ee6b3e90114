#!/usr/bin/env python3
"""Run one framework scenario and turn what it parked into testdata.

    recorder.py SCENARIO -- COMMAND [ARGS...]

The scenario COMMAND is run with SUFFIX (a random token) and META_OUT (a
file path) in its environment. It declares its topology with names ending
in "-$SUFFIX", lets its framework retry and park one message, waits (bounded)
until the parking lot holds it, and writes META_OUT:

    {"framework": {"name", "version"}, "description", "parking_lot",
     "consumed_from", "published_to": {"exchange", "routing_key"},
     "handler_runs", "error", "id", "flow": [...]}

This script then
  * reads the topology the broker holds for the suffixed names (exchanges,
    queues, bindings, policies) from the management API,
  * exports the parking lot with parkinglot's own lossless JSON export
    (non-destructive) and checks it holds exactly one message,
  * renames "-$SUFFIX" away everywhere in the JSON structure (keys and string
    values, nested tables included; never inside the body), recomputes the
    message's id with reid (a content id hashes the headers), and writes
    $OUT_DIR/SCENARIO$FILE_TAG.json,
  * and, whatever happened, deletes every queue, exchange and policy whose
    name carries the suffix.

Environment: AMQP_URL, MANAGEMENT_URL (credentials in the URL),
PARKINGLOT_BIN, REID_BIN, OUT_DIR (default: this folder), FILE_TAG (e.g.
"-4.3"), SCENARIO_TIMEOUT (seconds, default 120).
"""

import base64
import json
import os
import secrets
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def log(*a):
    print("recorder:", *a, file=sys.stderr, flush=True)


class Management:
    def __init__(self, url):
        u = urllib.parse.urlsplit(url)
        self.base = f"{u.scheme}://{u.hostname}:{u.port or 15672}"
        user = urllib.parse.unquote(u.username or "guest")
        password = urllib.parse.unquote(u.password or "guest")
        self.auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    def call(self, method, path, body=None):
        req = urllib.request.Request(self.base + path, method=method)
        req.add_header("Authorization", self.auth)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, data=data, timeout=10) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def get(self, path):
        return self.call("GET", path)

    def delete(self, path):
        try:
            self.call("DELETE", path)
        except urllib.error.HTTPError as e:
            if e.code != 404:
                raise


def q(name):
    return urllib.parse.quote(name, safe="")


def vhost_of(amqp_url):
    path = urllib.parse.urlsplit(amqp_url).path
    return urllib.parse.unquote(path[1:]) if len(path) > 1 else "/"


def topology(mgmt, vhost, tag):
    """What the broker holds for the names carrying tag, as declared."""
    v = q(vhost)
    out = {"exchanges": {}, "queues": {}, "bindings": [], "policies": {}}
    for x in mgmt.get(f"/api/exchanges/{v}"):
        if tag in x["name"]:
            out["exchanges"][x["name"]] = {
                "type": x["type"], "durable": x["durable"],
                "auto_delete": x["auto_delete"], "internal": x["internal"],
                "arguments": x["arguments"],
            }
    for qu in mgmt.get(f"/api/queues/{v}"):
        if tag in qu["name"]:
            d = {
                "type": qu.get("type", "classic"), "durable": qu["durable"],
                "auto_delete": qu["auto_delete"], "exclusive": qu.get("exclusive", False),
                "arguments": qu["arguments"],
            }
            if qu.get("policy"):
                d["policy"] = qu["policy"]
            if qu.get("effective_policy_definition"):
                d["effective_policy_definition"] = qu["effective_policy_definition"]
            out["queues"][qu["name"]] = d
    for b in mgmt.get(f"/api/bindings/{v}"):
        if b["source"] and (tag in b["source"] or tag in b["destination"]):
            out["bindings"].append({
                "exchange": b["source"], "routing_key": b["routing_key"],
                b["destination_type"]: b["destination"], "arguments": b["arguments"],
            })
    out["bindings"].sort(key=lambda b: json.dumps(b, sort_keys=True))
    for p in mgmt.get(f"/api/policies/{v}"):
        if tag in p["name"]:
            out["policies"][p["name"]] = {
                "pattern": p["pattern"], "apply-to": p["apply-to"],
                "priority": p["priority"], "definition": p["definition"],
            }
    if not out["policies"]:
        del out["policies"]
    return out


def cleanup(mgmt, vhost, tag):
    v = q(vhost)
    for qu in mgmt.get(f"/api/queues/{v}"):
        if tag in qu["name"]:
            mgmt.delete(f"/api/queues/{v}/{q(qu['name'])}")
    for x in mgmt.get(f"/api/exchanges/{v}"):
        if tag in x["name"]:
            mgmt.delete(f"/api/exchanges/{v}/{q(x['name'])}")
    for p in mgmt.get(f"/api/policies/{v}"):
        if tag in p["name"]:
            mgmt.delete(f"/api/policies/{v}/{q(p['name'])}")


def names(mgmt, vhost):
    v = q(vhost)
    return ({("queue", x["name"]) for x in mgmt.get(f"/api/queues/{v}")}
            | {("exchange", x["name"]) for x in mgmt.get(f"/api/exchanges/{v}")}
            | {("policy", x["name"]) for x in mgmt.get(f"/api/policies/{v}")})


def rename(v, tag):
    """Remove tag from every key and string of a JSON structure."""
    if isinstance(v, dict):
        return {k.replace(tag, ""): rename(x, tag) for k, x in v.items()}
    if isinstance(v, list):
        return [rename(x, tag) for x in v]
    if isinstance(v, str):
        return v.replace(tag, "")
    return v


def check_opaque(v, tag):
    """A bytes header carries base64: the tag must not hide in it."""
    if isinstance(v, dict):
        if v.get("type") == "bytes" and isinstance(v.get("value"), str):
            if tag.encode() in base64.b64decode(v["value"]):
                raise SystemExit(f"recorder: the suffix is inside a bytes header value: {v}")
        for x in v.values():
            check_opaque(x, tag)
    elif isinstance(v, list):
        for x in v:
            check_opaque(x, tag)


def rename_message(msg, tag, reid):
    body = msg["body"]
    raw = base64.b64decode(body) if msg.get("body_encoding") == "base64" else body.encode()
    if tag.encode() in raw:
        raise SystemExit("recorder: the suffix is inside the body; the scenario must keep names out of it")
    check_opaque(msg.get("headers"), tag)
    out = rename({k: v for k, v in msg.items() if k != "body"}, tag)
    out["body"] = body
    # Re-encode through parkinglot's broker package: the same message back,
    # with the id computed from the renamed headers when it is a content id.
    res = subprocess.run([reid], input=json.dumps(out) + "\n", capture_output=True,
                         text=True, timeout=30, check=True)
    again = json.loads(res.stdout)
    if {k: v for k, v in again.items() if k != "id"} != {k: v for k, v in out.items() if k != "id"}:
        raise SystemExit("recorder: re-encoding the renamed message changed more than its id")
    out["id"] = again["id"]
    return {k: out[k] for k in again}  # the export's key order


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        raise SystemExit(__doc__)
    scenario, cmd = sys.argv[1], sys.argv[3:]
    amqp_url = os.environ.get("AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/")
    mgmt_url = os.environ.get("MANAGEMENT_URL", "http://guest:guest@127.0.0.1:15672")
    parkinglot = os.environ.get("PARKINGLOT_BIN", "parkinglot")
    reid = os.environ["REID_BIN"]
    out_dir = os.environ.get("OUT_DIR", HERE)
    file_tag = os.environ.get("FILE_TAG", "")
    timeout = float(os.environ.get("SCENARIO_TIMEOUT", "120"))

    mgmt = Management(mgmt_url)
    vhost = vhost_of(amqp_url)
    overview = mgmt.get("/api/overview")
    broker = f"{overview.get('product_name', 'RabbitMQ')} {overview['rabbitmq_version']}"
    suffix = secrets.token_hex(4)
    tag = "-" + suffix
    before = names(mgmt, vhost)
    work = tempfile.mkdtemp(prefix=f"rec-{scenario}-")
    meta_path = os.path.join(work, "meta.json")
    log(f"{scenario} on {broker}: names end in {tag}")
    try:
        env = dict(os.environ, SUFFIX=suffix, META_OUT=meta_path, AMQP_URL=amqp_url,
                   MANAGEMENT_URL=mgmt_url)
        try:
            rc = subprocess.run(cmd, env=env, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            raise SystemExit(f"recorder: {scenario} did not finish within {timeout:.0f}s")
        if rc != 0:
            raise SystemExit(f"recorder: {scenario} exited {rc}")
        with open(meta_path) as f:
            meta = json.load(f)

        topo = topology(mgmt, vhost, tag)
        topo["flow"] = meta.pop("flow", [])

        export = os.path.join(work, "export.jsonl")
        subprocess.run([parkinglot, "--url", amqp_url, "--management-url", mgmt_url,
                        "--log-level", "warn", "export", meta["parking_lot"], "--file", export],
                       check=True, timeout=60, stdout=subprocess.DEVNULL)
        with open(export) as f:
            lines = [l for l in f.read().splitlines() if l.strip()]
        if len(lines) != 1:
            raise SystemExit(f"recorder: {meta['parking_lot']} holds {len(lines)} messages, want 1")
        line = json.loads(lines[0])  # {"queue", "exported_at", "message"}
        if line.get("queue") != meta["parking_lot"]:
            raise SystemExit(f"recorder: the export names queue {line.get('queue')!r}")
        message = rename_message(line["message"], tag, reid)

        doc = {
            "scenario": scenario + file_tag,
            "framework": meta["framework"],
            "description": meta["description"],
            "broker": broker,
            "parking_lot": meta["parking_lot"],
            "consumed_from": meta["consumed_from"],
            "published_to": meta["published_to"],
            "handler_runs": meta["handler_runs"],
            "error": meta["error"],
            "id": meta["id"],
            "topology": topo,
        }
        doc = rename(doc, tag)
        leftover = [k for k in meta if k not in doc]
        if leftover:
            doc["notes"] = rename({k: meta[k] for k in leftover}, tag)
        doc["message"] = message
        out = os.path.join(out_dir, f"{scenario}{file_tag}.json")
        with open(out + ".tmp", "w") as f:
            json.dump(doc, f, indent=2, ensure_ascii=False)
            f.write("\n")
        os.replace(out + ".tmp", out)
        log(f"wrote {os.path.relpath(out)} (handler ran {doc['handler_runs']} times)")
    finally:
        cleanup(mgmt, vhost, tag)
        leaked = sorted(n for n in names(mgmt, vhost) - before if tag not in n[1])
        # Names others created meanwhile show up here too: only a warning.
        for kind, name in leaked:
            log(f"warning: a new {kind} without the suffix appeared during {scenario}: {name!r}")
        for p in (meta_path, os.path.join(work, "export.jsonl")):
            if os.path.exists(p):
                os.remove(p)
        os.rmdir(work)


if __name__ == "__main__":
    main()
