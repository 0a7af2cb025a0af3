/**
 * Bidirectional controls reorder the text after them ("\u202Egnp.exe" shows as "exe.png"): telemetry shown in
 * the UI gets each one as a visible mark, so what is read is what was sent.
 */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The text with every bidirectional control replaced by a visible ⟨U+XXXX⟩ mark. */
export function markBidi(text: string): string {
  return text.replace(BIDI, (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`);
}

/** Whether the text holds any bidirectional control (a view may flag the row). */
export function hasBidi(text: string): boolean {
  BIDI.lastIndex = 0;
  return BIDI.test(text);
}
