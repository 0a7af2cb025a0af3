// Where the query floor's answers meet Fastify: an answer is written to the reply, and a request's socket
// tells a waiting query when its client has gone away.
import { Readable } from 'node:stream';

/**
 * @param {import('fastify').FastifyReply} reply
 * @param {import('../query/respond.js').Answer|null} answer null: the client has gone, there is no one to answer
 */
export function sendAnswer(reply, answer) {
  if (!answer) return reply.hijack();
  reply.code(answer.status);
  if (answer.headers) reply.headers(answer.headers);
  if (answer.text !== undefined) return reply.send(answer.text);
  return reply.send(answer.slices ? Readable.from(answer.slices, { objectMode: false }) : answer.json);
}

/** @param {import('fastify').FastifyRequest} request @returns {import('../query/respond.js').OnGone} */
export function whenGone(request) {
  const socket = request.raw.socket;
  return (stop) => {
    // Called back later even when the socket is gone already: the caller has its undo function by then.
    if (socket.destroyed) setImmediate(stop);
    socket.on('close', stop);
    return () => socket.off('close', stop);
  };
}
