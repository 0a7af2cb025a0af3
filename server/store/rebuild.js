import { signalByName } from '../otlp/signals.js';
import { regroupOf } from '../otlp/items.js';

/**
 * Puts stored entries back into Export*ServiceRequest form (OTLP/JSON shape), grouped by the resource and
 * scope they arrived with: the inverse of Store.addRequest, for showing and exporting what was received. Items
 * stored from inside another (a metric's data points) go back into it, as their item model says (items.js
 * `regroupOf`), with what else their request held.
 * @param {import('../otlp/signals.js').SignalName} signalName
 * @param {Iterable<import('./store.js').Entry>} entries
 */
export function rebuildRequest(signalName, entries) {
  const signal = /** @type {import('../otlp/signals.js').Signal} */ (signalByName(signalName));
  const regroup = regroupOf(signal);
  /** @type {Map<any, any>} */
  const groups = new Map();
  /** @type {Map<any, any>} */
  const scopes = new Map();
  /** @type {Map<any, any>} the items the entries' items were stored from, by entry context */
  const parents = new Map();
  /** @type {any[]} */
  const root = [];
  for (const { item, ctx } of entries) {
    let group = groups.get(ctx.resource);
    if (!group) {
      group = { resource: ctx.resource, [signal.scopeField]: [], schemaUrl: ctx.resourceSchemaUrl };
      groups.set(ctx.resource, group);
      root.push(group);
    }
    const scopeKey = `${ctx.requestId}\u0000${ctx.scope.name}\u0000${ctx.scope.version}\u0000${ctx.scopeSchemaUrl}`;
    let scope = scopes.get(group)?.get(scopeKey);
    if (!scope) {
      scope = { scope: ctx.scope, [signal.itemField]: [], schemaUrl: ctx.scopeSchemaUrl };
      if (!scopes.has(group)) scopes.set(group, new Map());
      scopes.get(group).set(scopeKey, scope);
      group[signal.scopeField].push(scope);
    }
    regroup.into(scope[signal.itemField], ctx, item, parents);
  }
  return { [signal.rootField]: root, ...regroup.rest?.(parents) };
}
