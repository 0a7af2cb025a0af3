/**
 * A span's or log record's `flags` in words. The low byte is the W3C trace flags (bit 0: sampled); a span's
 * bits 8 and 9 say whether the sender knew if the parent was remote, and if it was (SpanFlags in trace.proto).
 */
export function flagsText(flags: number, of: 'span' | 'log'): string {
  const words: string[] = [];
  words.push(flags & 0x01 ? 'sampled' : 'not sampled');
  const other = flags & 0xfe;
  if (other) words.push(`trace flags 0x${other.toString(16).padStart(2, '0')}`);
  if (of === 'span') {
    if (flags & 0x100) words.push(flags & 0x200 ? 'parent remote' : 'parent local');
    else if (flags & 0x200) words.push('parent remote (bit 8 unset)');
  }
  const unknown = of === 'span' ? flags & ~0x3ff : flags & ~0xff;
  if (unknown) words.push(`unknown bits 0x${(unknown >>> 0).toString(16)}`);
  return words.join(', ');
}
