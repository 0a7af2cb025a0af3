import * as grpc from '@grpc/grpc-js';

/** grpc-js numbers for `grpc.default_compression_algorithm`. */
export const GRPC_COMPRESSION = { none: 0, deflate: 1, gzip: 2 };

/** @param {Buffer} b */
const identity = (b) => b;

/**
 * A gRPC client that sends and receives raw bytes on the OTLP Export methods, so tests control exactly what
 * goes on the wire (including bytes no serializer would produce).
 * @param {string} url the collector's `urls.grpc` (http://host:port)
 * @param {{ compression?: keyof typeof GRPC_COMPRESSION }} [options]
 */
export function rawGrpcClient(url, { compression = 'none' } = {}) {
  const client = new grpc.Client(new URL(url).host, grpc.credentials.createInsecure(), {
    'grpc.default_compression_algorithm': GRPC_COMPRESSION[compression],
  });
  return {
    /**
     * @param {string} service fully qualified service name, e.g. opentelemetry.proto.collector.trace.v1.TraceService
     * @param {Uint8Array} bytes the request message
     * @param {{ timeoutMs?: number, metadata?: Record<string, string> }} [options]
     * @returns {Promise<{ error: (grpc.ServiceError|null), response: (Buffer|undefined) }>}
     */
    exportRaw(service, bytes, { timeoutMs = 10000, metadata = {} } = {}) {
      const md = new grpc.Metadata();
      for (const [k, v] of Object.entries(metadata)) md.set(k, v);
      return new Promise((resolve) => {
        client.makeUnaryRequest(
          `/${service}/Export`,
          identity,
          identity,
          Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
          md,
          { deadline: Date.now() + timeoutMs },
          (error, response) => resolve({ error: error ?? null, response }),
        );
      });
    },
    close: () => client.close(),
  };
}

export const grpcStatus = grpc.status;
