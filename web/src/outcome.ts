import type { JournalEntry } from './generated/api';

/** Every journal outcome, as GET /api/requests filters them: an answer was sent, or (reset, hang, abandoned) none was. */
export const OUTCOMES: JournalEntry['outcome'][] = ['accepted', 'partial', 'rejected', 'faulted', 'reset', 'hang', 'abandoned'];

/** Outcomes of a failed request: an exporter is expected to retry after these. */
export const FAULTED: ReadonlySet<JournalEntry['outcome']> = new Set(['faulted', 'reset', 'hang', 'abandoned']);

/** What the client saw of a request that got no answer. */
export function noAnswer(outcome: JournalEntry['outcome']): string {
  if (outcome === 'reset') return 'no answer — connection reset';
  if (outcome === 'abandoned') return 'no answer — the client gave up before it was sent';
  return 'no answer — held until the client gave up';
}
