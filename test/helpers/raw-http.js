import net from 'node:net';

/** How much of a body is written at a time when it is written in pieces. */
const PIECE = 64 * 1024;

/**
 * Sends one HTTP/1.1 request head (and body) exactly as written, over a fresh socket, so that no client
 * library normalises the request target, and reads the answer until the server closes the connection.
 * The body goes in one write, unless the client is to `stopWhenAnswered`: then it is written in 64 KiB pieces as the
 * socket drains, and, like curl, no more of it once any answer has arrived.
 * @param {number} port @param {string} method @param {string} target
 * @param {{ headers?: Record<string, string>, body?: string, timeoutMs?: number, stopWhenAnswered?: boolean }} [options]
 * @returns {Promise<{ status: number, head: string, body: string }>}
 */
export function rawHttp(port, method, target, { headers = {}, body = '', timeoutMs = 5000, stopWhenAnswered = false } = {}) {
  const lines = [`${method} ${target} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body || ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  const head = `${lines.join('\r\n')}\r\n\r\n`;
  return new Promise((resolve, reject) => {
    /** @type {Buffer[]} */
    const chunks = [];
    const socket = net.connect(port, '127.0.0.1', () => {
      if (!stopWhenAnswered) return socket.write(head + body);
      socket.write(head);
      const bytes = Buffer.from(body);
      let at = 0;
      const more = () => {
        while (at < bytes.length && !chunks.length) {
          const piece = bytes.subarray(at, at + PIECE);
          at += piece.length;
          if (!socket.write(piece)) return socket.once('drain', more);
        }
      };
      more();
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`${method} ${target}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const at = text.indexOf('\r\n\r\n');
      const head = at < 0 ? text : text.slice(0, at);
      resolve({ status: Number(head.split(' ')[1]) || 0, head, body: at < 0 ? '' : text.slice(at + 4) });
    });
  });
}

/**
 * The head of a WebSocket upgrade request to `target`.
 * @param {string} target @param {Record<string, string>} [headers] Host and any others; Host may be overridden
 */
export function upgradeRequest(target, headers = {}) {
  const all = { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version': '13', ...headers };
  return `GET ${target} HTTP/1.1\r\n${Object.entries(all)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
}

/**
 * Sends an upgrade request for `target` and resolves with the answer's status once its head has arrived
 * (a 101 leaves the connection open: it is closed here).
 * @param {number} port @param {string} target @param {Record<string, string>} [headers]
 * @returns {Promise<{ status: number, head: string }>}
 */
export function rawUpgrade(port, target, headers = {}, timeoutMs = 5000) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(upgradeRequest(target, { Host: `127.0.0.1:${port}`, ...headers })));
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`upgrade ${target}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const settle = () => {
      clearTimeout(timer);
      socket.destroy();
      const head = text.split('\r\n\r\n')[0];
      resolve({ status: Number(head.split(' ')[1]) || 0, head });
    };
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n\r\n')) settle();
    });
    socket.on('error', () => {});
    socket.on('close', settle);
  });
}
