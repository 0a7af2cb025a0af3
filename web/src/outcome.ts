import type { JournalEntry } from './types';

/** Every journal outcome, as GET /api/requests filters them: an answer was sent, or (reset, hang) none was. */
export const OUTCOMES: JournalEntry['outcome'][] = ['accepted', 'partial', 'rejected', 'faulted', 'reset', 'hang'];

/** Outcomes of a fault rule's failure: an exporter is expected to retry after these. */
export const FAULTED: ReadonlySet<JournalEntry['outcome']> = new Set(['faulted', 'reset', 'hang']);

/** What the client saw of a request that got no answer. */
export function noAnswer(outcome: JournalEntry['outcome']): string {
  return outcome === 'reset' ? 'no answer — connection reset' : 'no answer — held until the client gave up';
}
