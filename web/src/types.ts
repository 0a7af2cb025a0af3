/**
 * Shapes the web app has beyond the REST API's, whose own come from generated/api.ts (npm run api-types, from
 * GET /api/openapi.json): the live feed's messages (docs/live.md). Every string in them is untrusted text.
 */
import type { MetricListItem, Stats } from './generated/api';

/** A signal's name, as GET /api/signals lists them. */
export type Signal = string;
export type Feed = Signal | 'requests';

/** What every answer of GET /api/metrics says of one metric: one metric of one resource instance. */
export type MetricInfo = Omit<MetricListItem, 'pointCount' | 'seriesCount' | 'lastTimeUnixNano'>;

/** What a `changed` notice says of one feed since the last notice. */
export interface FeedChange {
  added: number;
  matched: number;
  evicted: number;
  /** The metrics feed: how many metrics (one metric of one resource instance) appeared or went away. */
  metrics?: number;
}

/** Messages of the live feed that the UI uses, server to browser (docs/live.md). */
export type LiveMessage =
  | { type: 'hello'; version: number; feeds: Feed[]; flushMs: number }
  | { type: 'watching'; views: Feed[]; stats?: boolean }
  | { type: 'stats'; stats: Stats }
  | { type: 'changed'; feeds: Partial<Record<Feed, FeedChange>> }
  | { type: 'cleared' }
  | { type: 'error'; message: string };
