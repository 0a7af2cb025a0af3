/** GET /api/operations: one span name of one service over the stored spans that match. */
export interface Operation {
  service: string;
  name: string;
  spans: number;
  errors: number;
  totalMs: number;
  maxMs: number;
}

/** GET /api/dependencies: calls from one service to another (a span of `child` whose parent span is `parent`'s). */
export interface Edge {
  parent: string;
  child: string;
  calls: number;
  errors: number;
  traces: number;
  /** The newest traces with such a call, newest first. */
  traceIds: string[];
}

export interface Dependencies {
  edges: Edge[];
  services: string[];
  total: number;
}
