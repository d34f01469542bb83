#!/usr/bin/python3
"""A real OTLP/HTTP trace receiver for tests (Debian's python3-opentelemetry-proto decodes the
protobuf): accepts POST /v1/traces (binary protobuf, optionally gzip), appends one JSON object per
span to OUT_FILE, answers 200 with an empty ExportTraceServiceResponse. Binds 127.0.0.1 on a free
port and prints the port on its first line of stdout.

    otlp_receiver.py OUT_FILE
"""
import gzip
import http.server
import json
import sys

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2


def value(any_value):
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind in ("array_value", "kvlist_value"):
        return str(getattr(any_value, kind))
    if kind == "bytes_value":
        return any_value.bytes_value.hex()
    return getattr(any_value, kind)


def attributes(items):
    return {item.key: value(item.value) for item in items}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/v1/traces":
            self.send_response(404)
            self.end_headers()
            return
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        request = trace_service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(body)
        with open(sys.argv[1], "a", encoding="utf-8") as out:
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        out.write(json.dumps({
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_span_id": span.parent_span_id.hex(),
                            "trace_state": span.trace_state,
                            "name": span.name,
                            "kind": span.kind,
                            "start_ns": span.start_time_unix_nano,
                            "end_ns": span.end_time_unix_nano,
                            "attributes": attributes(span.attributes),
                            "status_code": span.status.code,
                            "status_message": span.status.message,
                            "resource": resource,
                            "scope": scope_spans.scope.name,
                        }) + "\n")
        reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format, *args):  # quiet: the test reads OUT_FILE
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
