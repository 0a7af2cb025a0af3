import net from 'node:net';

/**
 * Sends one HTTP/1.1 request head (and body) exactly as written, over a fresh socket, so that no client
 * library normalises the request target, and reads the answer until the server closes the connection.
 * @param {number} port @param {string} method @param {string} target
 * @param {{ headers?: Record<string, string>, body?: string, timeoutMs?: number }} [options]
 * @returns {Promise<{ status: number, head: string, body: string }>}
 */
export function rawHttp(port, method, target, { headers = {}, body = '', timeoutMs = 5000 } = {}) {
  const lines = [`${method} ${target} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body || ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`));
    /** @type {Buffer[]} */
    const chunks = [];
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
