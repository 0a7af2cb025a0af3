/**
 * Attribute filters as typed, separated by `;` (`key=value`, or `key` for "has it"), as the server's
 * `attr.<key>` parameters, added to `params`: every one must hold (AND).
 */
export function attrQuery(text: string | null, params: URLSearchParams): void {
  for (const part of (text ?? '').split(';')) {
    const attr = part.trim();
    if (!attr) continue;
    const eq = attr.indexOf('=');
    if (eq < 0) params.set(`attr.${attr}`, '');
    else params.set(`attr.${attr.slice(0, eq).trim()}`, attr.slice(eq + 1).trim());
  }
}
