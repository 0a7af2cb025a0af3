// The OTLP/HTTP client of a forward target: one keep-alive agent, one POST per forwarded request.
import http from 'node:http';
import https from 'node:https';
import { partialOf, retryAfterOf, shortText, statusOf } from './answer.js';

/**
 * @typedef {import('./answer.js').UpstreamReply} UpstreamReply
 * @typedef {import('./target.js').TargetSpec} TargetSpec
 * @typedef {import('../otlp/signals.js').Signal} Signal
 */

/** An export answer is a few bytes; an upstream that sends more is not read further. */
const MAX_ANSWER_BYTES = 64 * 1024;

export class HttpUpstream {
  /** @param {TargetSpec} spec @param {{ maxSockets: number }} options */
  constructor(spec, { maxSockets }) {
    this.spec = spec;
    this.module = spec.tls ? https : http;
    this.agent = new this.module.Agent({ keepAlive: true, maxSockets, scheduling: 'lifo' });
  }

  /**
   * @param {Signal} signal @param {Buffer} body the message as it goes on the wire (already compressed if so)
   * @param {Record<string, string>} headers @param {AbortSignal} abort
   * @returns {Promise<UpstreamReply>}
   */
  send(signal, body, headers, abort) {
    const { spec } = this;
    return new Promise((resolve) => {
      const req = this.module.request({
        host: spec.host,
        port: spec.port,
        path: spec.basePath + signal.httpPath,
        method: 'POST',
        agent: this.agent,
        headers: { ...headers, 'content-length': String(body.length) },
        signal: abort,
      });
      let settled = false;
      /** @param {UpstreamReply} reply */
      const settle = (reply) => {
        if (settled) return;
        settled = true;
        resolve(reply);
      };
      req.on('error', (err) => settle({ kind: 'failed', message: `no answer: ${err.message}` }));
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        const type = String(res.headers['content-type'] ?? '');
        const json = /json/i.test(type);
        /** @type {Buffer[]} */
        const chunks = [];
        let size = 0;
        res.on('data', (/** @type {Buffer} */ chunk) => {
          size += chunk.length;
          if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
        });
        res.on('error', (err) => settle({ kind: 'failed', message: `answer cut off: ${err.message}` }));
        res.on('close', () => settle({ kind: 'failed', message: 'answer cut off: the connection closed' }));
        res.on('end', () => {
          const answer = Buffer.concat(chunks);
          if (status >= 200 && status < 300) {
            settle({ kind: 'answer', ok: true, status, code: null, message: 'OK', retryAfterMs: null, partial: partialOf(signal, answer, json) });
            return;
          }
          if (status < 400 || status > 599) {
            settle({ kind: 'failed', message: `answered HTTP ${status}, which is not an OTLP answer (redirects are not followed)` });
            return;
          }
          const protobuf = /protobuf/i.test(type);
          const parsed = json || protobuf ? statusOf(answer, json) : null;
          const text = protobuf ? '' : shortText(answer.toString('utf8'));
          const message = parsed?.message || text || `HTTP ${status}`;
          settle({
            kind: 'answer',
            ok: false,
            status,
            code: parsed?.code ?? null,
            message,
            retryAfterMs: retryAfterOf(/** @type {string|undefined} */ (res.headers['retry-after'])) ?? parsed?.retryAfterMs ?? null,
            partial: null,
          });
        });
      });
      req.end(body);
    });
  }

  close() {
    this.agent.destroy();
  }
}
