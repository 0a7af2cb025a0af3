// The last answer a connection gets, written to a client that has sent all it will (a refused upgrade or request
// head, a request its client ended mid-body): the socket is let go as soon as the answer is handed to the kernel, so
// that a client that never reads it holds no socket, and one that reconnects at once costs little. The UI port's
// front door runs this in a thread of its own: it imports nothing.

/** How long the answer may take to be written before its socket is destroyed anyway. */
const WRITE_MS = 1000;

/** @param {import('node:stream').Duplex} socket @param {string} answer the whole HTTP response */
export function answerAndClose(socket, answer) {
  // A client that reset the connection unread makes the write fail, and the error Node builds for it would carry a
  // stack trace that costs more than the rest of the answer and that nobody reads.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    socket.write(answer);
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
  // Nearly always the kernel takes the whole answer at once: the socket is closed there and then (the kernel still
  // delivers the answer, then the FIN), with no timer or listener, and no error to build when its client resets it.
  if (socket.writableLength === 0) {
    socket.destroy();
    return;
  }
  socket.end();
  socket.once('finish', () => socket.destroy());
  // A client that keeps its receive window shut would keep the answer, and the socket, waiting.
  const stuck = setTimeout(() => socket.destroy(), WRITE_MS);
  socket.once('close', () => clearTimeout(stuck));
}
