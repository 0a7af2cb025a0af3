import { signalByName } from '../otlp/signals.js';
import { metricOf } from '../otlp/metric.js';

/**
 * Puts stored entries back into Export*ServiceRequest form (OTLP/JSON shape), grouped by the resource and
 * scope they arrived with: the inverse of Store.addRequest, for showing and exporting what was received.
 * Profile samples come back in their profiles, with their request's dictionary.
 * @param {import('../otlp/signals.js').SignalName} signalName
 * @param {Iterable<import('./store.js').Entry>} entries
 */
export function rebuildRequest(signalName, entries) {
  const signal = /** @type {import('../otlp/signals.js').Signal} */ (signalByName(signalName));
  /** @type {Map<any, any>} */
  const groups = new Map();
  /** @type {Map<any, any>} */
  const scopes = new Map();
  /** @type {Map<any, any>} */
  const metrics = new Map();
  /** @type {Map<any, any>} the profiles (a sample's context holds its profile) */
  const profiles = new Map();
  /** @type {any} the dictionary the samples' indices point into */
  let dictionary = null;
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
    if (ctx.profile) {
      let profile = profiles.get(ctx);
      if (!profile) {
        const { dictionary: d, ...withoutDictionary } = ctx.profile;
        if (dictionary && d !== dictionary) throw new TypeError('rebuildRequest takes the samples of one request: their indices are into its dictionary');
        dictionary = d;
        profile = { ...withoutDictionary, samples: [] };
        profiles.set(ctx, profile);
        scope[signal.itemField].push(profile);
      }
      profile.samples.push(item);
      continue;
    }
    if (!ctx.metric) {
      scope[signal.itemField].push(item);
      continue;
    }
    let metric = metrics.get(ctx);
    if (!metric) {
      metric = metricOf(ctx.metric, []);
      metrics.set(ctx, metric);
      scope.metrics.push(metric);
    }
    metric[ctx.metric.type].dataPoints.push(item);
  }
  return signal.dictionary ? { [signal.rootField]: root, dictionary: dictionary ?? { stringTable: [] } } : { [signal.rootField]: root };
}
