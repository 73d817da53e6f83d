/**
 * An OTLP/HTTP trace receiver on loopback: accepts `POST /v1/traces` in the protobuf encoding (what
 * @opentelemetry/exporter-trace-otlp-proto sends) and decodes it with protobufjs against the
 * messages of opentelemetry-proto (`collector/trace/v1/trace_service.proto`, `trace/v1/trace.proto`,
 * `common/v1/common.proto`), transcribed below with their official field numbers: the installed
 * @opentelemetry/otlp-transformer encodes by hand and ships no .proto files or generated root.
 * Only the fields the tests read are declared; protobuf skips the rest.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

const OTLP_TRACE_PROTO = `
syntax = "proto3";
package opentelemetry.proto;
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; bytes bytes_value = 7; } }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
message Status { string message = 2; int32 code = 3; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9; repeated Event events = 11; Status status = 15;
}
message ScopeSpans { repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;

const ExportRequest = protobuf.parse(OTLP_TRACE_PROTO, { keepCase: true }).root.lookupType('opentelemetry.proto.ExportTraceServiceRequest');

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
  events: string[];
  serviceName: unknown;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>/v1/traces` */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Content types of the exports received. */
  readonly contentTypes: string[];
  close(): Promise<void>;
}

const hex = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('hex');

function attributesOf(list: any[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) {
    const v = kv.value ?? {};
    out[kv.key] = v.string_value ?? v.bool_value ?? (v.int_value !== undefined ? Number(v.int_value) : undefined) ?? v.double_value;
  }
  return out;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      contentTypes.push(String(req.headers['content-type']));
      const decoded = ExportRequest.toObject(ExportRequest.decode(Buffer.concat(chunks))) as any;
      for (const rs of decoded.resource_spans ?? []) {
        const serviceName = attributesOf(rs.resource?.attributes)['service.name'];
        for (const ss of rs.scope_spans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: hex(s.trace_id),
              spanId: hex(s.span_id),
              parentSpanId: hex(s.parent_span_id),
              name: s.name,
              attributes: attributesOf(s.attributes),
              events: (s.events ?? []).map((e: any) => e.name),
              serviceName,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    spans,
    contentTypes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
