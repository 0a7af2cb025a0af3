import type { paths } from './generated/api';

/** GET /api/operations's answer, as server/api/peers.js's schema declares it. */
export type Operations = paths['/api/operations']['get']['responses'][200]['content']['application/json'];
/** One span name of one service over the stored spans that match. */
export type Operation = Operations['operations'][number];
/** GET /api/dependencies's answer: calls from one service to another (a span of `child` whose parent span is `parent`'s). */
export type Dependencies = paths['/api/dependencies']['get']['responses'][200]['content']['application/json'];
export type Edge = Dependencies['edges'][number];
