/**
 * An attribute filter as typed (`key=value`, or `key` for "has it") as the server's `attr.<key>`
 * parameter, added to `params`.
 */
export function attrQuery(text: string | null, params: URLSearchParams): void {
  const attr = text?.trim();
  if (!attr) return;
  const eq = attr.indexOf('=');
  if (eq < 0) params.set(`attr.${attr}`, '');
  else params.set(`attr.${attr.slice(0, eq).trim()}`, attr.slice(eq + 1).trim());
}
