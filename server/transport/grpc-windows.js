// HTTP/2 flow-control windows of the gRPC receiver's connections, and how a connection earns a wider one.
//
// HTTP/2's default of 64 KiB per connection, which grpc-js keeps, makes a client with four 50 KiB batches under way
// wait for WINDOW_UPDATE round trips, and the server read and answer more, smaller frames; grpc-go servers (the
// Collector's) grow theirs up to 16 MiB. Under versus-collector.sh's load (traces, `--print none`, 5 interleaved runs)
// an 8 MiB connection window with 1 MiB streams took the median from 205,479 to 248,963 spans per server CPU-second
// (1.21x). Its 540 KB requests (BATCH=1000) read 7 % fewer spans per CPU-second with 128 KiB streams than with 1 MiB
// (medians of 4 alternating runs, 240,640 against 258,600; that run's spread was wider).
//
// What every connection has sent when the server reads is read in one turn of the event loop, and a client may send
// a stream's window before the server reads. Twenty connections that each sent the first 8 MiB of a 60 MB message
// held the loop 66-72 ms a turn with 1 MiB streams, under 30 ms with 128 KiB; twenty that each began ten such
// messages (npm run soak's row), 30-108 ms with 128 KiB (four runs), 17-29 ms with 64 KiB or 32 KiB (three runs
// each). So a connection starts with HTTP/2's default stream window, as grpc-go's do, and is given the wider one once
// one of its calls has been answered OK: a stalled or refused sender never earns it, an exporter does with its first
// batch, and versus-collector.sh's gRPC cells read as they did with 128 KiB from the start.

/** What a stream may send before the server reads it, on a connection with no call answered OK yet: HTTP/2's default. */
export const FIRST_STREAM_WINDOW = 65_535;
/** The same, once it has: 128 KiB holds each request of versus-collector.sh's default load whole (the largest is 54 KB). */
export const EARNED_STREAM_WINDOW = 128 * 1024;
/** What a connection may send, all its streams together, before the server reads. */
export const SESSION_WINDOW = 8 * 1024 * 1024;

/**
 * Gives the connection of a call just answered OK the wider stream window. The session sends the SETTINGS frame that
 * raises it once: it ignores a window no wider than the one it has.
 * @param {import('./h2/session.js').H2Session|undefined} session
 */
export function earnWindow(session) {
  session?.settings({ initialWindowSize: EARNED_STREAM_WINDOW });
}
